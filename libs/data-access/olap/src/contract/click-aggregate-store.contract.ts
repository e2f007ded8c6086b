import { randomUUID } from 'crypto';
import type { ClickAggregateStore, MinuteVisitorRow } from '@shortlink/clicks-domain';

export interface ClickAggregateStoreFixture {
  store: ClickAggregateStore;
  close(): Promise<void>;
}

/** A minute boundary well inside DateTime's range (2024-03-01T00:00:00Z). */
export const T0 = 1709251200;
const MIN = 60;

/** A source no other test writes, so ingestedOffsets assertions hold on a shared database. */
const freshSource = (kind = 'memory') => `${kind}:${randomUUID()}`;

export function aMinuteRow(overrides: Partial<MinuteVisitorRow> = {}): MinuteVisitorRow {
  return {
    tenantId: randomUUID(),
    domain: 'sho.rt',
    code: 'c' + randomUUID().replace(/-/g, '').slice(0, 10),
    minute: T0,
    visitor: 1,
    clicks: 1,
    ...overrides,
  };
}

/**
 * One behaviour, every engine: runs on chdb in unit runs and on the ClickHouse server (18.16) in
 * integration runs. Every test works on its own tenant ids (and its own partitions for offsets),
 * so tests neither interfere nor depend on an empty database.
 */
