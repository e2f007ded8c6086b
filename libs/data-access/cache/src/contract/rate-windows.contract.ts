import { randomUUID } from 'crypto';
import { RateWindowStore } from '@shortlink/tenants-domain';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One behaviour for the plan windows: in-process and Redis Cluster. */
export function describeRateWindowsContract(backend: string, open: () => Promise<{ store: RateWindowStore; close(): Promise<void> }>) {
  describe(`rate windows contract: ${backend}`, () => {
    let store: RateWindowStore;
    let close: () => Promise<void>;
    const key = () => `contract:${randomUUID()}`;
    beforeAll(async () => ({ store, close } = await open()));
    afterAll(() => close());

    it('allows up to the limit within the window, then refuses with the wait until room', async () => {
      const k = key();
      const hits = [];
      for (let i = 0; i < 6; i++) hits.push(await store.hit(k, 5, 60_000, 1));
      expect(hits.map((h) => [h.allowed, h.used])).toEqual([
        [true, 1],
        [true, 2],
        [true, 3],
        [true, 4],
        [true, 5],
        [false, 5],
      ]);
      expect(hits[5].waitMs).toBeGreaterThan(58_000);
      expect(hits[5].waitMs).toBeLessThanOrEqual(60_000);
    });

    it('counts a cost at once and refuses what does not fit whole; a cost above the limit never fits', async () => {
      const k = key();
      expect(await store.hit(k, 5, 60_000, 3)).toMatchObject({ allowed: true, used: 3 });
      expect(await store.hit(k, 5, 60_000, 3)).toMatchObject({ allowed: false, used: 3 });
      expect(await store.hit(k, 5, 60_000, 2)).toMatchObject({ allowed: true, used: 5 });
      expect(await store.hit(key(), 5, 60_000, 6)).toEqual({ allowed: false, used: 0, waitMs: 60_000 });
    });

    it('gives exactly the limit to concurrent callers', async () => {
      const k = key();
      const hits = await Promise.all(Array.from({ length: 50 }, () => store.hit(k, 20, 60_000, 1)));
      expect(hits.filter((h) => h.allowed)).toHaveLength(20);
      expect(Math.max(...hits.map((h) => h.used))).toBe(20);
    });

    it('lets requests through again once their bucket has left the window, and keeps keys apart', async () => {
      const k = key();
      const windowMs = 1200; // 20 ms buckets
      expect((await store.hit(k, 2, windowMs, 1)).allowed).toBe(true);
      expect((await store.hit(k, 2, windowMs, 1)).allowed).toBe(true);
      const refused = await store.hit(k, 2, windowMs, 1);
      expect(refused.allowed).toBe(false);
      expect((await store.hit(key(), 2, windowMs, 1)).allowed).toBe(true);
      await sleep(refused.waitMs + 40);
      expect(await store.hit(k, 2, windowMs, 1)).toMatchObject({ allowed: true });
    });
  });
}
