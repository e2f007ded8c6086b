/**
 * Redirect hot-path benchmark (on demand, never in CI):
 *
 *   node -r ./tools/register.js bench/redirect/run.ts [--quick] [--duration=10] [--warmup=3] [--runs=3]
 *        [--connections=100] [--codes=1000] [--cases=bare,l1-embedded,...] [--profile=auto|always|never]
 *        [--loader=wrk|autocannon] [--budget=1500] [--wait-stack=0] [--latency-rates=2000|none]
 *
 * 127.0.0.1 only. The server under test is pinned to core 0 (`taskset -c 0`), the loader to
 * core 1. Cases (see README.md): a bare node:http 302 server (the practical ceiling, measured at
 * the start and at the end), the redirect app on L1 hits (embedded drivers and the real stack),
 * on Redis hits (L1 off) and on the database path (L1 and Redis off), one hot code and a run
 * over N codes. Each case: a warm-up, then `runs` runs; medians are reported, with the ratio to
 * the bare baseline of the same invocation. The result goes to bench/results/redirect-<date>.md.
 * Every process started here is stopped by PID at the end (SIGTERM, then SIGKILL), also on failure.
 */
import { ChildProcess, execFileSync, spawn, spawnSync } from 'child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { cpus, loadavg, tmpdir } from 'os';
import { join, relative } from 'path';
import { freePort } from '../../test/e2e/support';

const ROOT = join(__dirname, '..', '..');
const RESULTS_DIR = join(ROOT, 'bench', 'results');
const PROFILES_DIR = join(RESULTS_DIR, 'profiles');
const WRK_SCRIPT = join(__dirname, 'wrk-report.lua');
/**
 * SHORTLINK_BOOTSTRAP_API_KEY only creates a tenant when there is none yet. On a real stack that
 * already has one (e.g. made by the e2e suite), the bench uses BENCH_API_KEY if set, else the
 * key of the e2e suite (test/e2e/support.ts), else the embedded profile's dev key.
 */
const API_KEY = process.env.BENCH_API_KEY || 'sl_bench_redirect_key_0123456789abcdef';
const FALLBACK_API_KEYS = ['sl_e2e_test_key_0123456789abcdef', 'sl_embedded_dev_key_change_me'];
const DOMAIN = 'bench.shortlink.test';
const SERVER_CORE = '0';
const LOADER_CORE = '1';
const T0 = Date.now();

// ------------------------------------------------------------------------------------ options

interface Options {
  duration: number;
  warmup: number;
  runs: number;
  connections: number;
  codes: number;
  cases: Set<string> | null;
  profile: 'auto' | 'always' | 'never';
  loader: 'wrk' | 'autocannon';
  budgetSeconds: number;
  /** Seconds to wait for the real stack to be up before skipping its cases (default 0: look once). */
  waitStack: number;
  /** Fixed request rates (per second) of the open-loop latency runs; empty: none. */
  latencyRates: number[];
  /** Extra environment of the apps under test (`--env=K=V,K2=V2`), for A/B runs of a setting. */
  env: Record<string, string>;
}

const ALL_CASES = ['fastify-bare', 'l1-embedded', 'l1-hot', 'redis-hot', 'redis-many', 'redis-floor', 'db-hot', 'db-many', 'db-many-admit'] as const;

function labelOf(id: string, opts: Options): string {
  const labels: Record<string, string> = {
    'fastify-bare': 'plain Fastify 302 (reference)',
    'l1-embedded': 'L1 hit, embedded',
    'l1-hot': 'L1 hit',
    'redis-hot': 'Redis hit',
    'redis-many': `Redis hit, ${opts.codes} codes`,
    'redis-floor': `Redis floor: node:http + one GET, ${opts.codes} codes (reference)`,
    'db-hot': 'database path',
    'db-many': `database path, ${opts.codes} codes`,
    'db-many-admit': `database path, ${opts.codes} codes, DB_CONCURRENCY=${opts.connections}`,
  };
  return labels[id] ?? id;
}

/** Runs a shell command line, waiting for it; the caller reads status and output. */
const shell = (cmd: string) => spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });

/** Where `name` is on PATH, or null. */
function commandPath(name: string): string | null {
  const r = shell(`command -v ${name}`);
  return r.status === 0 ? r.stdout.trim() : null;
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

function parseOptions(argv: string[]): Options {
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
  if (cases) for (const c of cases.split(',')) if (!(ALL_CASES as readonly string[]).includes(c)) throw new Error(`unknown case ${c}; cases: ${ALL_CASES.join(',')}`);
  const profile = (flags.get('profile') ?? 'auto') as Options['profile'];
  if (!['auto', 'always', 'never'].includes(profile)) throw new Error('--profile must be auto|always|never');
  const haveWrk = commandPath('wrk') !== null;
  const loader = (flags.get('loader') ?? (haveWrk ? 'wrk' : 'autocannon')) as Options['loader'];
  if (loader === 'wrk' && !haveWrk) throw new Error('wrk is not installed (use --loader=autocannon)');
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
  };
}

// ------------------------------------------------------------------------------------ processes

const log = (msg: string) => process.stderr.write(`[bench ${((Date.now() - T0) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Proc {
  private out = '';
  readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    const keep = (d: Buffer) => {
      this.out += d.toString();
      if (this.out.length > 200_000) this.out = this.out.slice(-100_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.once('error', (e) => {
        this.out += `\n[spawn error] ${e.message}\n`;
        resolve();
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null && this.child.pid !== undefined;
  }

  output(): string {
    return this.out;
  }

  /** SIGTERM, then SIGKILL after `graceMs`, by this process's own PID. */
  async stop(graceMs = 8_000): Promise<void> {
    if (!this.alive) return;
    try {
      process.kill(this.pid, 'SIGTERM');
    } catch {
      return;
    }
    const timedOut = await Promise.race([this.exited.then(() => false), sleep(graceMs).then(() => true)]);
    if (timedOut && this.alive) {
      log(`${this.name} (pid ${this.pid}) did not stop on SIGTERM, sending SIGKILL`);
      try {
        process.kill(this.pid, 'SIGKILL');
      } catch {
        // gone already
      }
      await Promise.race([this.exited, sleep(3_000)]);
    }
  }
}

const procs: Proc[] = [];

/** Starts a command (optionally pinned to a core with taskset, which execs it: the PID is the command's own). */
function start(name: string, command: string, args: string[], env: Record<string, string>, core?: string): Proc {
  const [cmd, argv] = core === undefined ? [command, args] : ['taskset', ['-c', core, command, ...args]];
  const child = spawn(cmd, argv, { cwd: ROOT, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const p = new Proc(name, child);
  procs.push(p);
  return p;
}

async function stopAll(): Promise<void> {
  const running = procs.filter((p) => p.alive).reverse();
  await Promise.all(running.map((p) => p.stop()));
}

/** The parent's environment without any shortlink setting, so only what a case sets applies. */
function cleanEnv(): Record<string, string> {
  const drop =
    /^(NODE_ENV|LOG_LEVEL|HOST|SHORTLINK_|CODE_STRATEGY|ID_BLOCK_|DB_|SHARD_|SQLITE_|MYSQL_|CACHE_|REDIS_|MEMORY_CACHE_|BUS_|KAFKA_|CLICK_|OLAP_|CLICKHOUSE_|ANALYTICS_|REDIRECT_|GENERATION_|BLOOM_|HOT_|LOCK_|BREAKER_|RATE_LIMIT_|SNAPSHOT_|NODE_OPTIONS$)/;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !drop.test(k)) env[k] = v;
  return env;
}

async function waitFor(what: string, proc: Proc, probe: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!proc.alive) throw new Error(`${proc.name} exited while waiting for ${what}:\n${proc.output().slice(-4000)}`);
    try {
      if (await probe()) return;
    } catch (e) {
      last = (e as Error).message;
    }
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (${last})` : ''}:\n${proc.output().slice(-4000)}`);
}

/** The redirect's own count of where lookups were answered (shortlink_redirect_lookup_total by source). */
async function lookups(base: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('shortlink_redirect_lookup_total{')) continue;
    const source = /source="([^"]+)"/.exec(line)?.[1];
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (source && Number.isFinite(value)) out.set(source, (out.get(source) ?? 0) + value);
  }
  return out;
}

function servedFrom(before: Map<string, number>, after: Map<string, number>): string {
  const diff = [...after.entries()].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).filter(([, v]) => v > 0);
  const total = diff.reduce((a, [, v]) => a + v, 0);
  if (!total) return 'none';
  return diff
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v === total ? '100' : (v / total) * 100 < 0.1 ? '<0.1' : ((v / total) * 100).toFixed(1)}%`)
    .join(', ');
}

