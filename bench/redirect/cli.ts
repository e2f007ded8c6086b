/**
 * The bench's command line: options, their defaults (`--quick` changes some), the case ids and
 * their labels. See README.md for what each option does.
 */
import { existsSync } from 'fs';
import { join } from 'path';
import { ClosedLoopLoader, commandPath, defaultClosedLoopLoader } from '@shortlink/harness';

export const CASE_IDS = [
  'fastify-bare',
  'l1-embedded',
  'l1-options',
  'l1-hot',
  'l1-kafka',
  'l1-conversions-kafka',
  'l1-conversions-off-after-kafka',
  'l1-visitors-kafka',
  'l1-options-kafka',
  'l1-rules-kafka',
  'l1-card-kafka',
  'l1-bots-kafka',
  'l1-safety-off-kafka',
  'l1-safety-kafka',
  'l1-safety-off-after-kafka',
  'card-floor',
  'redis-hot',
  'redis-many',
  'redis-kafka',
  'redis-floor',
  'db-hot',
  'db-many',
  'db-many-admit',
] as const;

export type CaseId = (typeof CASE_IDS)[number];

/** The cases that need the real stack (Redis Cluster + MariaDB; the `-kafka` ones Kafka too). */
export const STACK_CASES: readonly CaseId[] = [
  'l1-hot',
  'l1-kafka',
  'l1-conversions-kafka',
  'l1-conversions-off-after-kafka',
  'l1-visitors-kafka',
  'l1-options-kafka',
  'l1-rules-kafka',
  'l1-card-kafka',
  'l1-bots-kafka',
  'l1-safety-off-kafka',
  'l1-safety-kafka',
  'l1-safety-off-after-kafka',
  'redis-hot',
  'redis-many',
  'redis-kafka',
  'redis-floor',
  'db-hot',
  'db-many',
  'db-many-admit',
];

/** The cases `--base` measures again on the base revision's redirect ("before", in the same invocation). */
export const BEFORE_AFTER_CASES: readonly CaseId[] = ['l1-kafka', 'l1-options-kafka', 'l1-card-kafka', 'redis-kafka'];

export interface Options {
  duration: number;
  warmup: number;
  runs: number;
  connections: number;
  codes: number;
  cases: Set<string> | null;
  profile: 'auto' | 'always' | 'never';
  loader: ClosedLoopLoader;
  budgetSeconds: number;
  /** Seconds to wait for the real stack to be up before skipping its cases (default 0: look once). */
  waitStack: number;
  /** Fixed request rates (per second) of the open-loop latency runs; empty: none. */
  latencyRates: number[];
  /** Extra environment of the apps under test (`--env=K=V,K2=V2`), for A/B runs of a setting. */
  env: Record<string, string>;
  /**
   * An exported tree of an earlier revision (`--base=DIR`, with node_modules): its redirect is
   * measured on the same links, stack and bare server right after this checkout's, for the
   * before/after cases.
   */
  base: string | null;
  /** The command line's arguments, as given (recorded in the result file). */
  argv: readonly string[];
}

export const wants = (opts: Options, id: CaseId) => !opts.cases || opts.cases.has(id);

