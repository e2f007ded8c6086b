import { randomUUID } from 'crypto';
import { rollupsOfVisitorRows, visitColumnsOf } from '@shortlink/clicks-domain';
import type {
  ClickAggregateStore,
  ClickWrite,
  ConsumerProgress,
  ConversionEvent,
  DimensionCount,
  ProducerMark,
  RangeQuery,
  VisitorMinuteRow,
  VisitRow,
} from '@shortlink/clicks-domain';

export interface ClickAggregateStoreFixture {
  store: ClickAggregateStore;
  close(): Promise<void>;
}

/** A minute boundary well inside DateTime's range (2024-03-01T00:00:00Z). */
export const T0 = 1709251200;
const MIN = 60;
const HOUR = 3600;
const DAY = 86_400;

/** A source no other test writes, so ingestedOffsets assertions hold on a shared database. */
const freshSource = (kind = 'memory') => `${kind}:${randomUUID()}`;

export function aVisitorRow(overrides: Partial<VisitorMinuteRow> = {}): VisitorMinuteRow {
  return {
    tenantId: randomUUID(),
    domain: 'sho.rt',
    code: 'c' + randomUUID().replace(/-/g, '').slice(0, 10),
    minute: T0,
    bot: false,
    visitor: 1,
    clicks: 1,
    dims: [],
    ...overrides,
  };
}

let visitSeq = 0;
export function aVisit(overrides: Partial<VisitRow> = {}): VisitRow {
  const seq = visitSeq++;
  return {
    id: (BigInt('0x' + randomUUID().replace(/-/g, '').slice(0, 15)) * 16n + BigInt(seq % 16)).toString(),
    time: T0 * 1000,
    tenantId: randomUUID(),
    domain: 'sho.rt',
    code: 'c' + randomUUID().slice(0, 8),
    linkId: '42',
    country: null,
    region: null,
    city: null,
    refererHost: null,
    device: 'desktop',
    browser: 'Chrome',
    os: 'Windows',
    variant: null,
    source: 'link',
    bot: false,
    visitor: 7,
    producer: 'p-' + randomUUID().slice(0, 8),
    seq,
    ...overrides,
  };
}

/** Waits for a mutation to be applied (both engines apply ALTER … DELETE in the background). */
async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the mutation was not applied in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const minutes = (from: number, to: number, bots: RangeQuery['bots'] = 'exclude'): RangeQuery => ({ from, to, granularity: 'minute', bots });
const dim = (dimension: DimensionCount['dimension'], value: string, clicks: number): DimensionCount => ({ dimension, value, clicks });

