import { randomUUID } from 'crypto';
import { ClickLeaseCall, ClickLeaseStore } from '@shortlink/read-path';

/** What the store needs from a test: the store, a way to let time pass (its own clock, or real time), and close. */
export interface ClickLeasesUnderTest {
  store: ClickLeaseStore;
  /** Lets `ms` pass on the store's clock. */
  advance(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** One behaviour for the counters of maxClicks (docs/design.md, "Max clicks"): in-process and Redis Cluster. */
export function describeClickLeasesContract(backend: string, open: () => Promise<ClickLeasesUnderTest>) {
  describe(`click leases contract: ${backend}`, () => {
    let t: ClickLeasesUnderTest;
    let store: ClickLeaseStore;
    beforeAll(async () => {
      t = await open();
      store = t.store;
    });
    afterAll(() => t.close());
    const link = () => `contract-${randomUUID()}`;
    /** A call that only takes `use` clicks, with the defaults of the rest. */
    const call = (over: Partial<ClickLeaseCall>): ClickLeaseCall => ({
      holder: 'a',
      limit: 100,
      use: 0,
      given: 0,
      reserve: 0,
      cap: 0,
      holding: false,
      floor: 0,
      seed: null,
      leaseMs: 60_000,
      ...over,
    });

    it('leaves a missing counter alone without a seed, starts it at the seed, and never lets a seed replace a count', async () => {
      const l = link();
      expect(await store.settle(l, call({ use: 3 }))).toBeNull();
      expect(await store.peek(l)).toBeNull();
      expect(await store.settle(l, call({ use: 3, seed: 10 }))).toEqual({ granted: 3, reserve: 0, used: 13, taken: 13, heldByOthers: 0, lost: false });
      expect(await store.settle(l, call({ use: 1, seed: 0 }))).toMatchObject({ granted: 1, used: 14 });
      expect(await store.peek(l)).toEqual({ used: 14, taken: 14 });
    });

    it('grants what waits exactly up to the limit under concurrency, partly to the call that crosses it', async () => {
      const l = link();
      await store.settle(l, call({ seed: 0 }));
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => store.settle(l, call({ holder: `h${i}`, use: 4 }))));
      const granted = answers.map((a) => a!.granted);
      expect(granted.reduce((a, b) => a + b, 0)).toBe(100);
      expect(granted.filter((g) => g !== 4 && g !== 0)).toEqual([]);
      expect(await store.settle(l, call({ use: 1 }))).toMatchObject({ granted: 0, used: 100, taken: 100 });
      expect(await store.settle(l, call({ limit: 102, use: 5 }))).toMatchObject({ granted: 2, used: 102 });
    });

    it('leases a reserve below half the limit only, at most (room below half) / (2 × holders), shrinking to one', async () => {
      const l = link();
      expect(await store.settle(l, call({ use: 1, reserve: 40, cap: 20, seed: 0 }))).toMatchObject({ granted: 1, reserve: 25, taken: 26 }); // ceil(49 / 2)
      expect(await store.settle(l, call({ holder: 'b', reserve: 40, cap: 20 }))).toMatchObject({ reserve: 6, taken: 32, heldByOthers: 25 }); // ceil(24 / 4)
      const sizes: number[] = [];
      for (let i = 0; i < 6; i++) {
        const holder = `c${i}`;
        sizes.push((await store.settle(l, call({ holder, reserve: 40, cap: 20 })))!.reserve);
      }
      expect(sizes).toEqual([3, 2, 2, 1, 1, 1]); // ceil(18 / 6), ceil(15 / 8), ceil(13 / 10), ceil(11 / 12), ...
      const { taken } = (await store.peek(l))!;
      expect(taken).toBe(42);
      // Past half: what waits is granted, no reserve.
      expect(await store.settle(l, call({ holder: 'd', use: 60, reserve: 10, cap: 5 }))).toMatchObject({ granted: 100 - taken, reserve: 0 });
    });

    it('takes what a holder reports given as used, once, however often the report is sent', async () => {
      const l = link();
      expect(await store.settle(l, call({ use: 2, reserve: 10, cap: 5, seed: 0 }))).toMatchObject({ reserve: 10, used: 2, taken: 12 });
      const report = call({ given: 4, reserve: 10, cap: 5, holding: true });
      expect(await store.settle(l, report)).toMatchObject({ reserve: 10, used: 6, taken: 16 }); // 6 left, topped up to 10
      expect(await store.settle(l, report)).toMatchObject({ reserve: 10, used: 6, taken: 16 }); // the same total again: nothing more
      expect(await store.settle(l, call({ given: 7, reserve: 0, holding: true }))).toMatchObject({ reserve: 0, used: 9, taken: 9, lost: false });
      expect(await store.peek(l)).toEqual({ used: 9, taken: 9 });
    });

    it('cuts a holder’s reserve back below half when the limit was lowered, before granting what waits', async () => {
      const l = link();
      await store.settle(l, call({ limit: 1000, use: 10, reserve: 20, cap: 10, seed: 0 }));
      expect(await store.settle(l, call({ limit: 12, use: 10, reserve: 20, cap: 10, holding: true }))).toMatchObject({
        granted: 2,
        reserve: 0,
        used: 12,
        taken: 12,
      });
    });

    it('raises what is taken to a floor known to be reached, never lowers it', async () => {
      const l = link();
      await store.settle(l, call({ use: 5, seed: 0 }));
      expect(await store.settle(l, call({ use: 1, floor: 30 }))).toMatchObject({ granted: 1, used: 31 });
      expect(await store.settle(l, call({ use: 1, floor: 5 }))).toMatchObject({ granted: 1, used: 32 });
    });

    it('ends a silent holder’s lease after its time: its cap counts as used, the rest comes back, and the holder is told', async () => {
      const l = link();
      const leaseMs = 400;
      expect(await store.settle(l, call({ use: 4, reserve: 8, cap: 3, seed: 0, leaseMs }))).toMatchObject({ reserve: 8, taken: 12 });
      expect(await store.settle(l, call({ holder: 'b', use: 1, leaseMs }))).toMatchObject({ heldByOthers: 8, taken: 13 });
      await t.advance(leaseMs + 100);
      expect(await store.peek(l)).toEqual({ used: 8, taken: 8 }); // 4 + 1 + a's cap of 3
      expect(await store.settle(l, call({ holder: 'b', use: 1, leaseMs }))).toMatchObject({ heldByOthers: 0, used: 9, taken: 9 });
      expect(await store.settle(l, call({ given: 2, reserve: 4, cap: 2, holding: true, leaseMs }))).toMatchObject({ lost: true, used: 9, reserve: 4 });
    });

    it('keeps a holder’s lease alive while it calls within its time', async () => {
      const l = link();
      const leaseMs = 600;
      await store.settle(l, call({ reserve: 6, cap: 3, seed: 0, leaseMs }));
      for (let i = 0; i < 3; i++) {
        await t.advance(leaseMs / 2);
        expect(await store.settle(l, call({ reserve: 6, cap: 3, holding: true, leaseMs }))).toMatchObject({ reserve: 6, lost: false });
      }
    });
  });
}
