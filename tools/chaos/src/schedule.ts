/** The seeded parts of a chaos run: its random numbers, the Zipf mix of codes and the fault schedule (printed at start, replayed with --seed). */
import { FaultAction, FaultTarget } from './record';

/** mulberry32: a small seeded generator, enough to replay a schedule (not for secrets). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A rank in [0, n) with P(r) ∝ 1 / (r + 1)^s, by inverting the cumulative weights (n stays in the
 * thousands here, so a linear scan is enough).
 */
export function zipfRank(n: number, s: number, random: () => number): number {
  let total = 0;
  for (let r = 0; r < n; r++) total += 1 / Math.pow(r + 1, s);
  let u = random() * total;
  for (let r = 0; r < n; r++) {
    u -= 1 / Math.pow(r + 1, s);
    if (u <= 0) return r;
  }
  return n - 1;
}

export interface PlannedFault {
  target: FaultTarget;
  action: FaultAction;
  /** Which instance of the target: an index taken modulo the instances there are (Redis masters, MariaDB servers, app instances). */
  pick: number;
  /** How long it stays down (SIGKILL → start again) or hung (SIGSTOP → SIGCONT). */
  downMs: number;
  /** Pause before it, after the previous fault is over. */
  gapMs: number;
}

export const FAULT_TARGETS: readonly FaultTarget[] = [
  'redis-master',
  'redis-partition',
  'mariadb',
  'kafka',
  'clickhouse',
  'analytics',
  'redirect',
  'generation',
  'mariadb-link',
  'clickhouse-link',
  'kafka-link',
  'cpu',
  'flood',
];

/** The ways each kind of target is hit, drawn per fault (the CPU, the flood and a partition have one). */
const ACTIONS: Record<'process' | 'link' | 'partition' | 'machine' | 'load', readonly [FaultAction, FaultAction]> = {
  process: ['kill', 'pause'],
  link: ['slow', 'cut'],
  // iptables drops packets between processes (partition.ts): a cut, no latency.
  partition: ['cut', 'cut'],
  machine: ['hog', 'hog'],
  load: ['flood', 'flood'],
};
const kindOf = (target: FaultTarget) =>
  target === 'cpu'
    ? 'machine'
    : target === 'flood'
      ? 'load'
      : target === 'redis-partition' || target === 'kafka-link'
        ? 'partition'
        : target.endsWith('-link')
          ? 'link'
          : 'process';

/** A fault after which Redis may have lost writes it acknowledged: a master killed or hung, or cut off while its replica took over. */
export const isRedisFault = (target: FaultTarget) => target === 'redis-master' || target === 'redis-partition';

export interface ScheduleOptions {
  /** At least this many faults. */
  faults: number;
  /** Bounds of a fault's down time and of the pause before it. */
  downMs: [number, number];
  gapMs: [number, number];
}

/** One round of every target: ≤ 13 × (5 + 3.5) s planned, plus the recoveries, inside the short run's 180 s of faults. */
export const SHORT: ScheduleOptions = { faults: 13, downMs: [1500, 3500], gapMs: [2500, 5000] };
export const LONG: ScheduleOptions = { faults: 32, downMs: [2000, 8000], gapMs: [5000, 12000] };

/**
 * The faults of a run, in order. Every target comes once in each round of `FAULT_TARGETS.length`
 * faults (shuffled), so even the short run hits every component; the action is drawn per fault.
 */
export function faultSchedule(seed: number, o: ScheduleOptions): PlannedFault[] {
  const random = seeded(seed);
  const between = ([lo, hi]: [number, number]) => Math.round(lo + random() * (hi - lo));
  const out: PlannedFault[] = [];
  while (out.length < o.faults) {
    const round = [...FAULT_TARGETS];
    for (let i = round.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [round[i], round[j]] = [round[j], round[i]];
    }
    for (const target of round) {
      if (out.length >= o.faults) break;
      out.push({
        target,
        action: ACTIONS[kindOf(target)][random() < 0.5 ? 0 : 1],
        pick: Math.floor(random() * 1000),
        downMs: between(o.downMs),
        gapMs: between(o.gapMs),
      });
    }
  }
  return out;
}

const VERBS: Record<FaultAction, string> = { kill: 'SIGKILL', pause: 'SIGSTOP', slow: 'slow', cut: 'cut', hog: 'hog', flood: 'flood' };

export const describeFault = (f: PlannedFault, i: number) => `#${i + 1} after ${f.gapMs} ms: ${VERBS[f.action]} ${f.target}[${f.pick}] for ${f.downMs} ms`;