/**
 * One behaviour, every engine: runs on chdb in unit runs and on the ClickHouse server (18.16) in
 * integration runs. Every test works on its own tenant ids (and its own sources for offsets),
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
    /** A write stated per visitor (rows) and per visit (objects), as the store takes it: rollup rows and visit columns. */
    const write = ({ rows, visits, ...rest }: { rows?: VisitorMinuteRow[]; visits?: VisitRow[] } & Omit<ClickWrite, 'rollups' | 'visits'>) =>
      store.write({ ...rest, rollups: rows && rollupsOfVisitorRows(rows), visits: visits && visitColumnsOf(visits) });
    const writeAndCommit = async (rows: VisitorMinuteRow[], through: ConsumerProgress, marks: ProducerMark[] = []) => {
      await write({ rows, through });
      await store.commit(through, marks);
    };

    it('migrates again without error and keeps the data', async () => {
      const l = link();
      await write({ rows: [aVisitorRow({ ...l, clicks: 3 })] });
      await store.migrate();
      await store.migrate();
      expect((await store.series(l, minutes(T0, T0 + MIN))).totals).toEqual({ clicks: 3, visitors: 1, botClicks: 0 });
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('gives per-minute series and totals for two minutes and two visitors', async () => {
      const l = link();
      await write({
        rows: [
          aVisitorRow({ ...l, minute: T0, visitor: 11, clicks: 2 }),
          aVisitorRow({ ...l, minute: T0, visitor: 22, clicks: 1 }),
          aVisitorRow({ ...l, minute: T0 + MIN, visitor: 22, clicks: 4 }),
        ],
      });
      const s = await store.series(l, minutes(T0, T0 + 10 * MIN));
      expect(s.series).toEqual([
        { time: T0, clicks: 3, visitors: 2, botClicks: 0 },
        { time: T0 + MIN, clicks: 4, visitors: 1, botClicks: 0 },
      ]);
      expect(s.totals).toEqual({ clicks: 7, visitors: 2, botClicks: 0 });
    });

    it('rolls minutes up into hours and days: same totals, a visitor of several minutes counted once per bucket', async () => {
      const l = link();
      await write({
        rows: [
          aVisitorRow({ ...l, minute: T0 + 5 * MIN, visitor: 77, clicks: 1 }),
          aVisitorRow({ ...l, minute: T0 + 9 * MIN, visitor: 77, clicks: 2 }),
          aVisitorRow({ ...l, minute: T0 + HOUR + MIN, visitor: 78, clicks: 5 }),
          aVisitorRow({ ...l, minute: T0 + DAY + 2 * HOUR, visitor: 77, clicks: 7 }),
        ],
      });
      const m = await store.series(l, minutes(T0, T0 + 2 * DAY));
      expect(m.series.map((p) => p.visitors)).toEqual([1, 1, 1, 1]);
      const h = await store.series(l, { ...minutes(T0, T0 + 2 * DAY), granularity: 'hour' });
      expect(h.series).toEqual([
        { time: T0, clicks: 3, visitors: 1, botClicks: 0 },
        { time: T0 + HOUR, clicks: 5, visitors: 1, botClicks: 0 },
        { time: T0 + DAY + 2 * HOUR, clicks: 7, visitors: 1, botClicks: 0 },
      ]);
      const d = await store.series(l, { ...minutes(T0, T0 + 2 * DAY), granularity: 'day' });
      expect(d.series).toEqual([
        { time: T0, clicks: 8, visitors: 2, botClicks: 0 },
        { time: T0 + DAY, clicks: 7, visitors: 1, botClicks: 0 },
      ]);
      for (const s of [m, h, d]) expect(s.totals).toEqual({ clicks: 15, visitors: 2, botClicks: 0 });
    });

    it('merges rows of the same minute written in separate inserts', async () => {
      const l = link();
      await write({ rows: [aVisitorRow({ ...l, visitor: 1, clicks: 2 })] });
      await write({ rows: [aVisitorRow({ ...l, visitor: 2, clicks: 5 })] });
      await write({ rows: [aVisitorRow({ ...l, visitor: 1, clicks: 1 })] });
      const s = await store.series(l, minutes(T0, T0 + MIN));
      expect(s.series).toEqual([{ time: T0, clicks: 8, visitors: 2, botClicks: 0 }]);
    });

    it('unions visitors across minutes (HLL), not a sum of per-minute uniques', async () => {
      const l = link();
      const rows: VisitorMinuteRow[] = [];
      // 400 distinct visitors, each seen in 3 of 5 minutes: per-minute uniques sum to 1200.
      for (let v = 1; v <= 400; v++) {
        for (let k = 0; k < 3; k++) rows.push(aVisitorRow({ ...l, minute: T0 + ((v + k) % 5) * MIN, visitor: v * 7919 + 1, clicks: 1 }));
      }
      await write({ rows });
      const s = await store.series(l, minutes(T0, T0 + 5 * MIN));
      expect(s.series).toHaveLength(5);
      expect(s.totals.clicks).toBe(1200);
      expect(s.totals.visitors).toBeGreaterThanOrEqual(392); // uniqCombined: ~exact at this size, allow 2 %
      expect(s.totals.visitors).toBeLessThanOrEqual(408);
    });

    it('keeps bot clicks apart: excluded by default, included or alone on request, always counted as botClicks', async () => {
      const l = link();
      await write({
        rows: [
          aVisitorRow({ ...l, visitor: 1, clicks: 3 }),
          aVisitorRow({ ...l, visitor: 2, clicks: 4, bot: true }),
          aVisitorRow({ ...l, minute: T0 + MIN, visitor: 2, clicks: 1, bot: true }),
        ],
      });
      const exclude = await store.series(l, minutes(T0, T0 + 5 * MIN));
      expect(exclude.series).toEqual([
        { time: T0, clicks: 3, visitors: 1, botClicks: 4 },
        { time: T0 + MIN, clicks: 0, visitors: 0, botClicks: 1 },
      ]);
      expect(exclude.totals).toEqual({ clicks: 3, visitors: 1, botClicks: 5 });
      expect((await store.series(l, minutes(T0, T0 + 5 * MIN, 'include'))).totals).toEqual({ clicks: 8, visitors: 2, botClicks: 5 });
      expect((await store.series(l, minutes(T0, T0 + 5 * MIN, 'only'))).totals).toEqual({ clicks: 5, visitors: 1, botClicks: 5 });
    });

    it('breaks clicks down by dimension value, most clicks first, with unique visitors per value, at every granularity', async () => {
      const l = link();
      await write({
        rows: [
          aVisitorRow({
            ...l,
            visitor: 1,
            clicks: 3,
            dims: [dim('countries', 'DE', 3), dim('referers', 'news.example', 1), dim('referers', '', 2), dim('devices', 'mobile', 3)],
          }),
          aVisitorRow({ ...l, visitor: 2, clicks: 1, dims: [dim('countries', 'US', 1), dim('referers', 'news.example', 1), dim('devices', 'desktop', 1)] }),
          aVisitorRow({
            ...l,
            minute: T0 + 2 * HOUR,
            visitor: 1,
            clicks: 2,
            dims: [dim('countries', 'DE', 2), dim('referers', '', 2), dim('devices', 'mobile', 2)],
          }),
          aVisitorRow({ ...l, visitor: 3, clicks: 9, bot: true, dims: [dim('countries', 'US', 9), dim('devices', 'bot', 9)] }),
        ],
      });
      for (const granularity of ['minute', 'hour', 'day'] as const) {
        const range = { ...minutes(T0, T0 + DAY), granularity };
        expect(await store.breakdown(l, range, 'countries', 10)).toEqual([
          { value: 'DE', clicks: 5, visitors: 1 },
          { value: 'US', clicks: 1, visitors: 1 },
        ]);
        expect(await store.breakdown(l, range, 'referers', 10)).toEqual([
          { value: '', clicks: 4, visitors: 1 },
          { value: 'news.example', clicks: 2, visitors: 2 },
        ]);
      }
      expect(await store.breakdown(l, minutes(T0, T0 + DAY), 'devices', 1)).toEqual([{ value: 'mobile', clicks: 5, visitors: 1 }]);
      expect(await store.breakdown(l, minutes(T0, T0 + DAY, 'only'), 'countries', 10)).toEqual([{ value: 'US', clicks: 9, visitors: 1 }]);
      expect(await store.breakdown(l, minutes(T0, T0 + DAY), 'variants', 10)).toEqual([]);
      expect(await store.breakdown(l, minutes(T0 + HOUR, T0 + DAY), 'countries', 10)).toEqual([{ value: 'DE', clicks: 2, visitors: 1 }]);
    });

    it("lists a tenant's links by clicks, optionally on one domain, never another tenant's", async () => {
      const tenantId = randomUUID();
      await write({
        rows: [
          aVisitorRow({ tenantId, code: 'few', clicks: 1 }),
          aVisitorRow({ tenantId, code: 'many', clicks: 5, visitor: 1 }),
          aVisitorRow({ tenantId, code: 'many', clicks: 2, visitor: 2 }),
          aVisitorRow({ tenantId, code: 'other', domain: 'go.example', clicks: 3 }),
          aVisitorRow({ code: 'theirs', clicks: 100 }),
        ],
      });
      const range = minutes(T0, T0 + HOUR);
      expect(await store.topLinks(tenantId, null, range, 10)).toEqual([
        { domain: 'sho.rt', code: 'many', clicks: 7, visitors: 2 },
        { domain: 'go.example', code: 'other', clicks: 3, visitors: 1 },
        { domain: 'sho.rt', code: 'few', clicks: 1, visitors: 1 },
      ]);
      expect((await store.topLinks(tenantId, 'go.example', range, 10)).map((r) => r.code)).toEqual(['other']);
      expect((await store.topLinks(tenantId, null, range, 1)).map((r) => r.code)).toEqual(['many']);
      // Among given links only (a page of the console's list): their counts, another tenant's never.
      const among = [
        { domain: 'sho.rt', code: 'few' },
        { domain: 'go.example', code: 'other' },
        { domain: 'sho.rt', code: 'theirs' },
        { domain: 'sho.rt', code: 'never-clicked' },
      ];
      expect(await store.topLinks(tenantId, null, range, 10, among)).toEqual([
        { domain: 'go.example', code: 'other', clicks: 3, visitors: 1 },
        { domain: 'sho.rt', code: 'few', clicks: 1, visitors: 1 },
      ]);
      expect(await store.topLinks(tenantId, null, range, 10, [])).toEqual([]);
    });

    it("sums a tenant's links into one series (the visitors one union), optionally on one domain, never another tenant's", async () => {
      const tenantId = randomUUID();
      await write({
        rows: [
          aVisitorRow({ tenantId, code: 'a', clicks: 2, visitor: 1 }),
          aVisitorRow({ tenantId, code: 'b', clicks: 3, visitor: 1, minute: T0 + MIN }),
          aVisitorRow({ tenantId, code: 'c', domain: 'go.example', clicks: 4, visitor: 2, minute: T0 + MIN }),
          aVisitorRow({ tenantId, code: 'a', clicks: 6, visitor: 3, bot: true }),
          aVisitorRow({ code: 'theirs', clicks: 100 }),
        ],
      });
      const range = minutes(T0, T0 + HOUR);
      expect(await store.tenantSeries(tenantId, null, range)).toEqual({
        series: [
          { time: T0, clicks: 2, visitors: 1, botClicks: 6 },
          { time: T0 + MIN, clicks: 7, visitors: 2, botClicks: 0 },
        ],
        totals: { clicks: 9, visitors: 2, botClicks: 6 },
      });
      expect((await store.tenantSeries(tenantId, 'go.example', range)).totals).toEqual({ clicks: 4, visitors: 1, botClicks: 0 });
      expect((await store.tenantSeries(randomUUID(), null, range)).series).toEqual([]);
    });

    it("counts orphan visits per domain, of the domains asked for only, never in a tenant's links", async () => {
      const domain = `orphans-${randomUUID().slice(0, 8)}.example`;
      const tenantId = randomUUID();
      const shared = `shared-${domain}`;
      await write({
        rows: [
          aVisitorRow({ tenantId, domain, code: 'real', clicks: 1 }),
          aVisitorRow({ tenantId: '', domain, code: 'wp-login', clicks: 3, visitor: 1, bot: true }),
          aVisitorRow({ tenantId: '', domain, code: 'wp-login', minute: T0 + MIN, clicks: 1, visitor: 2 }),
          aVisitorRow({ tenantId: '', domain, code: 'typo123', clicks: 1, visitor: 3 }),
          aVisitorRow({ tenantId: '', domain: `elsewhere-${domain}`, code: 'x', clicks: 50 }),
          // Another tenant's deleted link on a shared domain, where this tenant has clicks too.
          aVisitorRow({ tenantId, domain: shared, code: 'mine', clicks: 1 }),
          aVisitorRow({ tenantId: '', domain: shared, code: 'b-q3-layoffs', clicks: 7, visitor: 4 }),
        ],
      });
      const range = minutes(T0, T0 + HOUR, 'include');
      const mine = await store.orphans({ ...range, domains: [domain], limit: 10 });
      expect(mine.totals).toEqual({ visits: 5, visitors: 3 });
      expect(mine.series).toEqual([
        { time: T0, domain, visits: 4, visitors: 2 },
        { time: T0 + MIN, domain, visits: 1, visitors: 1 },
      ]);
      expect(mine.codes).toEqual([
        { domain, code: 'wp-login', visits: 4 },
        { domain, code: 'typo123', visits: 1 },
      ]);
      expect((await store.orphans({ ...range, bots: 'exclude', domains: [domain], limit: 10 })).totals.visits).toBe(2);
      expect((await store.orphans({ ...range, domains: [], limit: 10 })).totals).toEqual({ visits: 0, visitors: 0 });
      const both = await store.orphans({ ...range, domains: [domain, shared], limit: 10 });
      expect(both.codes).toEqual([
        { domain: shared, code: 'b-q3-layoffs', visits: 7 },
        { domain, code: 'wp-login', visits: 4 },
        { domain, code: 'typo123', visits: 1 },
      ]);
      expect(both.totals).toEqual({ visits: 12, visitors: 4 });
      expect((await store.topLinks(tenantId, null, range, 10)).map((r) => r.code).sort()).toEqual(['mine', 'real']);
    });

    it("does not show another tenant's rows for the same domain and code", async () => {
      const mine = link();
      const theirs = { ...mine, tenantId: randomUUID() };
      await write({ rows: [aVisitorRow({ ...mine, visitor: 1, clicks: 1 }), aVisitorRow({ ...theirs, visitor: 2, clicks: 50 })] });
      expect((await store.series(mine, minutes(T0, T0 + MIN))).totals.clicks).toBe(1);
      expect((await store.series(theirs, minutes(T0, T0 + MIN))).totals.clicks).toBe(50);
      expect((await store.series({ ...mine, tenantId: randomUUID() }, minutes(T0, T0 + MIN))).series).toEqual([]);
      await expect(store.series({ ...mine, tenantId: '' }, minutes(T0, T0 + MIN))).rejects.toThrow(/tenant/);
    });

    it('respects [from, to): from is inclusive, to is exclusive, and spans a month boundary', async () => {
      const l = link();
      await write({
        rows: [
          aVisitorRow({ ...l, minute: T0 - MIN, clicks: 1 }),
          aVisitorRow({ ...l, minute: T0, clicks: 10 }),
          aVisitorRow({ ...l, minute: T0 + MIN, clicks: 100 }),
          aVisitorRow({ ...l, minute: T0 + 2 * MIN, clicks: 1000 }),
        ],
      });
      const s = await store.series(l, minutes(T0, T0 + 2 * MIN));
      expect(s.series.map((p) => p.time)).toEqual([T0, T0 + MIN]);
      expect(s.totals.clicks).toBe(110);
      expect((await store.series(l, minutes(T0, T0))).totals.clicks).toBe(0);
      expect((await store.series(l, minutes(T0 - HOUR, T0 + HOUR))).totals).toEqual({ clicks: 1111, visitors: 1, botClicks: 0 });
    });

    it('keeps the highest offset per source and partition across several writes, exact past 2^53', async () => {
      const source = freshSource();
      const other = freshSource();
      const l = link();
      await writeAndCommit([aVisitorRow(l)], { source, partition: 1, lastOffset: '5' });
      await writeAndCommit([aVisitorRow(l)], { source, partition: 2, lastOffset: '40' });
      await writeAndCommit([aVisitorRow(l)], { source, partition: 1, lastOffset: '3' });
      await writeAndCommit([aVisitorRow({ ...l, minute: T0 + MIN })], { source, partition: 1, lastOffset: '12' });
      await writeAndCommit([], { source, partition: 2, lastOffset: '9007199254740993' });
      await writeAndCommit([aVisitorRow(l)], { source: other, partition: 1, lastOffset: '99' });
      expect(await store.ingestedOffsets(source)).toEqual(
        new Map([
          [1, 12n],
          [2, 9007199254740993n],
        ]),
      );
      expect(await store.ingestedOffsets(freshSource())).toEqual(new Map());
      expect((await store.series(l, minutes(T0, T0 + 2 * MIN))).totals.clicks).toBe(5);
    });

    it("keeps each producer's highest event seq per source and partition, written with the rows", async () => {
      const source = freshSource();
      await writeAndCommit([aVisitorRow()], { source, partition: 0, lastOffset: '1' }, [
        { source, partition: 0, producer: 'a', lastSeq: 10 },
        { source, partition: 1, producer: 'a', lastSeq: 4 },
      ]);
      await writeAndCommit([], { source, partition: 0, lastOffset: '2' }, [
        { source, partition: 0, producer: 'a', lastSeq: 7 },
        { source, partition: 0, producer: 'b', lastSeq: 2 ** 40 },
      ]);
      const marks = (await store.producerMarks(source, T0)).sort((x, y) => x.partition - y.partition || x.producer.localeCompare(y.producer));
      expect(marks).toEqual([
        { source, partition: 0, producer: 'a', lastSeq: 10 },
        { source, partition: 0, producer: 'b', lastSeq: 2 ** 40 },
        { source, partition: 1, producer: 'a', lastSeq: 4 },
      ]);
      // Marks are dated by the day they were written: none of them is from the future.
      expect(await store.producerMarks(source, Math.floor(Date.now() / 1000) + 2 * DAY)).toEqual([]);
    });

    it('refuses a malformed progress and writes no rows with it', async () => {
      const l = link();
      const source = freshSource();
      const through = { source, partition: 0, lastOffset: '12; DROP TABLE x' };
      await expect(write({ rows: [aVisitorRow({ ...l, clicks: 1 })], through })).rejects.toThrow(/lastOffset/);
      await expect(store.commit(through, [])).rejects.toThrow(/lastOffset/);
      expect((await store.series(l, minutes(T0, T0 + MIN))).totals.clicks).toBe(0);
      expect(await store.ingestedOffsets(source)).toEqual(new Map());
    });

    it('gives an empty series and zero totals for an unknown link, and treats an empty write as a no-op', async () => {
      expect(await store.series(link(), minutes(0, T0 * 2))).toEqual({ series: [], totals: { clicks: 0, visitors: 0, botClicks: 0 } });
      await expect(write({ rows: [] })).resolves.toBeUndefined();
    });

    it('round-trips quotes, backslashes, newlines and non-ASCII in tenant, domain, code and dimension values', async () => {
      const nasty = { tenantId: `t'\\"\n${randomUUID()}`, domain: 'dömain\\.example', code: "a'b\\c" };
      const lookalike = { ...nasty, code: "a'bc" };
      await write({
        rows: [aVisitorRow({ ...nasty, clicks: 2, visitor: 9, dims: [dim('referers', "x'y\\z\n😀", 2)] }), aVisitorRow({ ...lookalike, clicks: 30 })],
      });
      expect((await store.series(nasty, minutes(T0, T0 + MIN))).series).toEqual([{ time: T0, clicks: 2, visitors: 1, botClicks: 0 }]);
      expect(await store.breakdown(nasty, minutes(T0, T0 + MIN), 'referers', 5)).toEqual([{ value: "x'y\\z\n😀", clicks: 2, visitors: 1 }]);
      expect((await store.series({ ...nasty, code: "' OR '1'='1" }, minutes(T0, T0 + MIN))).totals.clicks).toBe(0);
    });

    it('refuses a malformed row and writes none of the batch', async () => {
      const l = link();
      await expect(write({ rows: [aVisitorRow({ ...l, clicks: 1 }), aVisitorRow({ ...l, visitor: -1 })] })).rejects.toThrow(/visitor/);
      expect((await store.series(l, minutes(T0, T0 + MIN))).totals.clicks).toBe(0);
    });

    it("keeps each table's ledger (source, partition, day) -> last offset in the tables a write reaches, and nothing of it in any answer", async () => {
      const source = freshSource('kafka');
      const l = link();
      const day2 = T0 + DAY;
      const visit = aVisit({ ...l, time: (day2 + 30) * 1000 });
      await write({ rows: [aVisitorRow({ ...l, clicks: 2 })], visits: [visit], through: { source, partition: 3, lastOffset: '17' } });
      await write({
        rows: [aVisitorRow({ ...l, minute: day2 })],
        targets: ['link_minute', 'dim_day'],
        through: { source, partition: 3, lastOffset: '20' },
      });
      await write({ rows: [aVisitorRow({ ...l, minute: T0 })], targets: ['link_hour'], through: { source, partition: 4, lastOffset: '99' } });
      const held = await store.writtenThrough(source, 3, [T0, day2, T0 + 2 * DAY]);
      expect(held.committed).toBeUndefined();
      expect([...held.tables.keys()].sort()).toEqual([...store.targets].sort());
      const ledger = Object.fromEntries([...held.tables].map(([table, days]) => [table, Object.fromEntries([...days].map(([d, o]) => [d, String(o)]))]));
      // A write's ledger entries cover every day it has rows of: a table holds all of those days through the offset.
      expect(ledger).toEqual({
        link_minute: { [T0]: '17', [day2]: '20' },
        link_hour: { [T0]: '17', [day2]: '17' },
        link_day: { [T0]: '17', [day2]: '17' },
        dim_minute: { [T0]: '17', [day2]: '17' },
        dim_hour: { [T0]: '17', [day2]: '17' },
        dim_day: { [T0]: '17', [day2]: '20' },
        visits: { [T0]: '17', [day2]: '17' },
      });
      await store.commit({ source, partition: 3, lastOffset: '20' }, []);
      expect((await store.writtenThrough(source, 3, [])).committed).toBe(20n);
      // The ledger rows are no tenant's: no series, top link or orphan shows them.
      expect((await store.series(l, minutes(T0, T0 + 2 * DAY))).totals.clicks).toBe(3);
      expect((await store.topLinks(l.tenantId, null, minutes(T0, T0 + 2 * DAY), 10)).map((r) => r.code)).toEqual([l.code]);
      expect((await store.orphans({ ...minutes(T0, T0 + 2 * DAY), domains: [source], limit: 100 })).totals).toEqual({ visits: 0, visitors: 0 });
    });

    it('lists raw visits newest first, page by page through a cursor, with every fact and filters for link, bots and time', async () => {
      const l = link();
      const other = { ...l, code: 'other' + randomUUID().slice(0, 6) };
      const visits = [
        aVisit({ ...l, time: T0 * 1000 + 5, country: 'DE', region: 'BE', city: 'Berlin', refererHost: 'news.example', variant: 1 }),
        aVisit({ ...l, time: T0 * 1000 + 5 }),
        aVisit({ ...l, time: (T0 - 3 * HOUR) * 1000 + 999, bot: true, device: 'bot' }),
        aVisit({ ...l, time: (T0 - 40 * DAY) * 1000 }),
        aVisit({ ...other, time: T0 * 1000 + 7 }),
      ];
      await write({ visits });
      const q = { tenantId: l.tenantId, domain: l.domain, code: l.code, from: 0, to: T0 + 1, bots: 'include' as const, after: null, limit: 10 };
      const all = await store.visits(q);
      const sameMs = [visits[0], visits[1]].sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1));
      expect(all).toEqual([...sameMs, visits[2], visits[3]]);
      const first = await store.visits({ ...q, limit: 2 });
      expect(first).toEqual(sameMs);
      const second = await store.visits({ ...q, limit: 2, after: { time: first[1].time, id: first[1].id } });
      expect(second).toEqual([visits[2], visits[3]]);
      expect(await store.visits({ ...q, bots: 'exclude' })).toEqual([...sameMs, visits[3]]);
      expect(await store.visits({ ...q, bots: 'only' })).toEqual([visits[2]]);
      expect(await store.visits({ ...q, from: T0 - DAY })).toEqual([...sameMs, visits[2]]);
      expect((await store.visits({ ...q, code: undefined })).map((v) => v.code)).toEqual([other.code, l.code, l.code, l.code, l.code]);
      expect(await store.visits({ ...q, tenantId: randomUUID() })).toEqual([]);
    });

    it('keeps sources and cities (with country and region, non-ASCII) as breakdowns at every granularity, and visits by QR code with region and city', async () => {
      const l = link();
      const springfieldIl = 'US\tIllinois\tSpringfield';
      const springfieldMa = 'US\tMassachusetts\tSpringfield';
      const zurich = 'CH\tZürich\tZürich';
      await write({
        rows: [
          aVisitorRow({ ...l, visitor: 1, clicks: 3, dims: [dim('sources', 'qr', 2), dim('sources', 'link', 1), dim('cities', springfieldIl, 3)] }),
          aVisitorRow({
            ...l,
            visitor: 2,
            clicks: 2,
            minute: T0 + HOUR,
            dims: [dim('sources', 'link', 2), dim('cities', springfieldMa, 1), dim('cities', zurich, 1)],
          }),
          aVisitorRow({ ...l, visitor: 3, clicks: 1, minute: T0 + HOUR, dims: [dim('sources', 'qr', 1), dim('cities', '', 1)] }),
        ],
        visits: [
          aVisit({ ...l, time: T0 * 1000 + 1, source: 'qr', country: 'US', region: 'Illinois', city: 'Springfield' }),
          aVisit({ ...l, time: T0 * 1000 + 2, source: 'link', country: 'CH', region: 'Zürich', city: 'Zürich' }),
        ],
      });
      for (const granularity of ['minute', 'hour', 'day'] as const) {
        const range = { ...minutes(T0 - DAY, T0 + DAY), granularity };
        expect(await store.breakdown(l, range, 'sources', 10)).toEqual([
          { value: 'link', clicks: 3, visitors: 2 },
          { value: 'qr', clicks: 3, visitors: 2 },
        ]);
        expect(await store.breakdown(l, range, 'cities', 10)).toEqual([
          { value: springfieldIl, clicks: 3, visitors: 1 },
          { value: '', clicks: 1, visitors: 1 },
          { value: zurich, clicks: 1, visitors: 1 },
          { value: springfieldMa, clicks: 1, visitors: 1 },
        ]);
      }
      const q = { tenantId: l.tenantId, domain: l.domain, code: l.code, from: 0, to: T0 + 1, bots: 'include' as const, after: null, limit: 10 };
      expect((await store.visits(q)).map((v) => [v.source, v.country, v.region, v.city])).toEqual([
        ['link', 'CH', 'Zürich', 'Zürich'],
        ['qr', 'US', 'Illinois', 'Springfield'],
      ]);
    });

    it('deletes a link’s visits from the raw visits, rollups and dimensions, and orphan visits of the domains named, nothing else', async () => {
      const l = link();
      const kept = { ...l, code: 'kept' + randomUUID().slice(0, 6) };
      const orphanHere = { tenantId: '', domain: `o-${randomUUID().slice(0, 6)}.example`, code: 'nope1' };
      const orphanThere = { tenantId: '', domain: `o-${randomUUID().slice(0, 6)}.example`, code: 'nope2' };
      const rows = [l, kept, orphanHere, orphanThere].map((k) => aVisitorRow({ ...k, clicks: 2, dims: [dim('countries', 'DE', 2)] }));
      const visits = [l, l, kept, orphanHere, orphanThere].map((k) => aVisit({ ...k, time: T0 * 1000 + 1 }));
      await write({ rows, visits });
      const range = (g: 'minute' | 'hour' | 'day') => ({ ...minutes(T0 - DAY, T0 + DAY), granularity: g });
      const q = (k: { tenantId: string; domain: string; code: string }) => ({ ...k, from: 0, to: T0 + DAY, bots: 'include' as const, after: null, limit: 10 });
      const gone = async (k: typeof l) => {
        for (const g of ['minute', 'hour', 'day'] as const) {
          if ((await store.series(k, range(g))).totals.clicks !== 0) return false;
          if ((await store.breakdown(k, range(g), 'countries', 10)).length !== 0) return false;
        }
        return (await store.visits(q(k))).length === 0;
      };

      expect(await store.deleteVisits({ kind: 'link', ...l })).toBe(2);
      // A mutation: applied in the background on either engine.
      await until(() => gone(l));
      expect((await store.series(kept, range('day'))).totals.clicks).toBe(2);
      expect(await store.visits(q(kept))).toHaveLength(1);

      expect(await store.deleteVisits({ kind: 'orphans', domains: [orphanHere.domain] })).toBe(1);
      expect(await store.deleteVisits({ kind: 'orphans', domains: [] })).toBe(0);
      await until(async () => (await store.visits(q(orphanHere))).length === 0);
      expect((await store.orphans({ ...range('minute'), domains: [orphanHere.domain], limit: 10 })).totals.visits).toBe(0);
      expect((await store.orphans({ ...range('minute'), domains: [orphanThere.domain], limit: 10 })).totals.visits).toBe(2);
      expect(await store.visits(q(orphanThere))).toHaveLength(1);
      // Deleting again finds nothing.
      expect(await store.deleteVisits({ kind: 'link', ...l })).toBe(0);
    });

    it('counts conversions per link once per event key (leads, sales, revenue per currency, refunds negative), within [from, to), and keeps the last offset per source partition (docs/analytics.md, "Conversions")', async () => {
      const tenantId = randomUUID();
      const source = freshSource();
      const at = (T0 + 90) * 1000;
      const event = (over: Partial<ConversionEvent>): ConversionEvent => ({
        kind: 'sale',
        id: `cnv_${randomUUID()}`,
        key: `sale:${randomUUID()}`,
        tenantId,
        at,
        linkId: '42',
        domain: 'sho.rt',
        code: 'conv1',
        customerId: "cus_'1\\",
        eventName: 'Purchase',
        clickId: 'AbCdEfGhIjKlMnOpQrSt_-',
        amount: 0,
        currency: '',
        invoiceId: null,
        metadata: null,
        ...over,
      });
      const lead = event({ kind: 'lead', key: 'lead:cus_1' });
      const sale = event({ key: 'invoice:inv_1', amount: 4900, currency: 'EUR', invoiceId: 'inv_1' });
      const rows = [
        lead,
        sale,
        event({ amount: -900, currency: 'EUR' }),
        event({ amount: 1000, currency: 'USD' }),
        event({ kind: 'lead', key: 'lead:cus_2', code: 'conv2' }),
      ].map((e, i) => ({
        event: e,
        source,
        partition: 3,
        offset: String(10 + i),
      }));
      expect(await store.conversionsThrough(source, 3)).toBeUndefined();
      await store.writeConversions(rows);
      // The same events again (a replay, a resend): rows, not counts.
      await store.writeConversions([
        { event: lead, source, partition: 3, offset: '14' },
        { event: { ...sale, id: 'cnv_again' }, source, partition: 3, offset: '2147483648000' },
      ]);
      expect(await store.conversionsThrough(source, 3)).toBe(2147483648000n);
      expect(await store.conversionsThrough(source, 4)).toBeUndefined();
      const scope = { tenantId, domain: 'sho.rt', code: 'conv1' };
      expect(await store.conversionTotals(scope, { from: T0, to: T0 + HOUR })).toEqual({ leads: 1, sales: 3, revenue: { EUR: 4000, USD: 1000 } });
      expect(await store.conversionTotals(scope, { from: T0 + 91, to: T0 + HOUR })).toEqual({ leads: 0, sales: 0, revenue: {} });
      expect(await store.conversionTotals({ ...scope, tenantId: randomUUID() }, { from: T0, to: T0 + HOUR })).toEqual({ leads: 0, sales: 0, revenue: {} });
      // The funnel: per link, most sales first; another domain or tenant sees none of them.
      expect(await store.conversionsByLink(tenantId, null, { from: T0, to: T0 + HOUR }, 10)).toEqual([
        { domain: 'sho.rt', code: 'conv1', leads: 1, sales: 3, revenue: { EUR: 4000, USD: 1000 } },
        { domain: 'sho.rt', code: 'conv2', leads: 1, sales: 0, revenue: {} },
      ]);
      expect(await store.conversionsByLink(tenantId, 'sho.rt', { from: T0, to: T0 + HOUR }, 1)).toHaveLength(1);
      expect(await store.conversionsByLink(tenantId, 'other.example', { from: T0, to: T0 + HOUR }, 10)).toEqual([]);
      expect(await store.conversionsByLink(randomUUID(), null, { from: T0, to: T0 + HOUR }, 10)).toEqual([]);
    });

    it('copies the dimensions of a conversion’s click from its visit (else an earlier row of the click), and breaks conversions down by them beside the clicks; series per bucket (docs/analytics.md, "Conversions")', async () => {
      const tenantId = randomUUID();
      const source = freshSource();
      const l = { tenantId, domain: 'sho.rt', code: 'cdim' + randomUUID().slice(0, 6) };
      const other = { ...l, domain: 'go.acme.example' };
      const idA = 'A'.repeat(21) + '1';
      const idB = 'B'.repeat(21) + '2';
      const idOld = 'C'.repeat(21) + '3';
      const visitA = aVisit({ ...l, time: (T0 + 30) * 1000, country: 'DE', region: 'Berlin', city: 'Berlin', device: 'mobile', variant: 1, clickId: idA });
      const visitB = aVisit({ ...l, time: (T0 + 70) * 1000, country: 'FR', refererHost: 'news.example', source: 'qr', variant: 0, clickId: idB });
      await write({ visits: [visitA, visitB, aVisit({ ...l, time: (T0 + 80) * 1000, country: 'US' })] });
      // The rollups the consumer writes with those visits: the clicks per value.
      await write({
        rows: [
          aVisitorRow({ ...l, minute: T0, visitor: 1, clicks: 1, dims: [dim('countries', 'DE', 1), dim('variants', '1', 1), dim('devices', 'mobile', 1)] }),
          aVisitorRow({
            ...l,
            minute: T0 + MIN,
            visitor: 2,
            clicks: 1,
            dims: [dim('countries', 'FR', 1), dim('variants', '0', 1), dim('devices', 'desktop', 1)],
          }),
          aVisitorRow({
            ...l,
            minute: T0 + MIN,
            visitor: 3,
            clicks: 1,
            dims: [dim('countries', 'US', 1), dim('variants', '', 1), dim('devices', 'desktop', 1)],
          }),
        ],
      });
      // Found by link and minute, then click id: the wrong minute or link finds nothing.
      const found = await store.clickDimensions([
        { ...l, clickId: idA, clickAt: T0 * 1000 },
        { ...l, clickId: idB, clickAt: (T0 + MIN) * 1000 },
        { ...l, clickId: idOld, clickAt: T0 * 1000 },
        { ...other, clickId: idA, clickAt: T0 * 1000 },
      ]);
      expect(found.get(idA)).toEqual({
        country: 'DE',
        region: 'Berlin',
        city: 'Berlin',
        referer: '',
        device: 'mobile',
        browser: 'Chrome',
        os: 'Windows',
        variant: '1',
        source: 'link',
      });
      expect(found.get(idB)).toMatchObject({ country: 'FR', referer: 'news.example', variant: '0', source: 'qr' });
      expect(found.has(idOld)).toBe(false);
      expect((await store.clickDimensions([{ ...l, clickId: idA, clickAt: (T0 + 5 * MIN) * 1000 }])).size).toBe(0);
      const event = (over: Partial<ConversionEvent>): ConversionEvent => ({
        kind: 'sale',
        id: `cnv_${randomUUID()}`,
        key: `sale:${randomUUID()}`,
        at: (T0 + 90) * 1000,
        linkId: '42',
        ...l,
        customerId: 'cus_a',
        eventName: 'Purchase',
        clickId: idA,
        amount: 0,
        currency: '',
        invoiceId: null,
        metadata: null,
        ...over,
      });
      const leadA = event({ kind: 'lead', key: 'lead:cus_a' });
      const rows = [
        { event: leadA, dims: found.get(idA) },
        { event: event({ key: 'invoice:a1', amount: 4900, currency: 'EUR', invoiceId: 'a1' }), dims: found.get(idA) },
        { event: event({ key: 'invoice:a2', amount: 1000, currency: 'USD', invoiceId: 'a2', at: (T0 + HOUR + 5) * 1000 }), dims: found.get(idA) },
        { event: event({ kind: 'lead', key: 'lead:cus_b', customerId: 'cus_b', clickId: idB }), dims: found.get(idB) },
        // A click found nowhere: unknown dimensions.
        { event: event({ kind: 'lead', key: 'lead:cus_c', customerId: 'cus_c', clickId: idOld }) },
      ].map((r, i) => ({ ...r, source, partition: 0, offset: String(i) }));
      await store.writeConversions(rows);
      // The same lead again, written before its click was found (unknown): the known value wins.
      await store.writeConversions([{ event: leadA, source, partition: 0, offset: '9' }]);
      // A later sale of the click whose visit is gone finds the dimensions on the earlier rows.
      const later = await store.clickDimensions([{ ...l, clickId: idA }]);
      expect(later.get(idA)).toMatchObject({ country: 'DE', variant: '1' });

      const range = { from: T0, to: T0 + 2 * HOUR };
      expect(await store.conversionBreakdown({ tenantId, domain: null }, range, 'variants', 10)).toEqual([
        { value: '1', leads: 1, sales: 2, revenue: { EUR: 4900, USD: 1000 } },
        { value: '', leads: 1, sales: 0, revenue: {} },
        { value: '0', leads: 1, sales: 0, revenue: {} },
      ]);
      expect(await store.conversionBreakdown({ tenantId, domain: 'sho.rt', code: l.code }, range, 'cities', 1)).toEqual([
        { value: 'DE\tBerlin\tBerlin', leads: 1, sales: 2, revenue: { EUR: 4900, USD: 1000 } },
      ]);
      expect(await store.conversionBreakdown({ tenantId, domain: 'sho.rt' }, range, 'sources', 10)).toEqual([
        { value: 'link', leads: 1, sales: 2, revenue: { EUR: 4900, USD: 1000 } },
        { value: '', leads: 1, sales: 0, revenue: {} },
        { value: 'qr', leads: 1, sales: 0, revenue: {} },
      ]);
      expect(await store.conversionBreakdown({ tenantId, domain: 'go.acme.example' }, range, 'countries', 10)).toEqual([]);
      expect(await store.conversionBreakdown({ tenantId: randomUUID(), domain: null }, range, 'countries', 10)).toEqual([]);
      // Clicks per value over the same scopes, from the dim tables (a domain, the tenant).
      const clicks = await store.scopeBreakdown({ tenantId, domain: null }, minutes(T0, T0 + 2 * HOUR), 'countries', 10);
      expect(clicks.map((r) => [r.value, r.clicks]).sort()).toEqual([
        ['DE', 1],
        ['FR', 1],
        ['US', 1],
      ]);
      expect(await store.scopeBreakdown({ tenantId, domain: 'go.acme.example' }, minutes(T0, T0 + 2 * HOUR), 'countries', 10)).toEqual([]);
      // Series: per hour, and per minute within one hour.
      expect(await store.conversionSeries({ tenantId, domain: null }, { ...range, granularity: 'hour' })).toEqual([
        { time: T0, leads: 3, sales: 1, revenue: { EUR: 4900 } },
        { time: T0 + HOUR, leads: 0, sales: 1, revenue: { USD: 1000 } },
      ]);
      expect(await store.conversionSeries({ tenantId, domain: 'sho.rt', code: l.code }, { from: T0, to: T0 + HOUR, granularity: 'minute' })).toEqual([
        { time: T0 + MIN, leads: 3, sales: 1, revenue: { EUR: 4900 } },
      ]);
    });

    it('drops the raw visits of days older than their retention, by day', async () => {
      const l = link();
      const old = Date.UTC(2002, 0, 10) / 1000;
      const visits = [aVisit({ ...l, time: old * 1000 }), aVisit({ ...l, time: (old + 2 * DAY) * 1000 })];
      await write({ visits });
      const dropped = await store.dropExpired(old + 3 * DAY, { minuteDays: 3650, hourDays: 0, dayDays: 0, visitDays: 2 });
      expect(dropped).toContain('visits:20020110');
      expect(dropped).not.toContain('visits:20020112');
      const q = { tenantId: l.tenantId, domain: l.domain, code: l.code, from: 0, to: old + 3 * DAY, bots: 'include' as const, after: null, limit: 10 };
      expect(await store.visits(q)).toEqual([visits[1]]);
    });

    it('drops partitions wholly older than the retention: minutes by day, hours by month, days by year', async () => {
      const old = Date.UTC(2001, 0, 10) / 1000;
      const l = link();
      await write({ rows: [aVisitorRow({ ...l, minute: old, clicks: 1 }), aVisitorRow({ ...l, minute: old + 5 * DAY, clicks: 2 })] });
      const now = old + 6 * DAY;
      const dropped = await store.dropExpired(now, { minuteDays: 3, hourDays: 0, dayDays: 0, visitDays: 3650 });
      expect(dropped.sort()).toEqual(['link_minute:20010110']);
      const all = { ...minutes(old - DAY, now) };
      expect((await store.series(l, all)).totals.clicks).toBe(2);
      expect((await store.series(l, { ...all, granularity: 'hour' })).totals.clicks).toBe(3);
      expect((await store.series(l, { ...all, granularity: 'day' })).totals.clicks).toBe(3);
      // Rows of 2024 (the other tests) are far younger than any of these cutoffs.
      expect(await store.dropExpired(now + 400 * DAY, { minuteDays: 1, hourDays: 30, dayDays: 0, visitDays: 3650 })).toEqual(
        expect.arrayContaining(['link_hour:200101']),
      );
      expect((await store.series(l, { ...all, granularity: 'day' })).totals.clicks).toBe(3);
    });
  });
}
