import { randomUUID } from 'crypto';
import { Clock } from '@shortlink/core';
import { VISITOR_WINDOW_MS, VisitorLimit, VisitorWindowStore } from '@shortlink/redirect-rules';

/** A clock the test moves by hand, for the store and every instance alike. */
export class StepClock implements Clock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
}

/** 10 s into a minute. */
const T0 = 1_800_000_000_000 + 10_000;
const W = Math.floor(T0 / VISITOR_WINDOW_MS);

/**
 * One behaviour for the per-link visitor windows, in-process and Redis Cluster: the store's own
 * contract, and the bound the limit holds over several instances sharing it (docs/design.md,
 * "Link options"), driven by explicit steps of a clock the test moves.
 */
export function describeVisitorWindowsContract(backend: string, open: (clock: Clock) => Promise<{ store: VisitorWindowStore; close(): Promise<void> }>) {
  describe(`visitor windows contract: ${backend}`, () => {
    const clock = new StepClock(T0);
    let store: VisitorWindowStore;
    let close: () => Promise<void>;
    const link = () => `contract-${randomUUID()}`;
    beforeAll(async () => ({ store, close } = await open(clock)));
    afterAll(() => close());
    beforeEach(() => (clock.t = T0));

    it('adds each count to its own window and answers the totals in order; a delta of 0 only reads', async () => {
      const [l1, l2] = [link(), link()];
      expect(await store.add([{ linkId: l1, address: '203.0.113.7', window: W, delta: 3 }], VISITOR_WINDOW_MS)).toEqual([3]);
      const totals = await store.add(
        [
          { linkId: l1, address: '203.0.113.7', window: W, delta: 2 },
          { linkId: l1, address: '203.0.113.8', window: W, delta: 1 },
          { linkId: l2, address: '203.0.113.7', window: W, delta: 4 },
          { linkId: l1, address: '203.0.113.7', window: W + 1, delta: 1 },
          { linkId: l1, address: '203.0.113.7', window: W, delta: 0 },
        ],
        VISITOR_WINDOW_MS,
      );
      expect(totals).toEqual([5, 1, 4, 1, 5]);
      expect(await store.add([{ linkId: l1, address: '2001:db8::1', window: W, delta: 0 }], VISITOR_WINDOW_MS)).toEqual([0]);
    });

    it('sums counts added at once by many instances exactly', async () => {
      const l = link();
      await Promise.all(Array.from({ length: 40 }, () => store.add([{ linkId: l, address: '2001:db8::2', window: W, delta: 2 }], VISITOR_WINDOW_MS)));
      expect(await store.add([{ linkId: l, address: '2001:db8::2', window: W, delta: 0 }], VISITOR_WINDOW_MS)).toEqual([80]);
    });

    it('neither counts nor reads a window that is over', async () => {
      const l = link();
      await store.add([{ linkId: l, address: '203.0.113.9', window: W, delta: 5 }], VISITOR_WINDOW_MS);
      clock.t = T0 + VISITOR_WINDOW_MS;
      expect(await store.add([{ linkId: l, address: '203.0.113.9', window: W, delta: 1 }], VISITOR_WINDOW_MS)).toEqual([0]);
      expect(await store.add([{ linkId: l, address: '203.0.113.9', window: W + 1, delta: 1 }], VISITOR_WINDOW_MS)).toEqual([1]);
    });

    describe('the limit over several instances sharing the store', () => {
      /**
       * `instances` redirect instances, each sent one request of one visitor every `everyMs` (their
       * phases spread), each merging every `syncMs` (phases spread too), for `forMs` of the clock.
       * Returns the redirects allowed in all.
       */
      const run = async (o: { instances: number; limit: number; everyMs: number; syncMs: number; forMs: number; shared: boolean }) => {
        const l = link();
        const limits = Array.from({ length: o.instances }, () => new VisitorLimit(o.shared ? store : null, { syncIntervalMs: o.syncMs }, clock));
        let allowed = 0;
        for (let t = 0; t < o.forMs; t++) {
          clock.t = T0 + t;
          for (let i = 0; i < o.instances; i++) {
            const phase = Math.floor((i * o.syncMs) / o.instances);
            if ((t + phase) % o.syncMs === 0) await limits[i].merge();
            if ((t + Math.floor((i * o.everyMs) / o.instances)) % o.everyMs === 0 && limits[i].hit(l, '198.51.100.1', o.limit, true).allowed) allowed++;
          }
        }
        return allowed;
      };

      /** limit + each instance's requests within one merge interval: what an instance may give after another's counts made the limit, before its next merge tells it. */
      const boundOf = (o: { instances: number; limit: number; everyMs: number; syncMs: number }) =>
        Math.min(o.limit + o.instances * Math.ceil(o.syncMs / o.everyMs), o.instances * o.limit);

      it('holds a visitor to limit + instances × its requests per instance in one merge interval', async () => {
        // 3 instances, one request every 50 ms each, merging every 100 ms: 30 + 3 × 2 = 36.
        const o = { instances: 3, limit: 30, everyMs: 50, syncMs: 100, forMs: 3000, shared: true };
        const allowed = await run(o);
        expect(allowed).toBeGreaterThanOrEqual(o.limit);
        expect(allowed).toBeLessThanOrEqual(boundOf(o));
        // Without the shared windows each instance would give the whole limit: the bound above is no accident of the load.
        expect(await run({ ...o, shared: false })).toBe(o.instances * o.limit);
      });

      it('holds a visitor far faster than the merges to instances × limit at most', async () => {
        // One request every 2 ms per instance: 50 + 2 × 50 is above 2 × 50, so the cap binds.
        const o = { instances: 2, limit: 50, everyMs: 2, syncMs: 100, forMs: 1000, shared: true };
        const allowed = await run(o);
        expect(allowed).toBeGreaterThanOrEqual(o.limit);
        expect(allowed).toBeLessThanOrEqual(boundOf(o));
      });

      it('lets a visitor slower than the merges pass the limit by at most one request per instance', async () => {
        // One request every 250 ms per instance, merges every 100 ms: an instance's view misses at most what the others gave since its last merge.
        const o = { instances: 2, limit: 10, everyMs: 250, syncMs: 100, forMs: 5000, shared: true };
        const allowed = await run(o);
        expect(allowed).toBeGreaterThanOrEqual(o.limit);
        expect(allowed).toBeLessThanOrEqual(boundOf(o));
      });
    });
  });
}
