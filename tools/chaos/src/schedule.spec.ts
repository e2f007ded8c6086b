import { FAULT_TARGETS, faultSchedule, isRedisFault, LONG, seeded, SHORT, zipfRank } from './schedule';

describe('chaos schedule', () => {
  it('is the same for the same seed (a run can be replayed) and differs for another', () => {
    expect(faultSchedule(42, SHORT)).toEqual(faultSchedule(42, SHORT));
    expect(faultSchedule(43, SHORT)).not.toEqual(faultSchedule(42, SHORT));
  });

  it('hits every component in the short run and keeps within the bounds of down time and gap', () => {
    const short = faultSchedule(7, SHORT);
    expect(new Set(short.map((f) => f.target))).toEqual(new Set(FAULT_TARGETS));
    for (const f of faultSchedule(7, LONG)) {
      expect(f.downMs).toBeGreaterThanOrEqual(LONG.downMs[0]);
      expect(f.downMs).toBeLessThanOrEqual(LONG.downMs[1]);
      expect(f.gapMs).toBeGreaterThanOrEqual(LONG.gapMs[0]);
    }
    expect(faultSchedule(7, LONG)).toHaveLength(LONG.faults);
  });

  it('throws network faults and the CPU hog: each target in its own ways', () => {
    const long = faultSchedule(11, { ...LONG, faults: 80 }); // as the long run plans it
    const actionsOf = (target: string) => new Set(long.filter((f) => f.target === target).map((f) => f.action));
    expect(actionsOf('mariadb-link')).toEqual(new Set(['slow', 'cut']));
    expect(actionsOf('clickhouse-link')).toEqual(new Set(['slow', 'cut']));
    expect(actionsOf('cpu')).toEqual(new Set(['hog']));
    expect(actionsOf('flood')).toEqual(new Set(['flood']));
    expect(actionsOf('redis-master')).toEqual(new Set(['kill', 'pause']));
    // A partition (iptables between processes, partition.ts) can only cut.
    expect(actionsOf('redis-partition')).toEqual(new Set(['cut']));
    expect(actionsOf('kafka-link')).toEqual(new Set(['cut']));
    // CI's short run (seed 1) has one of each, within its one round.
    expect(faultSchedule(1, SHORT).map((f) => f.target)).toEqual(
      expect.arrayContaining(['mariadb-link', 'clickhouse-link', 'redis-partition', 'kafka-link', 'cpu', 'flood']),
    );
  });

  it('fits one round of every target into the short run', () => {
    expect(SHORT.faults).toBe(FAULT_TARGETS.length);
    // Planned time (gaps and down times at their most): within the short run's 180 s of faults, with room for the recoveries.
    expect(SHORT.faults * (SHORT.downMs[1] + SHORT.gapMs[1])).toBeLessThan(180_000 * 0.75);
  });

  it('counts a Redis partition as a Redis fault (acknowledged writes of the old master may be lost), and nothing else new', () => {
    expect(FAULT_TARGETS.filter(isRedisFault)).toEqual(['redis-master', 'redis-partition']);
  });

  it('draws Zipf ranks: rank 0 most often, every rank possible', () => {
    const random = seeded(1);
    const counts = new Array(10).fill(0);
    for (let i = 0; i < 20_000; i++) counts[zipfRank(10, 1.1, random)]++;
    expect(counts[0]).toBeGreaterThan(counts[1]);
    expect(counts[1]).toBeGreaterThan(counts[9]);
    expect(counts.every((c) => c > 0)).toBe(true);
  });
});