const healthy = (base: string) => async () => (await fetch(`${base}/health`, { signal: AbortSignal.timeout(3000) })).status === 200;

// ------------------------------------------------------------------------------------ load

interface RunResult {
  rps: number;
  requests: number;
  p50ms: number;
  p99ms: number;
  errors: number;
  /** CPU used by the server process during the run, in % of one core. */
  serverCpu: number | null;
  /** 1-minute load average when the run ended. */
  load1: number;
  /** rps of the bare run just before this one (case runs only). */
  bareRps?: number;
}

let clkTck = 100;

function cpuTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

let tmpRoot = '';

async function load(opts: Options, base: string, paths: string[], seconds: number, serverPid: number): Promise<RunResult> {
  let proc: Proc;
  if (opts.loader === 'wrk') {
    const args = ['-t1', `-c${opts.connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', WRK_SCRIPT];
    if (paths.length === 1) args.push(`${base}${paths[0]}`);
    else {
      const file = join(tmpRoot, `paths-${paths.length}.txt`);
      if (!existsSync(file)) writeFileSync(file, paths.join('\n') + '\n');
      args.push(`${base}/`, '--', file);
    }
    proc = start('wrk', 'wrk', args, {}, LOADER_CORE);
  } else {
    const job = JSON.stringify({ url: base, paths, connections: opts.connections, duration: seconds });
    proc = start('autocannon', process.execPath, [join(__dirname, 'autocannon-runner.js')], { BENCH_AC_JOB: job }, LOADER_CORE);
  }
  const before = cpuTicks(serverPid);
  const t = Date.now();
  const killer = setTimeout(() => void proc.stop(2_000), (seconds + 30) * 1000);
  await proc.exited;
  clearTimeout(killer);
  const after = cpuTicks(serverPid);
  const wall = (Date.now() - t) / 1000;
  const line = proc
    .output()
    .split('\n')
    .find((l) => l.startsWith('WRK_JSON ') || l.startsWith('AC_JSON '));
  if (!line) throw new Error(`loader produced no result (exit ${proc.child.exitCode}):\n${proc.output().slice(-3000)}`);
  const r = JSON.parse(line.slice(line.indexOf(' ') + 1)) as {
    requests: number;
    duration_us: number;
    errors: Record<string, number>;
    latency_us: { p50: number; p99: number };
  };
  const errors = Object.values(r.errors).reduce((a, b) => a + b, 0);
  return {
    // answered redirects per second: responses with status >= 400 (counted in requests) are left out
    rps: Math.max(0, r.requests - (r.errors.status ?? 0)) / (r.duration_us / 1e6),
    requests: r.requests,
    p50ms: r.latency_us.p50 / 1000,
    p99ms: r.latency_us.p99 / 1000,
    errors,
    serverCpu: before !== null && after !== null ? ((after - before) / clkTck / wall) * 100 : null,
    load1: loadavg()[0],
  };
}

/** Result of an open-loop run: requests are sent on a fixed schedule, whatever the answers do. */
interface OpenLoopResult {
  rate: number;
  /** Requests per second answered with a redirect. */
  answered: number;
  p50ms: number;
  p90ms: number;
  p99ms: number;
  maxms: number;
  errors: number;
}

const VEGETA_MODULE = 'github.com/tsenart/vegeta/v12@v12.13.0';
let vegetaPath: string | null | undefined;

/** vegeta from PATH or the Go bin dir; installed with `go install` (the Go proxy) when missing. */
function findVegeta(): string | null {
  if (vegetaPath !== undefined) return vegetaPath;
  const gobin = () => {
    const [bin, path] = shell('go env GOBIN GOPATH').stdout.split('\n');
    return bin || (path ? join(path, 'bin') : '');
  };
  const look = () => {
    const onPath = commandPath('vegeta');
    if (onPath) return onPath;
    const dir = gobin();
    return dir && existsSync(join(dir, 'vegeta')) ? join(dir, 'vegeta') : null;
  };
  vegetaPath = look();
  if (!vegetaPath && commandPath('go')) {
    log(`vegeta not found: go install ${VEGETA_MODULE} (about a minute)`);
    const r = shell(`go install ${VEGETA_MODULE} 2>&1`);
    if (r.status !== 0) log(`go install failed:\n${r.stdout.slice(-2000)}`);
    vegetaPath = look();
  }
  return vegetaPath;
}

/**
 * Open-loop latency (vegeta, the loader core, one Go thread): `rate` requests per second on at
 * most `connections` keep-alive connections for `seconds`, on a fixed schedule. Unlike wrk's
 * closed loop, a slow answer does not hold back the next request, so the percentiles are the
 * latency a client sees at that load (no coordinated omission) instead of queueing at saturation.
 */
async function openLoop(opts: Options, base: string, paths: string[], rate: number, seconds: number): Promise<OpenLoopResult> {
  const vegeta = findVegeta();
  if (!vegeta) throw new Error('vegeta is not available (no Go toolchain to install it)');
  const targets = join(tmpRoot, `vegeta-${base.replace(/\W+/g, '_')}-${paths.length}.txt`);
  if (!existsSync(targets)) writeFileSync(targets, paths.map((p) => `GET ${base}${p}`).join('\n') + '\n');
  const c = String(opts.connections);
  // Every run is a new vegeta with new connections, and while it opens them (about the first
  // 1.5 s here) latencies reach 10–30 ms on the bare server too. The first `opts.warmup` seconds
  // of each run are sent but left out, so the percentiles are those of 100 established connections.
  const warm = opts.warmup;
  const csv = join(tmpRoot, 'vegeta-results.csv');
  // -redirects=-1: a 302 is the answer, not something to follow.
  const attack = [vegeta, 'attack', `-rate=${rate}/s`, `-duration=${seconds + warm}s`, `-targets=${targets}`, `-connections=${c}`, `-max-connections=${c}`, `-workers=${c}`, '-redirects=-1', '-timeout=5s'];
  const cmd = `${attack.map((a) => `'${a}'`).join(' ')} | '${vegeta}' encode --to csv > '${csv}'`;
  const proc = start('vegeta', 'sh', ['-c', cmd], { GOMAXPROCS: '1' }, LOADER_CORE);
  const killer = setTimeout(() => void proc.stop(2_000), (seconds + warm + 30) * 1000);
  await proc.exited;
  clearTimeout(killer);
  // CSV columns: timestamp (ns), status code, latency (ns), bytes out, bytes in, error, ...
  const rows = existsSync(csv)
    ? readFileSync(csv, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(',', 3))
        .map(([t, code, latency]) => ({ t: Number(t), code: Number(code), latency: Number(latency) }))
    : [];
  rmSync(csv, { force: true });
  if (!rows.length) throw new Error(`vegeta produced no results (exit ${proc.child.exitCode}):\n${proc.output().slice(-3000)}`);
  const t0 = rows.reduce((m, r) => Math.min(m, r.t), Infinity);
  const kept = rows.filter((r) => r.t >= t0 + warm * 1e9);
  const latencies = kept.map((r) => r.latency).sort((a, b) => a - b);
  const pct = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] / 1e6 : 0);
  const ok = kept.filter((r) => r.code >= 300 && r.code < 400).length;
  return {
    rate,
    answered: ok / seconds,
    p50ms: pct(0.5),
    p90ms: pct(0.9),
    p99ms: pct(0.99),
    maxms: latencies.length ? latencies[latencies.length - 1] / 1e6 : 0,
    errors: kept.length - ok,
  };
}

interface LatencyResult {
  rate: number;
  runs: OpenLoopResult[];
  bareRuns: OpenLoopResult[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** What the p99 target is judged on: the median p99 of a rate's open-loop runs. */
const medianP99 = (l: LatencyResult) => median(l.runs.map((x) => x.p99ms));
const bareMedianP99 = (l: LatencyResult) => median(l.bareRuns.map((x) => x.p99ms));

/**
 * The p99 < 5 ms verdict of one rate. When the bare server, paired with the case in the same
 * minutes, is itself at 5 ms or more, the machine decides the tail and the target cannot be shown
 * either way: that is reported as such, with the case's p99 next to the bare one, not as "missed".
 */
function p99Verdict(l: LatencyResult): string {
  const p99 = medianP99(l);
  if (p99 < 5) return 'met';
  const bare = bareMedianP99(l);
  return bare >= 5 ? `undecided: the bare server's own p99 was ${fmt(bare)} ms` : '**missed**';
}

// ------------------------------------------------------------------------------------ cases

interface CaseResult {
  id: string;
  label: string;
  setup: string;
  codes: number;
  runs: RunResult[];
  rps: number;
  p50ms: number;
  p99ms: number;
  errors: number;
  requests: number;
  serverCpu: number | null;
  /** Target ratio to the bare baseline, if the issue sets one. */
  targetRatio?: number;
  /** Whether the p99 < 5 ms target applies. */
  p99Target?: boolean;
  /** Where the redirect says the measured lookups were answered (from its /metrics). */
  served?: string;
  /** Median rps of the bare runs paired with this case's runs, and the median of the per-run ratios. */
  bareRps?: number;
  ratio?: number;
  /** Open-loop runs at the fixed rates, each paired with a bare run at the same rate. */
  latency?: LatencyResult[];
  /** Runs with the bare server loaded at the same time on the same core (see concurrentPair). */
  concurrent?: ConcurrentPair[];
  /** Median of the concurrent pairs' cost ratios: the drift-free estimate of "× bare". */
  concurrentRatio?: number;
}

/**
 * The case and the bare server loaded at the same moment, both on the server core, each by its own
 * loader on the loader core. The ratio of sequential runs moves with the machine's speed from one
 * 10 s window to the next (the bare server alone ranged 18–29k rps within minutes here); run side
 * by side, both see the same machine. Each gets about half the core, so the ratio is taken per CPU
 * second: (case rps / case CPU) / (bare rps / bare CPU), the bare cost per request over the case's.
 */
interface ConcurrentPair {
  rps: number;
  bareRps: number;
  cpu: number | null;
  bareCpu: number | null;
  costRatio: number;
}

interface Skipped {
  id: string;
  label: string;
  reason: string;
}

/** The bare server, kept running for the whole invocation so every measured run is paired with a bare run. */
interface Bare {
  base: string;
  pid: number;
  runs: RunResult[];
}

const BARE_PATH = ['/AbCd123'];

/**
 * A case: warm-up, then `runs` pairs of (bare run, case run) back to back, so the ratio to the
 * ceiling is taken against the machine as it was at that moment (the machine is shared and noisy).
 */
async function measure(
  opts: Options,
  bare: Bare,
  id: string,
  setup: string,
  base: string,
  paths: string[],
  serverPid: number,
  extra: Partial<CaseResult> = {},
  countLookups = true,
): Promise<CaseResult> {
  log(`${id}: warm-up ${opts.warmup}s (${paths.length} code${paths.length > 1 ? 's' : ''})`);
  const w = await load(opts, base, paths, opts.warmup, serverPid);
  if (w.errors > 0) log(`${id}: warm-up had ${w.errors} errors of ${w.requests}`);
  const before = countLookups ? await lookups(base) : null;
  const runs: RunResult[] = [];
  const bareRuns: RunResult[] = [];
  for (let i = 0; i < opts.runs; i++) {
    const b = await load(opts, bare.base, BARE_PATH, opts.duration, bare.pid);
    bare.runs.push(b);
    bareRuns.push(b);
    const r = await load(opts, base, paths, opts.duration, serverPid);
    r.bareRps = b.rps;
    log(
      `${id}: run ${i + 1}/${opts.runs}: ${Math.round(r.rps)} rps, p50 ${r.p50ms.toFixed(2)} ms, p99 ${r.p99ms.toFixed(2)} ms, errors ${r.errors}, CPU ${r.serverCpu?.toFixed(0) ?? '?'}%` +
        ` | paired bare ${Math.round(b.rps)} rps, p99 ${b.p99ms.toFixed(2)} ms (×${(r.rps / b.rps).toFixed(2)})`,
    );
    runs.push(r);
  }
  const concurrent: ConcurrentPair[] = [];
  if (extra.targetRatio !== undefined)
    for (let i = 0; i < opts.runs; i++) {
      const [b, r] = await Promise.all([load(opts, bare.base, BARE_PATH, opts.duration, bare.pid), load(opts, base, paths, opts.duration, serverPid)]);
      const share = r.serverCpu && b.serverCpu ? b.serverCpu / r.serverCpu : 1;
      const pair = { rps: r.rps, bareRps: b.rps, cpu: r.serverCpu, bareCpu: b.serverCpu, costRatio: (r.rps / b.rps) * share };
      concurrent.push(pair);
      log(
        `${id}: concurrent with bare, run ${i + 1}/${opts.runs}: ${Math.round(r.rps)} rps at CPU ${r.serverCpu?.toFixed(0) ?? '?'}% | bare ${Math.round(b.rps)} rps at CPU ${b.serverCpu?.toFixed(0) ?? '?'}% (cost ×${pair.costRatio.toFixed(3)})`,
      );
    }
  const cpu = runs.map((r) => r.serverCpu).filter((c): c is number => c !== null);
  const served = before ? servedFrom(before, await lookups(base)) : undefined;
  if (served) log(`${id}: lookups answered from ${served}`);
  const latency: LatencyResult[] = [];
  if (extra.p99Target)
    for (const rate of opts.latencyRates) {
      const l: LatencyResult = { rate, runs: [], bareRuns: [] };
      for (let i = 0; i < opts.runs; i++) {
        const b = await openLoop(opts, bare.base, BARE_PATH, rate, opts.duration);
        const r = await openLoop(opts, base, paths, rate, opts.duration);
        l.bareRuns.push(b);
        l.runs.push(r);
        log(
          `${id}: open loop ${rate}/s, run ${i + 1}/${opts.runs}: p50 ${r.p50ms.toFixed(2)} ms, p99 ${r.p99ms.toFixed(2)} ms, max ${r.maxms.toFixed(1)} ms, ` +
            `answered ${Math.round(r.answered)}/s, errors ${r.errors} | paired bare p99 ${b.p99ms.toFixed(2)} ms`,
        );
      }
      latency.push(l);
    }
  return {
    latency: latency.length ? latency : undefined,
    concurrent: concurrent.length ? concurrent : undefined,
    concurrentRatio: concurrent.length ? median(concurrent.map((c) => c.costRatio)) : undefined,
    id,
    label: labelOf(id, opts),
    setup,
    codes: paths.length,
    runs,
    rps: median(runs.map((r) => r.rps)),
    p50ms: median(runs.map((r) => r.p50ms)),
    p99ms: median(runs.map((r) => r.p99ms)),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    requests: runs.reduce((a, r) => a + r.requests, 0),
    serverCpu: cpu.length ? median(cpu) : null,
    bareRps: median(bareRuns.map((r) => r.rps)),
    ratio: median(runs.map((r) => r.rps / r.bareRps!)),
    served,
    ...extra,
  };
}

interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; children?: number[] }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface ProfileSummary {
  caseId: string;
  file: string;
  rps: number;
  text: string;
}

/** Base env of the apps: ports, domain, data dir, the bench's fixed settings; then the case's own, then `--env`. */
function appEnv(dataDir: string, extra: Record<string, string>, fromCommandLine: Record<string, string>): Record<string, string> {
  return {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    SHORTLINK_DEFAULT_DOMAIN: DOMAIN,
    SHORTLINK_DATA_DIR: dataDir,
    SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
    BUS_DRIVER: 'memory',
    RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    RATE_LIMIT_GLOBAL_PER_SECOND: '0',
    ...extra,
    ...fromCommandLine,
  };
}

interface Link {
  code: string;
  url: string;
}

/** Starts the generation app (unpinned, setup only), creates `count` links, stops it. */
async function createLinks(env: Record<string, string>, count: number, tag: string): Promise<Link[]> {
  const port = await freePort();
  const gen = start('generation', process.execPath, ['-r', './tools/register.js', 'apps/generation/src/main.ts'], { ...env, GENERATION_PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor('generation /health', gen, healthy(base));
    let apiKey = '';
    for (const key of [API_KEY, ...FALLBACK_API_KEYS]) {
      const res = await fetch(`${base}/api/v1/links/zzzzzzzz`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      if (res.status !== 401) {
        apiKey = key;
        break;
      }
    }
    if (!apiKey) throw new Error('no usable API key: the meta DB already has a tenant, so SHORTLINK_BOOTSTRAP_API_KEY was ignored; set BENCH_API_KEY to a key of that stack');
    if (apiKey !== API_KEY) log(`generation: the bootstrap key was not accepted (a tenant already exists); using ${apiKey.slice(0, 10)}… instead`);
    const links: Link[] = new Array(count);
    let next = 0;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        const url = `https://example.com/bench/${tag}/${i}?ref=redirect-bench`;
        for (let attempt = 0; ; attempt++) {
          const res = await fetch(`${base}/api/v1/links`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
            body: JSON.stringify({ url }),
            signal: AbortSignal.timeout(10_000),
          });
          const body = (await res.json()) as { code?: string };
          if (res.status === 201 && body.code) {
            links[i] = { code: body.code, url };
            break;
          }
          if (attempt >= 5) throw new Error(`POST /api/v1/links: ${res.status} ${JSON.stringify(body)}`);
          await sleep(200 * (attempt + 1));
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    return links;
  } finally {
    await gen.stop();
  }
}

interface Redirect {
  proc: Proc;
  base: string;
}

/** The V8 flags `npm run start:redirect` runs the redirect with (e.g. the young-generation size), so the bench measures the shipped setup. */
const REDIRECT_NODE_FLAGS: readonly string[] = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts['start:redirect'] as string)
  .split(/\s+/)
  .filter((a) => /^--max-(semi|old)-space-size=\d+$/.test(a));

async function startRedirect(env: Record<string, string>, name: string, profileFile: string): Promise<Redirect> {
  const port = await freePort();
  const args = [...REDIRECT_NODE_FLAGS, '-r', './tools/register.js', '-r', './bench/redirect/profile-hook.ts', 'apps/redirect/src/main.ts'];
  const proc = start(name, process.execPath, args, { ...env, REDIRECT_PORT: String(port), BENCH_CPU_PROFILE_FILE: profileFile }, SERVER_CORE);
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${name} /health`, proc, healthy(base));
  return { proc, base };
}

/** Every link must answer 302 with its own target before it is measured. */
async function verify(base: string, links: Link[], what: string): Promise<void> {
  for (const l of links) {
    let res: Response | undefined;
    for (let attempt = 0; attempt < 20; attempt++) {
      res = await fetch(`${base}/${l.code}`, { redirect: 'manual', signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      if (res.status === 302) break;
      await sleep(250); // e.g. a Bloom filter still being built on a fresh in-memory store
    }
    if (res!.status !== 302 || res!.headers.get('location') !== l.url) {
      throw new Error(`${what}: GET /${l.code} answered ${res!.status} location=${res!.headers.get('location')}, expected 302 ${l.url}`);
    }
  }
}

async function profileRun(opts: Options, r: Redirect, caseId: string, path: string[], file: string): Promise<ProfileSummary | null> {
  log(`${caseId}: CPU profile of the redirect process over a ${opts.duration}s run (not counted in the table)`);
  rmSync(file, { force: true });
  process.kill(r.proc.pid, 'SIGWINCH');
  await sleep(500);
  const run = await load(opts, r.base, path, opts.duration, r.proc.pid);
  process.kill(r.proc.pid, 'SIGWINCH');
  const deadline = Date.now() + 20_000;
  while (!existsSync(file) && Date.now() < deadline) await sleep(200);
  if (!existsSync(file)) {
    log(`${caseId}: no profile written:\n${r.proc.output().slice(-2000)}`);
    return null;
  }
  return { caseId, file, rps: run.rps, text: summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as Profile) };
}

// ------------------------------------------------------------------------------------ profile

function area(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native / V8 builtins)';
  if (url.startsWith('node:')) return url.startsWith('node:internal/') ? `node:${url.slice('node:internal/'.length).split('/')[0]}` : url;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const path = url.startsWith('file://') ? url.slice(7) : url;
  return path.startsWith(ROOT) ? relative(ROOT, path) : path;
}

function location(url: string, line: number): string {
  if (!url) return '';
  const path = url.startsWith('file://') ? url.slice(7) : url;
  const nm = path.lastIndexOf('/node_modules/');
  const shown = nm >= 0 ? path.slice(nm + '/node_modules/'.length) : path.startsWith(ROOT) ? relative(ROOT, path) : path;
  return `${shown}:${line + 1}`;
}

/** Self time per function and per module/package, and time with a module on the stack (inclusive). */
function summariseProfile(p: Profile): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));

  const fnSelf = new Map<string, { name: string; where: string; area: string; us: number }>();
  const areaSelf = new Map<string, number>();
  const areaIncl = new Map<string, number>();
  const fnIncl = new Map<string, number>();
  let total = 0;
  let idle = 0;
  let profiler = 0;
  // Samples under the profile hook itself (Profiler.stop serialising the profile) are left out.
  const underProfiler = (id: number): boolean => {
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) if (byId.get(cur)!.callFrame.url.includes('profile-hook')) return true;
    return false;
  };
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const name = functionName || '(anonymous)';
    if (name === '(idle)') {
      idle += us;
      continue;
    }
    if (underProfiler(id)) {
      profiler += us;
      continue;
    }
    total += us;
    const a = area(url, name);
    const key = `${name}|${url}|${lineNumber}`;
    const f = fnSelf.get(key) ?? { name, where: location(url, lineNumber), area: a, us: 0 };
    f.us += us;
    fnSelf.set(key, f);
    areaSelf.set(a, (areaSelf.get(a) ?? 0) + us);
    // inclusive: every area / project function on this node's stack, counted once per sample
    const areas = new Set<string>();
    const fns = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (cf.functionName === '(root)') break;
      const ca = area(cf.url, cf.functionName || '(anonymous)');
      areas.add(ca);
      if (cf.url.includes('/libs/') || cf.url.includes('/apps/')) fns.add(`${cf.functionName || '(anonymous)'} (${location(cf.url, cf.lineNumber)})`);
    }
    for (const a2 of areas) areaIncl.set(a2, (areaIncl.get(a2) ?? 0) + us);
    for (const f2 of fns) fnIncl.set(f2, (fnIncl.get(f2) ?? 0) + us);
  }
  const pct = (us: number) => `${((us / total) * 100).toFixed(1)}%`;
  const ms = (us: number) => (us / 1000).toFixed(0);
  const lines: string[] = [];
  const gaps = [...p.timeDeltas].sort((a, b) => b - a);
  lines.push(
    `Profiled ${((p.endTime - p.startTime) / 1e6).toFixed(1)} s; busy ${ms(total)} ms, idle ${ms(idle)} ms (includes the ~0.5 s before the loader starts), profiler itself ${ms(profiler)} ms (left out). Percentages are of busy time. ` +
      `Longest gaps between samples (the process or its sampler not scheduled, i.e. machine noise): ${gaps
        .slice(0, 5)
        .map((g) => `${(g / 1000).toFixed(1)} ms`)
        .join(', ')}.`,
    '',
  );
  lines.push('Top self time by function:', '', '| # | function | where | module | self ms | self % |', '|---|---|---|---|---:|---:|');
  [...fnSelf.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, 25)
    .forEach((f, i) => lines.push(`| ${i + 1} | \`${f.name}\` | ${f.where || '—'} | ${f.area} | ${ms(f.us)} | ${pct(f.us)} |`));
  lines.push('', 'Self time by module / package, and share of samples with it anywhere on the stack (inclusive):', '', '| module | self % | inclusive % |', '|---|---:|---:|');
  [...areaSelf.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)
    .forEach(([a, us]) => lines.push(`| ${a} | ${pct(us)} | ${pct(areaIncl.get(a) ?? us)} |`));
  const heavyIncl = [...areaIncl.entries()].filter(([a]) => !areaSelf.has(a) || (areaSelf.get(a) ?? 0) < (areaIncl.get(a) ?? 0) * 0.5).sort((a, b) => b[1] - a[1]);
  if (heavyIncl.length) {
    lines.push('', 'Modules that are mostly on the stack rather than in self time (callers of the cost):', '', '| module | inclusive % |', '|---|---:|');
    heavyIncl.slice(0, 12).forEach(([a, us]) => lines.push(`| ${a} | ${pct(us)} |`));
  }
  // Who calls the biggest self-time entries (e.g. which module issues the socket writes).
  const top = [...fnSelf.entries()].sort((a, b) => b[1].us - a[1].us).filter(([, f]) => !f.name.startsWith('(')).slice(0, 6);
  lines.push('', 'Callers of the biggest self-time entries (first frames up the stack, by share of that entry):', '');
  for (const [key, f] of top) {
    const chains = new Map<string, number>();
    for (const [id, us] of self) {
      const cf = byId.get(id)!.callFrame;
      if (`${cf.functionName || '(anonymous)'}|${cf.url}|${cf.lineNumber}` !== key) continue;
      // the direct caller, then the first frame outside node's own internals (who started it)
      const chain: string[] = [];
      let origin = '';
      for (let cur = parent.get(id); cur !== undefined; cur = parent.get(cur)) {
        const c = byId.get(cur)!.callFrame;
        if (c.functionName === '(root)') break;
        const frame = `${c.functionName || '(anonymous)'} (${location(c.url, c.lineNumber) || 'native'})`;
        if (!chain.length) chain.push(frame);
        if (c.url && !c.url.startsWith('node:')) {
          origin = frame;
          break;
        }
      }
      if (origin && origin !== chain[0]) chain.push(`… ${origin}`);
      const k = chain.join(' ← ');
      chains.set(k, (chains.get(k) ?? 0) + us);
    }
    const best = [...chains.entries()].sort((a, b) => b[1] - a[1]).slice(0, 2);
    lines.push(`- \`${f.name}\` (${pct(f.us)}${f.where ? `, ${f.where}` : ''}): ${best.map(([c, us]) => `${((us / f.us) * 100).toFixed(0)}% ← ${c || '(top level)'}`).join('; ')}`);
  }
  lines.push('', 'Project functions (libs/, apps/) by inclusive time:', '', '| function | inclusive % |', '|---|---:|');
  [...fnIncl.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)
    .forEach(([f, us]) => lines.push(`| \`${f}\` | ${pct(us)} |`));
  return lines.join('\n');
}