export function describeClickAggregateStoreContract(backend: string, open: () => Promise<ClickAggregateStoreFixture>) {
  describe(`click aggregate store contract: ${backend}`, () => {
    let f: ClickAggregateStoreFixture;
    let store: ClickAggregateStore;
    beforeAll(async () => {
      f = await open();
      store = f.store;
      await store.migrate();
    });
    afterAll(async () => {
      await f?.close();
    });

    const link = () => ({ tenantId: randomUUID(), domain: 'sho.rt', code: 'c' + randomUUID().slice(0, 8) });

    it('migrates again without error and keeps the data', async () => {
      const l = link();
      await store.write([aMinuteRow({ ...l, clicks: 3 })]);
      await store.migrate();
      await store.migrate();
      const s = await store.stats({ ...l, from: T0, to: T0 + MIN });
      expect(s.totals).toEqual({ clicks: 3, visitors: 1 });
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('gives per-minute series and totals for two minutes and two visitors', async () => {
      const l = link();
      await store.write([
        aMinuteRow({ ...l, minute: T0, visitor: 11, clicks: 2 }),
        aMinuteRow({ ...l, minute: T0, visitor: 22, clicks: 1 }),
        aMinuteRow({ ...l, minute: T0 + MIN, visitor: 22, clicks: 4 }),
      ]);
      const s = await store.stats({ ...l, from: T0, to: T0 + 10 * MIN });
      expect(s.series).toEqual([
        { minute: T0, clicks: 3, visitors: 2 },
        { minute: T0 + MIN, clicks: 4, visitors: 1 },
      ]);
      expect(s.totals).toEqual({ clicks: 7, visitors: 2 });
      for (const p of s.series) {
        expect(typeof p.minute).toBe('number');
        expect(typeof p.clicks).toBe('number');
        expect(typeof p.visitors).toBe('number');
      }
    });

    it('counts a visitor seen in two minutes once per minute and once in the totals', async () => {
      const l = link();
      await store.write([
        aMinuteRow({ ...l, minute: T0 + 5 * MIN, visitor: 77, clicks: 1 }),
        aMinuteRow({ ...l, minute: T0 + 9 * MIN, visitor: 77, clicks: 2 }),
      ]);
      const s = await store.stats({ ...l, from: T0, to: T0 + 60 * MIN });
      expect(s.series.map((p) => p.visitors)).toEqual([1, 1]);
      expect(s.totals).toEqual({ clicks: 3, visitors: 1 });
    });

    it('merges rows of the same minute written in separate inserts', async () => {
      const l = link();
      await store.write([aMinuteRow({ ...l, visitor: 1, clicks: 2 })]);
      await store.write([aMinuteRow({ ...l, visitor: 2, clicks: 5 })]);
      await store.write([aMinuteRow({ ...l, visitor: 1, clicks: 1 })]);
      const s = await store.stats({ ...l, from: T0, to: T0 + MIN });
      expect(s.series).toEqual([{ minute: T0, clicks: 8, visitors: 2 }]);
      expect(s.totals).toEqual({ clicks: 8, visitors: 2 });
    });

    it('unions visitors across minutes (HLL), not a sum of per-minute uniques', async () => {
      const l = link();
      const rows: MinuteVisitorRow[] = [];
      // 400 distinct visitors, each seen in 3 of 5 minutes: per-minute uniques sum to 1200.
      for (let v = 1; v <= 400; v++) {
        for (let k = 0; k < 3; k++) rows.push(aMinuteRow({ ...l, minute: T0 + ((v + k) % 5) * MIN, visitor: v * 7919 + 1, clicks: 1 }));
      }
      await store.write(rows);
      const s = await store.stats({ ...l, from: T0, to: T0 + 5 * MIN });
      expect(s.series).toHaveLength(5);
      expect(s.totals.clicks).toBe(1200);
      expect(s.series.reduce((n, p) => n + p.clicks, 0)).toBe(1200);
      expect(s.totals.visitors).toBeGreaterThanOrEqual(392); // uniqCombined: ~exact at this size, allow 2 %
      expect(s.totals.visitors).toBeLessThanOrEqual(408);
    });

    it("does not show another tenant's rows for the same domain and code", async () => {
      const mine = link();
      const theirs = { ...mine, tenantId: randomUUID() };
      await store.write([aMinuteRow({ ...mine, visitor: 1, clicks: 1 }), aMinuteRow({ ...theirs, visitor: 2, clicks: 50 })]);
      expect((await store.stats({ ...mine, from: T0, to: T0 + MIN })).totals).toEqual({ clicks: 1, visitors: 1 });
      expect((await store.stats({ ...theirs, from: T0, to: T0 + MIN })).totals).toEqual({ clicks: 50, visitors: 1 });
      const other = await store.stats({ ...mine, tenantId: randomUUID(), from: T0, to: T0 + MIN });
      expect(other.series).toEqual([]);
    });

    it('keeps links apart: other code, other domain', async () => {
      const l = link();
      await store.write([
        aMinuteRow({ ...l, clicks: 1 }),
        aMinuteRow({ ...l, code: l.code + 'x', clicks: 10 }),
        aMinuteRow({ ...l, domain: 'other.example', clicks: 100 }),
      ]);
      expect((await store.stats({ ...l, from: T0, to: T0 + MIN })).totals.clicks).toBe(1);
    });

    it('respects [from, to): from is inclusive, to is exclusive', async () => {
      const l = link();
      await store.write([
        aMinuteRow({ ...l, minute: T0 - MIN, clicks: 1 }),
        aMinuteRow({ ...l, minute: T0, clicks: 10 }),
        aMinuteRow({ ...l, minute: T0 + MIN, clicks: 100 }),
        aMinuteRow({ ...l, minute: T0 + 2 * MIN, clicks: 1000 }),
      ]);
      const s = await store.stats({ ...l, from: T0, to: T0 + 2 * MIN });
      expect(s.series.map((p) => p.minute)).toEqual([T0, T0 + MIN]);
      expect(s.totals.clicks).toBe(110);
      expect((await store.stats({ ...l, from: T0, to: T0 })).totals).toEqual({ clicks: 0, visitors: 0 });
      expect((await store.stats({ ...l, from: T0 + 2 * MIN, to: T0 + 3 * MIN })).totals.clicks).toBe(1000);
    });

    it('spans a month boundary (two partitions) in one query', async () => {
      const l = link();
      await store.write([aMinuteRow({ ...l, minute: T0 - MIN, visitor: 5, clicks: 1 }), aMinuteRow({ ...l, minute: T0, visitor: 5, clicks: 2 })]);
      const s = await store.stats({ ...l, from: T0 - 3600, to: T0 + 3600 });
      expect(s.series).toEqual([
        { minute: T0 - MIN, clicks: 1, visitors: 1 },
        { minute: T0, clicks: 2, visitors: 1 },
      ]);
      expect(s.totals).toEqual({ clicks: 3, visitors: 1 });
    });

    it('keeps the highest offset per source and partition across several writes, exact past 2^53', async () => {
      const source = freshSource();
      const other = freshSource();
      const l = link();
      await store.write([aMinuteRow(l)], { source, partition: 1, lastOffset: '5' });
      await store.write([aMinuteRow(l)], { source, partition: 2, lastOffset: '40' });
      await store.write([aMinuteRow(l)], { source, partition: 1, lastOffset: '3' });
      await store.write([aMinuteRow({ ...l, minute: T0 + MIN })], { source, partition: 1, lastOffset: '12' });
      await store.write([], { source, partition: 2, lastOffset: '9007199254740993' });
      await store.write([aMinuteRow(l)], { source: other, partition: 1, lastOffset: '99' });
      const offsets = await store.ingestedOffsets(source);
      expect(offsets).toEqual(new Map([[1, 12n], [2, 9007199254740993n]]));
      expect(await store.ingestedOffsets(freshSource())).toEqual(new Map());
      expect((await store.stats({ ...l, from: T0, to: T0 + 2 * MIN })).totals.clicks).toBe(5);
    });

    it('writes the rows and their progress in one insert: a refused progress writes no rows', async () => {
      const l = link();
      const source = freshSource();
      await expect(store.write([aMinuteRow({ ...l, clicks: 1 })], { source, partition: 0, lastOffset: '12; DROP TABLE x' })).rejects.toThrow(/lastOffset/);
      expect((await store.stats({ ...l, from: T0, to: T0 + MIN })).totals.clicks).toBe(0);
      expect(await store.ingestedOffsets(source)).toEqual(new Map());
    });

    it('gives an empty series and zero totals for an unknown link', async () => {
      const s = await store.stats({ ...link(), from: 0, to: T0 * 2 });
      expect(s).toEqual({ series: [], totals: { clicks: 0, visitors: 0 } });
    });

    it('treats an empty write as a no-op', async () => {
      await expect(store.write([])).resolves.toBeUndefined();
    });

    it('round-trips quotes, backslashes, newlines and non-ASCII in tenant, domain and code', async () => {
      const nasty = { tenantId: `t'\\"\n${randomUUID()}`, domain: 'dömain\\.example', code: "a'b\\c" };
      const lookalike = { ...nasty, code: "a'bc" };
      await store.write([aMinuteRow({ ...nasty, clicks: 2, visitor: 9 }), aMinuteRow({ ...lookalike, clicks: 30 })]);
      const s = await store.stats({ ...nasty, from: T0, to: T0 + MIN });
      expect(s.series).toEqual([{ minute: T0, clicks: 2, visitors: 1 }]);
      const injected = await store.stats({ ...nasty, code: "' OR '1'='1", from: T0, to: T0 + MIN });
      expect(injected.totals.clicks).toBe(0);
    });

    it('refuses a malformed row and writes none of the batch', async () => {
      const l = link();
      await expect(store.write([aMinuteRow({ ...l, clicks: 1 }), aMinuteRow({ ...l, visitor: -1 })])).rejects.toThrow(/visitor/);
      expect((await store.stats({ ...l, from: T0, to: T0 + MIN })).totals.clicks).toBe(0);
    });
  });
}
