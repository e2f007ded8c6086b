import { check } from './checker';
import { ChaosRecord } from './record';
import { verdictTable } from './verdict';

describe('chaos verdict table', () => {
  it('lists the network partitions as fault kinds of their own, with what they saw', () => {
    const record: ChaosRecord = {
      config: { seed: 7, mode: 'short', propagationBoundMs: 100, l1TtlMs: 60_000 },
      startedAt: 0,
      endedAt: 100_000,
      ops: [],
      faults: [
        { target: 'redis-partition', action: 'cut', victim: 'redis-node-7701', start: 1000, end: 6000, downMs: 3000, note: 'replica 7704 took over by +4.1 s' },
        { target: 'kafka-link', action: 'cut', victim: 'redirect-1', start: 9000, end: 11_000, downMs: 2000 },
      ],
      settled: { at: 110_000, counted: {}, incarnations: [], links: {} },
    };
    const table = verdictTable(record.config, check(record), 120_000);
    expect(table).toMatch(/^\| redis-partition cut \| 1 \| 5\.0 \| 3\.0 \|/m);
    expect(table).toMatch(/^\| kafka-link cut \| 1 \| 2\.0 \| 0\.0 \|/m);
    expect(table).toContain('#1 redis-partition redis-node-7701: replica 7704 took over by +4.1 s');
    expect(table).toContain('verdict: PASS');
  });
});
