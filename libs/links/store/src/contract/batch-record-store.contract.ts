import { randomUUID } from 'crypto';
import { BatchClaim, BatchRecordStore } from '@shortlink/link-batch';

const second = (offsetMs = 0) => new Date(Math.floor(Date.now() / 1000) * 1000 + offsetMs);
const aClaim = (overrides: Partial<BatchClaim> = {}): BatchClaim => {
  const now = overrides.now ?? second();
  return {
    tenantId: randomUUID(),
    key: `key-${randomUUID()}`,
    owner: randomUUID(),
    now,
    leaseUntil: new Date(now.getTime() + 10_000),
    expiresAt: new Date(now.getTime() + 86_400_000),
    chunkRows: 1000,
    ...overrides,
  };
};
const aChunk = (seq: number) => ({ seq, hash: 'a'.repeat(64), firstId: '9007199254740993', idCount: 1016, granted: 990, createdAt: second() });

/** One behaviour, every backend: SQLite in unit runs, the MySQL meta database in integration runs. */
export function describeBatchRecordStoreContract(backend: string, open: () => Promise<{ batches: BatchRecordStore; close(): Promise<void> }>) {
  describe(`batch record store contract: ${backend}`, () => {
    let store: BatchRecordStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ batches: store, close } = await open());
    });
    afterAll(() => close());

    it('creates a record once; another claim waits while the lease runs, then takes it over; the holder renews and releases', async () => {
      const first = aClaim({ chunkRows: 500 });
      expect(await store.claim(first)).toEqual({ outcome: 'new', record: { chunkRows: 500, complete: false, leaseUntil: first.leaseUntil } });
      const other = { ...first, owner: randomUUID(), chunkRows: 1000 };
      expect(await store.claim(other)).toEqual({ outcome: 'busy', record: { chunkRows: 500, complete: false, leaseUntil: first.leaseUntil } });
      // the holder may claim again (its own retry), and renew
      expect((await store.claim(first)).outcome).toBe('resumed');
      const later = new Date(first.leaseUntil.getTime() + 5000);
      expect(await store.renew(first, first.owner, later)).toBe(true);
      expect(await store.renew(first, other.owner, later)).toBe(false);
      expect((await store.claim({ ...other, now: first.leaseUntil })).outcome).toBe('busy');
      // past the lease another attempt resumes, keeping the record's chunk size
      const takeover = await store.claim({ ...other, now: later, leaseUntil: new Date(later.getTime() + 10_000) });
      expect(takeover).toEqual({ outcome: 'resumed', record: { chunkRows: 500, complete: false, leaseUntil: new Date(later.getTime() + 10_000) } });
      expect(await store.renew(first, first.owner, later)).toBe(false);
      // a released lease can be taken at once
      await store.release(other, other.owner);
      expect((await store.claim({ ...first, owner: randomUUID() })).outcome).toBe('resumed');
    });

    it('keeps chunks with their ids, quota and answer; a second record of a chunk leaves the first', async () => {
      const claim = aClaim();
      await store.claim(claim);
      expect(await store.findChunk(claim, 0)).toBeNull();
      await store.addChunk(claim, aChunk(0));
      await store.addChunk(claim, { ...aChunk(0), hash: 'b'.repeat(64), granted: 1 });
      expect(await store.findChunk(claim, 0)).toEqual({ ...aChunk(0), results: null });
      const results = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
      await store.saveResults(claim, 0, results);
      expect((await store.findChunk(claim, 0))?.results?.equals(results)).toBe(true);
      expect(await store.findChunk({ ...claim, tenantId: randomUUID() }, 0)).toBeNull();
      expect(await store.findChunk(claim, 1)).toBeNull();
      // An answer for a chunk never recorded is not kept.
      await store.saveResults(claim, 7, results);
      expect(await store.findChunk(claim, 7)).toBeNull();
    });

    it('finishes a batch: later claims replay it and hold no lease', async () => {
      const claim = aClaim();
      await store.claim(claim);
      await store.finish(claim, claim.owner, 1234);
      expect(await store.claim({ ...claim, owner: randomUUID() })).toEqual({
        outcome: 'complete',
        record: { chunkRows: 1000, complete: true, leaseUntil: null },
      });
      expect(await store.renew(claim, claim.owner, second(60_000))).toBe(false);
    });

    it('forgets expired records with their chunks, and starts a new record over an expired one', async () => {
      const now = second();
      const old = aClaim({ now: new Date(now.getTime() - 90_000_000), expiresAt: new Date(now.getTime() - 1000) });
      await store.claim(old);
      await store.addChunk(old, aChunk(0));
      const fresh = aClaim();
      await store.claim(fresh);
      expect(await store.purgeExpired(now, 10_000)).toBeGreaterThanOrEqual(1);
      expect(await store.findChunk(old, 0)).toBeNull();
      expect((await store.claim(fresh)).outcome).toBe('resumed');

      const stale = aClaim({ now: new Date(now.getTime() - 90_000_000), expiresAt: new Date(now.getTime() - 1000) });
      await store.claim(stale);
      await store.addChunk(stale, aChunk(0));
      await store.finish(stale, stale.owner, 1);
      expect((await store.claim({ ...stale, now, leaseUntil: second(10_000), expiresAt: second(86_400_000) })).outcome).toBe('new');
      expect(await store.findChunk(stale, 0)).toBeNull();
    });

    it('forgets at most the given number of expired records at a time', async () => {
      const now = second();
      const expired = () => aClaim({ now: new Date(now.getTime() - 90_000_000), expiresAt: new Date(now.getTime() - 1000) });
      const claims = [expired(), expired(), expired()];
      for (const c of claims) await store.claim(c);
      expect(await store.purgeExpired(now, 2)).toBe(2);
      expect(await store.purgeExpired(now, 10_000)).toBeGreaterThanOrEqual(1);
      expect(await store.purgeExpired(now, 10_000)).toBe(0);
    });

    it('gives a key to one of many concurrent first claims', async () => {
      for (let round = 0; round < 10; round++) {
        const claim = aClaim();
        const outcomes = await Promise.all(Array.from({ length: 12 }, () => store.claim({ ...claim, owner: randomUUID() })));
        expect(outcomes.map((o) => o.outcome).sort()).toEqual([...Array(11).fill('busy'), 'new']);
      }
    });
  });
}
