import { randomUUID } from 'crypto';
import { DuplicateLinkError } from '@shortlink/links-domain';
import { MovableShardStore, MoveProgress, RingStore, RingVersion } from '@shortlink/sharding-domain';
import { aLink } from './link-store.contract';

export interface MoveStoresFixture {
  /** Two empty shards of the backend. */
  a: MovableShardStore;
  b: MovableShardStore;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The move operations of a shard, on every backend (docs/design.md, "Online resharding"). */
export function describeShardMoveContract(backend: string, open: () => Promise<MoveStoresFixture>) {
  describe(`shard move operations: ${backend}`, () => {
    let f: MoveStoresFixture;
    beforeAll(async () => {
      f = await open();
    });
    afterAll(async () => {
      await f?.close();
    });

    it('copies rows column by column, tags included: the copy reads back equal, with the same checksum', async () => {
      const rich = aLink({
        title: 'Früh',
        tags: ['promo', 'q1'],
        maxClicks: 5,
        utm: { source: 'x' },
        forwardQuery: false,
        expiresAt: new Date(Math.floor(Date.now() / 1000) * 1000 + 86_400_000),
        version: 4,
        moderation: 'flagged',
        moderationReason: 'homograph: x',
        moderationSource: 'url-policy',
        health: {
          state: 'broken',
          since: new Date(Math.floor(Date.now() / 1000) * 1000),
          brokenTargets: ['https://example.com/landing?utm=1'],
          lastStatus: 410,
          lastError: null,
          checkedAt: new Date(Math.floor(Date.now() / 1000) * 1000),
        },
        redirectType: 301,
      });
      const plain = aLink();
      await f.a.insertMany([rich, plain]);
      const rows = await f.a.rowsByIds([rich.id, plain.id]);
      expect(rows.map((r) => [r.id, r.code, r.version])).toEqual([
        [rich.id, rich.code, 4],
        [plain.id, plain.code, 1],
      ]);
      expect(await f.b.upsertRows(rows)).toEqual({ written: 2, skipped: 0, conflicts: 0 });
      expect(await f.b.findByCode(rich)).toEqual(rich);
      expect((await f.b.rowsByIds([rich.id, plain.id])).map((r) => r.checksum)).toEqual(rows.map((r) => r.checksum));
      expect((await f.b.listByTenant({ tenantId: rich.tenantId, after: null, limit: 5, tag: 'q1' })).map((l) => l.id)).toEqual([rich.id]);
      // Scanned in id order from a cursor.
      const scanned = await f.a.scanRows((BigInt(rich.id) - 1n).toString(), 10);
      expect(scanned.slice(0, 2).map((r) => r.id)).toEqual([rich.id, plain.id]);
    });

    it('writes a copy only over an older version of the same link; reports a foreign link under the same code', async () => {
      const link = aLink({ tags: ['old'] });
      await f.b.insert({ ...link, version: 3 });
      await f.a.insert({ ...link, version: 2, targetUrl: 'https://example.com/older' });
      const [older] = await f.a.rowsByIds([link.id]);
      expect(await f.b.upsertRows([older])).toEqual({ written: 0, skipped: 1, conflicts: 0 });
      const newer = { ...link, version: 5, targetUrl: 'https://example.com/newer', tags: ['new'] };
      expect(await f.b.upsertLink(newer)).toBe(true);
      expect(await f.b.findByCode(link)).toEqual(newer);
      expect(await f.b.upsertLink({ ...newer, targetUrl: 'https://example.com/same-version' })).toBe(false);
      const foreign = aLink({ code: link.code });
      await f.a.deleteRows([link.id]);
      await f.a.insert(foreign);
      expect(await f.b.upsertRows(await f.a.rowsByIds([foreign.id]))).toEqual({ written: 0, skipped: 0, conflicts: 1 });
      expect((await f.b.findByCode(link))!.id).toBe(link.id);
    });

    it('removes a copy by id, keeps it out with a tombstone until tombstones are cleared, and retires its code', async () => {
      const link = aLink({ tags: ['gone'] });
      await f.a.insert(link);
      const [row] = await f.a.rowsByIds([link.id]);
      await f.b.upsertRows([row]);
      const until = new Date(Math.floor(Date.now() / 1000) * 1000 + 90 * 86_400_000);
      await f.b.removeCopy(link, link.id, until);
      expect(await f.b.findByCode(link)).toBeNull();
      expect((await f.b.retiredUntil(link, new Date()))?.getTime()).toBe(until.getTime());
      expect(await f.b.upsertRows([row])).toEqual({ written: 0, skipped: 1, conflicts: 0 });
      expect(await f.b.upsertLink(link)).toBe(false);
      // Never copied yet: the tombstone alone keeps a late copy out.
      const late = aLink();
      await f.b.removeCopy(late, late.id, until);
      expect(await f.b.upsertLink(late)).toBe(false);
      await f.b.clearTombstones();
      expect(await f.b.upsertRows([row])).toEqual({ written: 1, skipped: 0, conflicts: 0 });
      expect(await f.b.listByTenant({ tenantId: link.tenantId, after: null, limit: 5, tag: 'gone' })).toHaveLength(1);
    });

    it("reads a row's click count beside it, outside the copy and its checksum, and carries it to the copy once until the marks are cleared", async () => {
      const link = aLink({ maxClicks: 100 });
      await f.a.insert(link);
      expect(await f.a.addClicks(link, link.id, 40)).toBe(40);
      const [row] = await f.a.rowsByIds([link.id]);
      expect(row.clicks).toBe(40);
      expect((await f.a.scanRows((BigInt(link.id) - 1n).toString(), 1))[0]).toMatchObject({ id: link.id, clicks: 40 });
      await f.b.upsertRows([row]);
      const [copy] = await f.b.rowsByIds([link.id]);
      expect(copy).toMatchObject({ clicks: 0, checksum: row.checksum });
      // Counted on the new owner since the switch, then the old owner's final count carried over, once.
      expect(await f.b.addClicks(link, link.id, 3)).toBe(3);
      expect(await f.b.carryClicks([{ id: link.id, clicks: 40 }])).toBe(1);
      expect(await f.b.carryClicks([{ id: link.id, clicks: 40 }])).toBe(0); // a resumed run
      expect(await f.b.clickCount(link, link.id)).toBe(43);
      expect(await f.b.carryClicks([])).toBe(0);
      await f.b.clearTombstones();
      expect(await f.b.carryClicks([{ id: link.id, clicks: 1 }])).toBe(1); // the marks went with the move's tombstones
      expect(await f.b.clickCount(link, link.id)).toBe(44);
    });

    it('journals the writes of moving links with the write itself (all or nothing), pages the journal in id order, empties it', async () => {
      await f.a.clearJournal();
      const until = new Date(Math.floor(Date.now() / 1000) * 1000 + 86_400_000);
      const [x, y, z, plain] = [aLink({ tags: ['j'] }), aLink(), aLink(), aLink()];
      const entry = (l: { id: string; domain: string; code: string }) => ({ id: l.id, domain: l.domain, code: l.code });
      const journaled = async () => (await f.a.journalPage(null, 100)).map((e) => e.id);
      // Plain writes (no move) leave nothing.
      await f.a.insert(plain);
      await f.a.replace({ ...plain, version: 2, targetUrl: 'https://example.com/plain' }, 1);
      expect(await journaled()).toEqual([]);

      await f.a.insertJournaled([y, x]);
      expect(await f.a.findByCode(x)).toEqual(x);
      // A refused batch writes neither its rows nor its entries.
      await expect(f.a.insertJournaled([z, { ...aLink(), code: x.code }])).rejects.toThrow(DuplicateLinkError);
      expect(await f.a.findByCode(z)).toBeNull();
      const sorted = [x, y].map((l) => l.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
      expect(await journaled()).toEqual(sorted);
      expect(await f.a.journalPage(null, 100)).toEqual(expect.arrayContaining([entry(x), entry(y)]));
      expect((await f.a.journalPage(sorted[0], 100)).map((e) => e.id)).toEqual([sorted[1]]);

      // A refused edit or delete (another version) enters nothing; done ones enter their link.
      expect(await f.a.replaceJournaled({ ...plain, version: 9 }, 1)).toBe(false);
      expect(await f.a.removeJournaled(plain, 1, until)).toBe(false);
      expect(await journaled()).toEqual(sorted);
      expect(await f.a.replaceJournaled({ ...plain, version: 3, tags: ['k'] }, 2)).toBe(true);
      expect((await f.a.findByCode(plain))?.tags).toEqual(['k']);
      expect(await f.a.removeJournaled(y, 1, until)).toBe(true);
      expect(await f.a.findByCode(y)).toBeNull();
      expect((await f.a.retiredUntil(y, new Date()))?.getTime()).toBe(until.getTime());
      expect((await journaled()).sort()).toEqual([x.id, y.id, plain.id].sort());
      // Entered by the tool; an id entered twice is there once.
      await f.a.journal([entry(z), entry(x)]);
      expect(await f.a.journalPage(null, 100)).toHaveLength(4);
      expect(await f.a.journalPage(null, 2)).toHaveLength(2);

      await f.a.clearJournal();
      expect(await journaled()).toEqual([]);
      await f.a.journal([entry(z)]);
      await f.a.clearTombstones(); // the end of a move empties it too
      expect(await journaled()).toEqual([]);
    });

    it('deletes rows with their tags by id', async () => {
      const links = [aLink({ tags: ['t'] }), aLink({ tags: ['t'] })];
      const tenantId = links[0].tenantId;
      await f.a.insertMany(links.map((l) => ({ ...l, tenantId })));
      expect(await f.a.deleteRows([links[0].id, links[1].id, '999999999999'])).toBe(2);
      expect(await f.a.rowsByIds(links.map((l) => l.id))).toEqual([]);
      expect(await f.a.listByTenant({ tenantId, after: null, limit: 5, tag: 't' })).toEqual([]);
      expect(await f.a.deleteRows([])).toBe(0);
    });

    it('pages retired codes in (domain, code) order, keeps the later end of quarantine, deletes them', async () => {
      const domain = `r${randomUUID().slice(0, 8)}.example`;
      const t = (days: number) => new Date(Math.floor(Date.now() / 1000) * 1000 + days * 86_400_000);
      await f.a.upsertRetired([
        { domain, code: 'b', retiredUntil: t(5) },
        { domain, code: 'a', retiredUntil: t(5) },
        { domain, code: 'C', retiredUntil: t(5) },
      ]);
      await f.a.upsertRetired([
        { domain, code: 'a', retiredUntil: t(9) },
        { domain, code: 'b', retiredUntil: t(1) },
      ]);
      const page = async (after: { domain: string; code: string } | null) => (await f.a.scanRetired(after, 100)).filter((c) => c.domain === domain);
      const all = await page({ domain, code: '' });
      expect(all.map((c) => [c.code, c.retiredUntil.getTime()])).toEqual([
        ['C', t(5).getTime()],
        ['a', t(9).getTime()],
        ['b', t(5).getTime()],
      ]);
      expect((await page({ domain, code: 'C' })).map((c) => c.code)).toEqual(['a', 'b']);
      await f.a.deleteRetired([
        { domain, code: 'a' },
        { domain, code: 'C' },
      ]);
      expect((await page({ domain, code: '' })).map((c) => c.code)).toEqual(['b']);
    });
  });
}

export interface RingStoreFixture {
  /** A ring store on an empty meta database. */
  ring: RingStore;
  close(): Promise<void>;
}

const FOUR = { strategy: 'ring' as const, virtualNodes: 150, shards: ['s0', 's1', 's2', 's3'].map((name) => ({ name })) };

/** The versioned ring, the watchers' reports and the move record, on every backend. */
export function describeRingStoreContract(backend: string, open: () => Promise<RingStoreFixture>) {
  describe(`ring store contract: ${backend}`, () => {
    let f: RingStoreFixture;
    beforeAll(async () => {
      f = await open();
    });
    afterAll(async () => {
      await f?.close();
    });

    it('publishes versions one after the other: compare-and-set on the newest version', async () => {
      expect(await f.ring.current()).toBeNull();
      const v1: RingVersion = { version: 1, spec: FOUR, move: null };
      expect(await f.ring.publish(v1, null)).toBe(true);
      expect(await f.ring.publish(v1, null)).toBe(false);
      const v2: RingVersion = {
        version: 2,
        spec: FOUR,
        move: { id: 'm1', phase: 'copying', to: { ...FOUR, shards: [...FOUR.shards, { name: 's4', weight: 2 }] } },
      };
      expect(await f.ring.publish({ ...v2, version: 3 }, 1)).toBe(false);
      expect(await f.ring.publish(v2, 1)).toBe(true);
      expect(await f.ring.publish({ ...v2, version: 2 }, 1)).toBe(false); // someone else came first
      expect(await f.ring.current()).toEqual(v2);
      expect((await f.ring.history(5)).map((v) => v.version)).toEqual([2, 1]);
    });

    it('lists the instances that reported recently, with their version and age, and forgets one that says goodbye', async () => {
      await f.ring.heartbeat('app-b', 'generation', 1);
      await f.ring.heartbeat('app-a', 'redirect', 1);
      await f.ring.heartbeat('app-a', 'redirect', 2);
      const seen = await f.ring.watchers(60_000);
      // In instance order, whichever reported first.
      expect(seen.map((w) => [w.instanceId, w.app, w.version])).toEqual([
        ['app-a', 'redirect', 2],
        ['app-b', 'generation', 1],
      ]);
      expect(seen.every((w) => w.ageMs >= 0 && w.ageMs < 10_000)).toBe(true);
      await sleep(60);
      expect(await f.ring.watchers(30)).toEqual([]);
      await f.ring.forget('app-b');
      expect((await f.ring.watchers(60_000)).map((w) => w.instanceId)).toEqual(['app-a']);
    });

    it('keeps the move record; one owner at a time, taken over once its claim is stale', async () => {
      expect(await f.ring.latestMove()).toBeNull();
      const progress = { id: randomUUID(), description: 'x', step: 'copying', copied: 5, copyCursors: { s0: '42' } } as unknown as MoveProgress;
      await f.ring.saveMove(progress, 'tool-1', false);
      const saved = (await f.ring.latestMove())!;
      expect(saved).toMatchObject({ id: progress.id, owner: 'tool-1', finished: false, progress });
      expect(await f.ring.claimMove(progress.id, 'tool-1', 60_000)).toBe(true);
      expect(await f.ring.claimMove(progress.id, 'tool-2', 60_000)).toBe(false);
      await sleep(60);
      expect(await f.ring.claimMove(progress.id, 'tool-2', 30)).toBe(true);
      expect((await f.ring.latestMove())!.owner).toBe('tool-2');
      await f.ring.saveMove({ ...progress, step: 'done' } as MoveProgress, 'tool-2', true);
      const next = { ...progress, id: randomUUID() };
      await f.ring.saveMove(next, 'tool-3', false);
      expect((await f.ring.latestMove())!.id).toBe(next.id); // the unfinished one first
      await f.ring.saveMove(next, 'tool-3', true);
      expect(await f.ring.claimMove(randomUUID(), 'tool-3', 0)).toBe(false);
    });
  });
}
