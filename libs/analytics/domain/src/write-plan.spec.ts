import { CountedClick } from './aggregation';
import { ClickEvent } from './click-event';
import { dayOf, planWrites } from './write-plan';

const DAY_MS = 86_400_000;
const T = Date.UTC(2026, 11, 3, 12);
const clickAt = (offset: number, occurredAt = T): CountedClick => ({
  offset: BigInt(offset),
  event: { producer: 'p', seq: offset, occurredAt } as ClickEvent,
  facts: { device: 'desktop', browser: 'Chrome', os: 'Windows', bot: false },
  rolledCode: 'c',
  rolledReferer: '',
});
const offsets = (clicks: readonly CountedClick[]) => clicks.map((c) => Number(c.offset));

describe('planWrites (docs/analytics.md, "Exactly once")', () => {
  const tables = ['a', 'b', 'c'];

  it('writes the whole batch to every table in one write when no table holds any of it', () => {
    const clicks = [clickAt(1), clickAt(2), clickAt(2)];
    expect(planWrites(clicks, 3n, tables, new Map()).map((w) => ({ targets: w.targets, offsets: offsets(w.clicks), last: w.lastOffset }))).toEqual([
      { targets: tables, offsets: [1, 2, 2], last: 3n },
    ]);
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
    const plan = planWrites(clicks, 4n, tables, ledgers).map((w) => ({ targets: w.targets, offsets: offsets(w.clicks), last: w.lastOffset }));
    expect(plan).toEqual([
      { targets: ['b'], offsets: [2, 4], last: 4n },
      { targets: ['c'], offsets: [1, 2, 3, 4], last: 4n },
    ]);
  });

  it('cuts a large write at record boundaries, each part ending at its last offset and the last at the batch end', () => {
    const clicks = [clickAt(1), clickAt(1), clickAt(2), clickAt(3), clickAt(3), clickAt(3)];
    const plan = planWrites(clicks, 9n, ['a'], new Map(), 3).map((w) => ({ offsets: offsets(w.clicks), last: w.lastOffset }));
    expect(plan).toEqual([
      { offsets: [1, 1, 2], last: 2n },
      { offsets: [3, 3, 3], last: 9n },
    ]);
  });

  it('plans nothing when every table holds the batch', () => {
    const ledgers = new Map(tables.map((t) => [t, new Map([[dayOf(T), 5n]])]));
    expect(planWrites([clickAt(4), clickAt(5)], 5n, tables, ledgers)).toEqual([]);
  });
});
