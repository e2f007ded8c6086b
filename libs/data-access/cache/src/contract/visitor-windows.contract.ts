import { randomUUID } from 'crypto';
import { VisitorWindowStore } from '@shortlink/links-domain';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One behaviour for the per-link visitor windows: in-process and Redis Cluster. */
export function describeVisitorWindowsContract(backend: string, open: () => Promise<{ store: VisitorWindowStore; close(): Promise<void> }>) {
  describe(`visitor windows contract: ${backend}`, () => {
    let store: VisitorWindowStore;
    let close: () => Promise<void>;
    const link = () => `contract-${randomUUID()}`;
    /** Waits for the next window when fewer than `marginMs` are left of this one, so that a test's hits fall in one window. */
    const inOneWindow = async (windowMs: number, marginMs: number) => {
      const { waitMs } = await store.hit(link(), '192.0.2.1', 1, windowMs, false);
      if (waitMs < marginMs) await sleep(waitMs + 5);
    };
    beforeAll(async () => ({ store, close } = await open()));
    afterAll(() => close());

    it('allows up to the limit within the window, then refuses without counting, with the wait until the window ends', async () => {
      await inOneWindow(60_000, 2000);
      const l = link();
      const hits = [];
      for (let i = 0; i < 5; i++) hits.push(await store.hit(l, '203.0.113.7', 3, 60_000, true));
      expect(hits.map((h) => [h.allowed, h.count])).toEqual([
        [true, 1],
        [true, 2],
        [true, 3],
        [false, 3],
        [false, 3],
      ]);
      expect(hits[4].waitMs).toBeGreaterThan(0);
      expect(hits[4].waitMs).toBeLessThanOrEqual(60_000);
      expect(hits[4].waitMs).toBeLessThanOrEqual(hits[0].waitMs);
    });

    it('only looks when the hit does not count (a HEAD): allowed below the limit, refused at it, the count unchanged', async () => {
      await inOneWindow(60_000, 2000);
      const l = link();
      expect(await store.hit(l, '203.0.113.8', 2, 60_000, false)).toMatchObject({ allowed: true, count: 0 });
      await store.hit(l, '203.0.113.8', 2, 60_000, true);
      expect(await store.hit(l, '203.0.113.8', 2, 60_000, false)).toMatchObject({ allowed: true, count: 1 });
      await store.hit(l, '203.0.113.8', 2, 60_000, true);
      expect(await store.hit(l, '203.0.113.8', 2, 60_000, false)).toMatchObject({ allowed: false, count: 2 });
    });

    it('gives exactly the limit to concurrent callers', async () => {
      await inOneWindow(60_000, 2000);
      const l = link();
      const hits = await Promise.all(Array.from({ length: 50 }, () => store.hit(l, '2001:db8::1', 20, 60_000, true)));
      expect(hits.filter((h) => h.allowed)).toHaveLength(20);
      expect(Math.max(...hits.map((h) => h.count))).toBe(20);
    });

    it('keeps links and addresses apart', async () => {
      await inOneWindow(60_000, 2000);
      const l = link();
      expect((await store.hit(l, '203.0.113.9', 1, 60_000, true)).allowed).toBe(true);
      expect((await store.hit(l, '203.0.113.9', 1, 60_000, true)).allowed).toBe(false);
      expect((await store.hit(l, '203.0.113.10', 1, 60_000, true)).allowed).toBe(true);
      expect((await store.hit(link(), '203.0.113.9', 1, 60_000, true)).allowed).toBe(true);
    });

    it('starts afresh when the window ends', async () => {
      const l = link();
      const windowMs = 400;
      await inOneWindow(windowMs, 300);
      expect((await store.hit(l, '203.0.113.11', 1, windowMs, true)).allowed).toBe(true);
      const refused = await store.hit(l, '203.0.113.11', 1, windowMs, true);
      expect(refused.allowed).toBe(false);
      await sleep(refused.waitMs + 30);
      expect(await store.hit(l, '203.0.113.11', 1, windowMs, true)).toMatchObject({ allowed: true, count: 1 });
    });
  });
}