// ------------------------------------------------------------------------------------ stack

function readStackEnv(): Record<string, string> | null {
  const file = join(ROOT, 'deploy', 'local', '.run', 'stack.env');
  if (!existsSync(file)) return null;
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^export ([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]] = m[2].replace(/^"(.*)"$/, '$1');
  }
  return env;
}

/**
 * Uses `stack.sh status` (read-only): the stack counts as up when all six Redis nodes and both
 * MariaDB instances are. `pids` identifies this incarnation: another session restarting a piece
 * (this machine is shared) changes it, and the cases measured across that are retried.
 */
function stackState(): { up: boolean; detail: string; env: Record<string, string> | null; pids: string } {
  const env = readStackEnv();
  if (!env) return { up: false, detail: 'deploy/local/.run/stack.env not found (the stack was never started)', env: null, pids: '' };
  const r = spawnSync('bash', [join(ROOT, 'deploy', 'local', 'stack.sh'), 'status'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  const lines = `${r.stdout}`.split('\n').filter((l) => /^\s*(redis-node-|mysql-)/.test(l));
  const down = lines.filter((l) => !/\sup\b/.test(l));
  const pids = lines.map((l) => l.trim().split(/\s+/).slice(0, 2).join('=')).join(' ');
  if (lines.length < 8 || down.length) return { up: false, detail: `stack.sh status: ${down.length ? down.map((l) => l.trim().replace(/\s+/g, ' ')).join('; ') : (r.stderr || r.stdout || 'no output').trim()}`, env, pids };
  return { up: true, detail: 'Redis Cluster (6 nodes) and MariaDB (2 instances) up', env: readStackEnv(), pids };
}

async function waitStackUp(seconds: number): Promise<ReturnType<typeof stackState>> {
  let s = stackState();
  for (const until = Date.now() + seconds * 1000; !s.up && Date.now() < until; s = stackState()) {
    log(`real stack not up (${s.detail}); waiting up to ${seconds}s`);
    await sleep(5000);
  }
  return s;
}

// ------------------------------------------------------------------------------------ report

function machineFacts(opts: Options, stack: string): string[] {
  const sh = (cmd: string) => {
    try {
      return execFileSync('sh', ['-c', cmd], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    } catch (e) {
      return `${(e as { stdout?: string }).stdout ?? ''}${(e as { stderr?: string }).stderr ?? ''}`.trim();
    }
  };
  const model = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? '?';
  const loader = opts.loader === 'wrk' ? sh('wrk -v 2>&1 | head -n1') : `autocannon ${JSON.parse(readFileSync(join(ROOT, 'node_modules', 'autocannon', 'package.json'), 'utf8')).version}`;
  return [
    `- date: ${new Date(T0).toISOString()} (start)`,
    `- nproc: ${sh('nproc')}`,
    `- kernel (uname -r): ${sh('uname -r')}`,
    `- CPU: ${model}`,
    `- node: ${process.version}`,
    `- loader: ${loader}`,
    `- load average (1/5/15 min) at start: ${startLoad}; at end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    `- code: ${sh('git rev-parse --short HEAD')}${sh('git status --porcelain -- libs apps tools') ? ' (with local changes in libs/apps/tools)' : ''}`,
    `- real stack: ${stack}`,
    `- redirect node flags (from \`npm run start:redirect\`): ${REDIRECT_NODE_FLAGS.join(' ') || 'none'}`,
    `- settings: ${opts.connections} connections, ${opts.warmup} s warm-up + ${opts.runs} × ${opts.duration} s per case (each run paired with a bare run), ${opts.codes} codes for the "many" cases`,
  ];
}

let startLoad = '';

const fmt = (n: number, d = 2) => n.toFixed(d);

function table(results: Array<CaseResult | Skipped>): string {
  const rows = [
    '| case | setup | codes | rps (median) | rps min–max | p50 ms | p99 ms | paired bare rps | × bare | × bare, side by side | target | server CPU | served from | errors |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|',
  ];
  for (const r of results) {
    if ('reason' in r) {
      rows.push(`| ${r.label} | — | — | skipped | — | — | — | — | — | — | — | — | — | ${r.reason} |`);
      continue;
    }
    const ratio = r.ratio ?? null;
    const judged = r.concurrentRatio ?? ratio;
    const targets: string[] = [];
    if (r.targetRatio !== undefined && judged !== null) targets.push(`≥ ${r.targetRatio}× ${judged >= r.targetRatio ? 'met' : '**missed**'}${r.concurrentRatio !== undefined ? ' (side by side)' : ''}`);
    if (r.p99Target && r.latency?.length) {
      const verdicts = r.latency.map(p99Verdict);
      const verdict = verdicts.find((v) => v.startsWith('**')) ?? verdicts.find((v) => v !== 'met') ?? 'met';
      targets.push(`p99 < 5 ms ${verdict} (open loop, ${r.latency.map((l) => l.rate).join(' and ')}/s)`);
    } else if (r.p99Target) targets.push(`p99 < 5 ms ${r.p99ms < 5 ? 'met' : '**missed**'} (closed loop)`);
    const rpsRange = `${Math.round(Math.min(...r.runs.map((x) => x.rps)))}–${Math.round(Math.max(...r.runs.map((x) => x.rps)))}`;
    const errPct = r.requests ? (r.errors / r.requests) * 100 : 0;
    rows.push(
      `| ${r.label} | ${r.setup} | ${r.codes} | ${Math.round(r.rps)} | ${rpsRange} | ${fmt(r.p50ms)} | ${fmt(r.p99ms)} | ${r.bareRps !== undefined ? Math.round(r.bareRps) : '—'} | ${ratio !== null ? fmt(ratio) : '—'} | ${r.concurrentRatio !== undefined ? fmt(r.concurrentRatio, 3) : '—'} | ${targets.join('; ') || '—'} | ${r.serverCpu !== null ? `${r.serverCpu.toFixed(0)}%` : '?'} | ${r.served ?? '—'} | ${r.errors ? `${r.errors} (${errPct.toFixed(1)}%)` : '0'} |`,
    );
  }
  return rows.join('\n');
}

function latencyTable(results: Array<CaseResult | Skipped>): string {
  const rows = [
    '| case | rate /s | answered /s | p50 ms | p90 ms | p99 ms | max ms | paired bare p50 / p99 ms | p99 < 5 ms | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|---:|',
  ];
  for (const r of results) {
    if ('reason' in r || !r.latency) continue;
    for (const l of r.latency) {
      const m = (f: (x: OpenLoopResult) => number, xs = l.runs) => median(xs.map(f));
      const p99 = medianP99(l);
      const errors = l.runs.reduce((a, x) => a + x.errors, 0);
      rows.push(
        `| ${r.label} | ${l.rate} | ${Math.round(m((x) => x.answered))} | ${fmt(m((x) => x.p50ms))} | ${fmt(m((x) => x.p90ms))} | ${fmt(p99)} | ${fmt(m((x) => x.maxms), 1)} | ${fmt(m((x) => x.p50ms, l.bareRuns))} / ${fmt(bareMedianP99(l))} | ${p99Verdict(l)} | ${errors} |`,
      );
    }
  }
  return rows.length > 2 ? rows.join('\n') : '';
}

function resultFile(): string {
  const d = new Date(T0);
  const date = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
  let file = join(RESULTS_DIR, `redirect-${date}.md`);
  for (let i = 2; existsSync(file); i++) file = join(RESULTS_DIR, `redirect-${date}-${i}.md`);
  return file;
}

const firstLine = (e: unknown) => {
  const msg = (e as Error)?.message ?? String(e);
  const cause = msg.split('\n').find((l) => /\bError\b|ECONN|refused|timed out/i.test(l) && l !== msg.split('\n')[0]);
  return `${msg.split('\n')[0].replace(/:$/, '')}${cause ? `: ${cause.trim()}` : ''}`.slice(0, 200);
};

// ------------------------------------------------------------------------------------ main

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const want = (c: string) => !opts.cases || opts.cases.has(c);
  const deadline = T0 + opts.budgetSeconds * 1000;
  const inBudget = () => Date.now() < deadline;
  startLoad = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  try {
    clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    clkTck = 100;
  }
  tmpRoot = mkdtempSync(join(tmpdir(), 'shortlink-bench-'));
  mkdirSync(PROFILES_DIR, { recursive: true });
  const stamp = new Date(T0).toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const results: Array<CaseResult | Skipped> = [];
  const profiles: ProfileSummary[] = [];
  const notes: string[] = [];
  const stackCases = ['l1-hot', 'redis-hot', 'redis-many', 'redis-floor', 'db-hot', 'db-many', 'db-many-admit'].filter(want);
  let stack = stackCases.length ? await waitStackUp(opts.waitStack) : stackState();
  const stackAtStart = stack.up ? stack.detail : `not up (${stack.detail})`;
  log(`loader ${opts.loader}; real stack: ${stackAtStart}`);

  /** Runs a group of cases; a failure is reported for the cases of the group not measured yet. */
  const guarded = async (ids: string[], body: () => Promise<void>) => {
    try {
      await body();
    } catch (e) {
      log(`failed (${ids.join(', ')}): ${(e as Error).stack ?? e}`);
      const done = new Set(results.map((r) => r.id));
      for (const id of ids) if (!done.has(id)) results.push({ id, label: labelOf(id, opts), reason: `failed: ${firstLine(e)}` });
      notes.push(ids.length ? `${ids.join(', ')} failed: ${firstLine(e)}` : `an attempt failed and was retried: ${firstLine(e)}`);
    }
  };
  const wantProfile = (missed: boolean) => opts.profile === 'always' || (opts.profile === 'auto' && missed);
  const missed = (r: CaseResult) => (r.targetRatio !== undefined && (r.concurrentRatio ?? r.ratio ?? 0) < r.targetRatio) || (!!r.p99Target && r.p99ms >= 5);

  // The ceiling: kept running on core 0 (idle while a case runs) and measured before every case run.
  const barePort = await freePort();
  const bareProc = start('bare-server', process.execPath, ['-r', './tools/register.js', 'bench/redirect/bare-server.ts'], { BENCH_BARE_PORT: String(barePort) }, SERVER_CORE);
  const bare: Bare = { base: `http://127.0.0.1:${barePort}`, pid: bareProc.pid, runs: [] };
  await waitFor('bare server', bareProc, async () => (await fetch(`${bare.base}/x`, { redirect: 'manual' })).status === 302, 20_000);
  log(`bare: warm-up ${opts.warmup}s`);
  await load(opts, bare.base, BARE_PATH, opts.warmup, bare.pid);

  // Framework reference: plain Fastify, same route and answer as the bare server.
  if (want('fastify-bare'))
    await guarded(['fastify-bare'], async () => {
      const port = await freePort();
      const proc = start('fastify-server', process.execPath, ['-r', './tools/register.js', 'bench/redirect/fastify-server.ts'], { BENCH_BARE_PORT: String(port) }, SERVER_CORE);
      const base = `http://127.0.0.1:${port}`;
      try {
        await waitFor('fastify server', proc, async () => (await fetch(`${base}/x`, { redirect: 'manual' })).status === 302, 20_000);
        const version = /fastify (\S+) on/.exec(proc.output())?.[1] ?? '?';
        results.push(await measure(opts, bare, 'fastify-bare', `fastify ${version} (the copy Nest loads), one route, no logger/hooks`, base, BARE_PATH, proc.pid, {}, false));
      } finally {
        await proc.stop();
      }
    });

  // (a') L1 hit on the embedded drivers: SQLite shards + in-process cache, in a fresh data dir.
  if (want('l1-embedded')) {
    if (!inBudget()) results.push({ id: 'l1-embedded', label: labelOf('l1-embedded', opts), reason: 'time budget' });
    else
      await guarded(['l1-embedded'], async () => {
        const dataDir = mkdtempSync(join(tmpRoot, 'embedded-'));
        const env = appEnv(dataDir, { DB_DRIVER: 'sqlite', CACHE_DRIVER: 'memory' }, opts.env);
        log('l1-embedded: creating 1 link through the generation app (SQLite + memory)');
        const [hot] = await createLinks(env, 1, `embedded-${stamp}`);
        const profileFile = join(PROFILES_DIR, `redirect-${stamp}-l1-embedded.cpuprofile`);
        const r = await startRedirect(env, 'redirect-embedded', profileFile);
        try {
          await verify(r.base, [hot], 'l1-embedded');
          const res = await measure(opts, bare, 'l1-embedded', 'sqlite + memory cache, L1 on', r.base, [`/${hot.code}`], r.proc.pid, { targetRatio: 0.65, p99Target: true });
          results.push(res);
          // The stack's L1 case is the one profiled, unless there is none.
          if ((!stack.up || !want('l1-hot') || opts.profile === 'always') && wantProfile(missed(res))) {
            const p = await profileRun(opts, r, 'l1-embedded', [`/${hot.code}`], profileFile);
            if (p) profiles.push(p);
          }
        } finally {
          await r.proc.stop();
        }
      });
  }

  // (a) (b) (c) on the real stack: Redis Cluster + MariaDB shards.
  if (stackCases.length && !stack.up) {
    notes.push(`Real-stack cases skipped: ${stack.detail}. Start it with \`bash deploy/local/stack.sh up\`.`);
    for (const id of stackCases) results.push({ id, label: labelOf(id, opts), reason: 'real stack not up' });
  } else if (stackCases.length) {
    const dataDir = mkdtempSync(join(tmpRoot, 'stack-'));
    const stackEnv = () => {
      const s = stack.env!;
      return appEnv(dataDir, { DB_DRIVER: 'mysql', MYSQL_META_URL: s.MYSQL_META_URL, MYSQL_SHARDS: s.MYSQL_SHARDS, CACHE_DRIVER: 'redis', REDIS_CLUSTER_NODES: s.REDIS_CLUSTER_NODES }, opts.env);
    };
    const needMany = stackCases.some((c) => c.includes('-many'));
    const count = needMany ? opts.codes + 1 : 1;
    const created: { links?: Link[] } = {};
    await guarded(stackCases, async () => {
      log(`real stack: creating ${count} links through the generation app (MariaDB shards + Redis Cluster)`);
      created.links = await createLinks(stackEnv(), count, `stack-${stamp}`);
    });
    if (created.links) {
      const all = created.links;
      const hot = all[0];
      const many = all.slice(needMany ? 1 : 0);
      const manyPaths = many.map((l) => `/${l.code}`);
      const configs: Array<{ name: string; cases: string[]; env: Record<string, string>; setup: string }> = [
        { name: 'redirect-l1', cases: ['l1-hot'], env: {}, setup: 'MariaDB + Redis Cluster, L1 on (defaults)' },
        { name: 'redirect-redis', cases: ['redis-hot', 'redis-many'], env: { REDIRECT_L1_ENABLED: 'false' }, setup: 'REDIRECT_L1_ENABLED=false' },
        { name: 'redirect-db', cases: ['db-hot', 'db-many'], env: { REDIRECT_L1_ENABLED: 'false', REDIRECT_REDIS_ENABLED: 'false' }, setup: 'REDIRECT_L1_ENABLED=false REDIRECT_REDIS_ENABLED=false' },
        // With DB_CONCURRENCY (default 32, no queue) below the connection count the bulkhead sheds
        // the excess as 503 at once; this run admits every connection to show the shards' own rate.
        {
          name: 'redirect-db-admit',
          cases: ['db-many-admit'],
          env: { REDIRECT_L1_ENABLED: 'false', REDIRECT_REDIS_ENABLED: 'false', DB_CONCURRENCY: String(opts.connections) },
          setup: `L1 and Redis off, DB_CONCURRENCY=${opts.connections}`,
        },
      ];
      let verifiedAll = false;
      for (const c of configs) {
        const ids = c.cases.filter(want);
        // Two attempts per configuration: another session restarting the stack mid-case voids the case.
        for (let attempt = 1; attempt <= 2; attempt++) {
          const pending = ids.filter((id) => !results.some((r) => r.id === id));
          if (!pending.length) break;
          if (!inBudget()) {
            for (const id of pending) results.push({ id, label: labelOf(id, opts), reason: 'time budget' });
            break;
          }
          stack = await waitStackUp(Math.max(opts.waitStack, attempt > 1 ? 120 : 0));
          if (!stack.up) {
            for (const id of pending) results.push({ id, label: labelOf(id, opts), reason: `real stack went down (${stack.detail})` });
            break;
          }
          let restarted = '';
          const last = attempt === 2;
          await guarded(last ? pending : [], async () => {
            const profileFile = join(PROFILES_DIR, `redirect-${stamp}-${c.name}.cpuprofile`);
            const r = await startRedirect({ ...stackEnv(), ...c.env }, c.name, profileFile);
            try {
              // Every link once (this also fills Redis); the full check once, a sample after.
              await verify(r.base, verifiedAll ? [hot, ...many.filter((_, i) => i % 50 === 0)] : [hot, ...many], c.name);
              verifiedAll = true;
              for (const id of pending) {
                if (!inBudget()) {
                  results.push({ id, label: labelOf(id, opts), reason: 'time budget' });
                  continue;
                }
                const paths = id.includes('-many') ? manyPaths : [`/${hot.code}`];
                const targets: Partial<CaseResult> = id === 'l1-hot' ? { targetRatio: 0.65, p99Target: true } : id.startsWith('redis') ? { targetRatio: 0.45, p99Target: true } : {};
                const before = stack.pids;
                const res = await measure(opts, bare, id, c.setup, r.base, paths, r.proc.pid, targets);
                const now = stackState();
                if (!now.up || now.pids !== before) {
                  restarted = `the stack was restarted or went down during ${id} (${now.up ? 'PIDs changed' : now.detail})`;
                  log(restarted);
                  notes.push(`${restarted}; ${last ? 'kept, marked' : 'measured again'}.`);
                  if (!last) return;
                  res.setup += ' ⚠ stack restarted during the case';
                }
                results.push(res);
                if ((id === 'l1-hot' || id.startsWith('redis-')) && wantProfile(missed(res)) && inBudget()) {
                  const p = await profileRun(opts, r, id, paths, profileFile);
                  if (p) profiles.push(p);
                }
              }
            } finally {
              await r.proc.stop();
            }
          }).catch(() => undefined);
          if (!last && !restarted && ids.some((id) => !results.some((r) => r.id === id))) log(`${c.name}: attempt ${attempt} failed, retrying`);
        }
      }
      // The Redis floor, on the codes the runs above put into Redis (the redirect writes back).
      if (want('redis-floor')) {
        if (!inBudget()) results.push({ id: 'redis-floor', label: labelOf('redis-floor', opts), reason: 'time budget' });
        else
          await guarded(['redis-floor'], async () => {
            const port = await freePort();
            // The redirect's env (`--env` included), so the floor's Redis client is configured like the Redis cases'.
            const proc = start('redis-floor', process.execPath, ['-r', './tools/register.js', 'bench/redirect/redis-floor-server.ts'], { ...stackEnv(), BENCH_FLOOR_PORT: String(port) }, SERVER_CORE);
            const base = `http://127.0.0.1:${port}`;
            try {
              await waitFor('redis floor server', proc, async () => (await fetch(`${base}/${many[0].code}`, { redirect: 'manual' })).status !== 0, 20_000);
              // Fails with the status when a code is not in Redis (run it with a redis-* or l1 case).
              await verify(base, many.filter((_, i) => i % 50 === 0), 'redis-floor');
              results.push(await measure(opts, bare, 'redis-floor', 'RedisClusterStore.get + JSON.parse + 302, nothing else', base, manyPaths, proc.pid, { p99Target: true }, false));
            } finally {
              await proc.stop();
            }
          });
      }
    }
  }
  await bareProc.stop();

  // ---------------------------------------------------------------------------------- write
  const bareRow: CaseResult = {
    id: 'bare',
    label: 'bare node:http 302 (all paired runs)',
    setup: 'node:http, constant 302',
    codes: 1,
    runs: bare.runs,
    rps: bare.runs.length ? median(bare.runs.map((r) => r.rps)) : 0,
    p50ms: bare.runs.length ? median(bare.runs.map((r) => r.p50ms)) : 0,
    p99ms: bare.runs.length ? median(bare.runs.map((r) => r.p99ms)) : 0,
    errors: bare.runs.reduce((a, r) => a + r.errors, 0),
    requests: bare.runs.reduce((a, r) => a + r.requests, 0),
    serverCpu: bare.runs.length ? median(bare.runs.map((r) => r.serverCpu ?? 0)) : null,
    ratio: 1,
  };
  const rows: Array<CaseResult | Skipped> = bare.runs.length ? [bareRow, ...results] : results;
  const md: string[] = [];
  md.push(`# Redirect benchmark, ${new Date(T0).toISOString().slice(0, 10)}`, '');
  md.push(`Produced by \`node -r ./tools/register.js bench/redirect/run.ts${process.argv.length > 2 ? ` ${process.argv.slice(2).join(' ')}` : ''}\` (see bench/redirect/README.md).`, '');
  md.push('## Machine', '', ...machineFacts(opts, stackAtStart), '');
  md.push('## Results', '');
  md.push(
    `Server under test pinned to core ${SERVER_CORE}, loader (${opts.loader}, 1 thread, ${opts.connections} connections) to core ${LOADER_CORE}. ` +
      `rps (answered redirects per second: responses with status ≥ 400 are not counted, they are in "errors"), p50 and p99 are medians over the ${opts.runs} runs of a case. ` +
      'Each run of a case is preceded by a run of the bare node:http server (same loader, same duration): "paired bare rps" is the median of those, "× bare" the median of the per-run ratios. ' +
      `"× bare, side by side" (cases with a ratio target): ${opts.runs} more runs in which the case and the bare server are loaded at the same time, both on core ${SERVER_CORE} with a loader each on core ${LOADER_CORE}; ` +
      'the ratio is per CPU second, (case rps / case CPU) ÷ (bare rps / bare CPU), median of the runs. Both see the same machine at the same moment, so it does not move with the machine\'s speed between runs as the sequential ratio does; the ratio targets are judged on it. ' +
      '"server CPU" is the server process\'s CPU time during a run in % of its core; "served from" is where the redirect\'s own metrics say the measured lookups were answered. ' +
      "The stack's Redis/MariaDB (and every other process on this shared machine) are not pinned and share both cores.",
    '',
  );
  md.push(table(rows), '');
  const latency = latencyTable(rows);
  if (latency)
    md.push(
      '### Latency at a fixed rate (open loop)',
      '',
      `vegeta on core ${LOADER_CORE} (one Go thread), at most ${opts.connections} keep-alive connections, requests sent on a fixed schedule for ${opts.duration} s per run; ` +
        `medians of ${opts.runs} runs, each paired with a bare run at the same rate. "answered /s" counts 3xx answers.`,
      '',
      latency,
      '',
    );
  if (notes.length) md.push('## Notes', '', ...notes.map((n) => `- ${n}`), '');
  md.push('## Runs', '', '| case | run | rps | p50 ms | p99 ms | errors | server CPU | paired bare rps | load avg (1 min) |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    if ('reason' in r) continue;
    r.runs.forEach((x, i) =>
      md.push(`| ${r.id} | ${i + 1} | ${Math.round(x.rps)} | ${fmt(x.p50ms)} | ${fmt(x.p99ms)} | ${x.errors} | ${x.serverCpu?.toFixed(0) ?? '?'}% | ${x.bareRps !== undefined ? Math.round(x.bareRps) : '—'} | ${x.load1.toFixed(2)} |`),
    );
  }
  md.push('');
  if (results.some((r) => !('reason' in r) && r.concurrent))
    md.push('## Side-by-side runs', '', '| case | run | rps | server CPU | bare rps | bare CPU | cost ratio |', '|---|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    if ('reason' in r || !r.concurrent) continue;
    const pct = (c: number | null) => (c === null ? '?' : `${c.toFixed(0)}%`);
    r.concurrent.forEach((c, i) => md.push(`| ${r.id} | ${i + 1} | ${Math.round(c.rps)} | ${pct(c.cpu)} | ${Math.round(c.bareRps)} | ${pct(c.bareCpu)} | ${fmt(c.costRatio, 3)} |`));
  }
  md.push('');
  for (const p of profiles) {
    md.push(`## CPU profile: ${p.caseId}`, '', `Profile file: \`${relative(ROOT, p.file)}\` (open in Chrome DevTools → Performance, or speedscope). Throughput while profiling: ${Math.round(p.rps)} rps.`, '', p.text, '');
  }
  md.push(`Total bench time: ${((Date.now() - T0) / 1000).toFixed(0)} s.`, '');
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = resultFile();
  writeFileSync(file, md.join('\n'));
  process.stdout.write(`\n${table(rows)}\n\n${latency ? `${latency}\n\n` : ''}`);
  for (const n of notes) process.stdout.write(`note: ${n}\n`);
  for (const p of profiles) process.stdout.write(`\nCPU profile ${p.caseId}:\n${p.text}\n`);
  process.stdout.write(`\nwritten ${relative(ROOT, file)} (total ${((Date.now() - T0) / 1000).toFixed(0)} s)\n`);
}

let cleaning: Promise<void> | null = null;
const cleanup = () =>
  (cleaning ??= (async () => {
    await stopAll();
    if (tmpRoot) rmSync(tmpRoot, { recursive: true, force: true });
  })());

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(sig, () => {
    log(`${sig}: stopping everything`);
    void cleanup().finally(() => process.exit(130));
  });
}

// Hard stop: whatever happens, nothing outlives budget + 3 min.
let watchdog: NodeJS.Timeout | undefined;

(async () => {
  let code = 0;
  try {
    const budget = Number((/--budget=(\d+)/.exec(process.argv.join(' ')) ?? [])[1] ?? 1500);
    watchdog = setTimeout(() => {
      log('watchdog: over the time budget, stopping everything');
      void cleanup().finally(() => process.exit(3));
    }, (budget + 180) * 1000);
    await main();
  } catch (e) {
    log(`failed: ${(e as Error).stack ?? e}`);
    code = 1;
  } finally {
    await cleanup();
    if (watchdog) clearTimeout(watchdog);
  }
  process.exit(code);
})();