export function labelOf(id: string, opts: Options): string {
  const labels: Record<string, string> = {
    'fastify-bare': 'plain Fastify 302 (reference)',
    'l1-embedded': 'L1 hit, embedded',
    'l1-hot': 'L1 hit',
    'l1-kafka': 'L1 hit, Kafka bus',
    'l1-conversions-kafka': 'L1 hit, a link with conversion tracking (a click id per click), Kafka bus',
    'l1-conversions-off-after-kafka': 'L1 hit, Kafka bus, the plain link again (control, after)',
    'l1-options': 'L1 hit, every option (no password), embedded',
    'l1-visitors-kafka': 'L1 hit, plain link, the same visitors, Kafka bus (control)',
    'l1-options-kafka': 'L1 hit, every option (no password), Kafka bus',
    'l1-rules-kafka': 'L1 hit, 10 redirect rules none of which holds, the same visitors, Kafka bus',
    'l1-card-kafka': 'L1 hit, social card page to unfurling bots, Kafka bus',
    'l1-bots-kafka': 'L1 hit, plain link, the same unfurling bots, Kafka bus (control of the card)',
    'l1-safety-off-kafka': 'L1 hit, a checked link, safety features off, Kafka bus (control)',
    'l1-safety-kafka': 'L1 hit, the same link, feeds, dead-link checks and broken-link page on, Kafka bus',
    'l1-safety-off-after-kafka': 'L1 hit, the same link, safety features off again, Kafka bus (control, after)',
    'card-floor': 'Card floor: node:http + the redirect’s card writer (reference)',
    'redis-hot': 'Redis hit',
    'redis-many': `Redis hit, ${opts.codes} codes`,
    'redis-kafka': 'Redis hit, Kafka bus',
    'redis-floor': `Redis floor: node:http + one GET, ${opts.codes} codes (reference)`,
    'db-hot': 'database path',
    'db-many': `database path, ${opts.codes} codes`,
    'db-many-admit': `database path, ${opts.codes} codes, DB_CONCURRENCY=${opts.connections}`,
  };
  return labels[id] ?? id;
}

function parseRates(v: string): number[] {
  if (v === '' || v === 'none') return [];
  return v.split(',').map((r) => {
    const n = Number(r);
    if (!Number.isInteger(n) || n <= 0) throw new Error('--latency-rates must be positive integers (requests per second), comma-separated, or none');
    return n;
  });
}

function parseEnv(v: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of v.split(',').filter(Boolean)) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (!m) throw new Error(`--env takes KEY=VALUE pairs, comma-separated; got "${pair}"`);
    env[m[1]] = m[2];
  }
  return env;
}

export function parseOptions(argv: readonly string[]): Options {
  const flags = new Map<string, string>();
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    flags.set(m[1], m[2] ?? 'true');
  }
  const quick = flags.get('quick') === 'true';
  const num = (name: string, fallback: number) => {
    const v = flags.get(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
    return n;
  };
  const cases = flags.get('cases');
  if (cases)
    for (const c of cases.split(',')) if (!(CASE_IDS as readonly string[]).includes(c)) throw new Error(`unknown case ${c}; cases: ${CASE_IDS.join(',')}`);
  const profile = (flags.get('profile') ?? 'auto') as Options['profile'];
  if (!['auto', 'always', 'never'].includes(profile)) throw new Error('--profile must be auto|always|never');
  const loader = (flags.get('loader') ?? defaultClosedLoopLoader()) as Options['loader'];
  if (!['wrk', 'autocannon'].includes(loader)) throw new Error('--loader must be wrk|autocannon');
  if (loader === 'wrk' && commandPath('wrk') === null) throw new Error('wrk is not installed (use --loader=autocannon)');
  const base = flags.get('base') ?? null;
  if (base !== null && !existsSync(join(base, 'apps/redirect/src/main.ts')))
    throw new Error(`--base must name an exported tree with apps/redirect/src/main.ts (and node_modules); ${base} has none`);
  return {
    duration: num('duration', quick ? 3 : 10),
    warmup: num('warmup', quick ? 1 : 3),
    runs: num('runs', quick ? 1 : 3),
    connections: num('connections', 100),
    codes: num('codes', quick ? 100 : 1000),
    cases: cases ? new Set(cases.split(',')) : null,
    profile,
    loader,
    budgetSeconds: num('budget', 1500),
    waitStack: flags.has('wait-stack') ? num('wait-stack', 0) : 0,
    latencyRates: parseRates(flags.get('latency-rates') ?? '2000'),
    env: parseEnv(flags.get('env') ?? ''),
    base,
    argv,
  };
}
