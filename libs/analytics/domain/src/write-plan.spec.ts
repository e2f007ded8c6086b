import { dayOf, PlannableClicks, PlannedWrite, planWrites } from './write-plan';

const DAY_MS = 86_400_000;
const T = Date.UTC(2026, 11, 3, 12);
interface Click {
  readonly offset: number;
  readonly occurredAt: number;
}
const clickAt = (offset: number, occurredAt = T): Click => ({ offset, occurredAt });
/** The clicks as the plan reads them. */
const plannable = (clicks: readonly Click[]): PlannableClicks => ({
  length: clicks.length,
  offsetAt: (i) => BigInt(clicks[i].offset),
  dayAt: (i) => dayOf(clicks[i].occurredAt),
});
const plan = (clicks: readonly Click[], last: bigint, targets: readonly string[], ledgers: Map<string, Map<number, bigint>>, max?: number) =>
  planWrites(plannable(clicks), last, targets, ledgers, max).map((w: PlannedWrite) => ({
    targets: w.targets,
    offsets: [...w.positions].map((p) => clicks[p].offset),
    last: w.lastOffset,
  }));

describe('planWrites (docs/analytics.md, "Exactly once")', () => {
  const tables = ['a', 'b', 'c'];

  it('writes the whole batch to every table in one write when no table holds any of it', () => {
    const clicks = [clickAt(1), clickAt(2), clickAt(2)];
    expect(plan(clicks, 3n, tables, new Map())).toEqual([{ targets: tables, offsets: [1, 2, 2], last: 3n }]);
  });

  it('gives each table only what it lacks, per day, after a crash reached some tables (or some days of one)', () => {
    const day = dayOf(T);
    const next = dayOf(T + DAY_MS);
    const clicks = [clickAt(1), clickAt(2, T + DAY_MS), clickAt(3), clickAt(4, T + DAY_MS)];
    const ledgers = new Map([
      [
        'a',
        new Map([
          [day, 3n],
          [next, 4n],
        ]),
      ],
      ['b', new Map([[day, 3n]])],
    ]);
    expect(plan(clicks, 4n, tables, ledgers)).toEqual([
      { targets: ['b'], offsets: [2, 4], last: 4n },
      { targets: ['c'], offsets: [1, 2, 3, 4], last: 4n },
    ]);
  });

  it('cuts a large write at record boundaries, each part ending at its last offset and the last at the batch end', () => {
    const clicks = [clickAt(1), clickAt(1), clickAt(2), clickAt(3), clickAt(3), clickAt(3)];
    expect(plan(clicks, 9n, ['a'], new Map(), 3)).toEqual([
      { targets: ['a'], offsets: [1, 1, 2], last: 2n },
      { targets: ['a'], offsets: [3, 3, 3], last: 9n },
    ]);
  });

  it('plans nothing when every table holds the batch', () => {
    const ledgers = new Map(tables.map((t) => [t, new Map([[dayOf(T), 5n]])]));
    expect(plan([clickAt(4), clickAt(5)], 5n, tables, ledgers)).toEqual([]);
  });
});
