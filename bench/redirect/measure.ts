/**
 * The method (README.md, "Method"): for a case, a warm-up, then sequential pairs (a bare run, then
 * the case's run), side-by-side runs for the cases with a ratio target (both servers loaded at the
 * same time, ratio per CPU second), and open-loop runs for the cases with a p99 target, each paired
 * with a bare run at the same rate. The redirect's own /metrics (admin listener) say where the
 * lookups were answered and how many click events were dropped.
 */
import { loadavg } from 'os';
import { byLabel, closedLoop, metric, Metrics, metricsOf, median, openLoop, OpenLoopResult, share } from '@shortlink/harness';
import { CaseId, labelOf } from './cli';
import { BenchContext } from './context';

export interface RunResult {
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

export interface LatencyResult {
  rate: number;
  runs: OpenLoopResult[];
  bareRuns: OpenLoopResult[];
}

/**
 * The case and the bare server loaded at the same moment, both on the server core, each by its own
 * loader on the loader core. The ratio of sequential runs moves with the machine's speed from one
 * 10 s window to the next (the bare server alone ranged 18–29k rps within minutes here); run side
 * by side, both see the same machine. Each gets about half the core, so the ratio is taken per CPU
 * second: (case rps / case CPU) / (bare rps / bare CPU), the bare cost per request over the case's.
 */
export interface ConcurrentPair {
  rps: number;
  bareRps: number;
  cpu: number | null;
  bareCpu: number | null;
  costRatio: number;
}

/** The redirect's click events over a case (from before its warm-up to after its last run). */
export interface ClickEvents {
  bus: string;
  /** Redirects answered (3xx) by the redirect, by its own count. */
  redirects: number;
  /** shortlink_click_events_dropped_total: events dropped because the click buffer was full. */
  dropped: number;
  /** shortlink_click_send_failures_total: failed batch sends to the bus (retried). */
  sendFailures: number;
  /** shortlink_click_buffer_size at the end. */
  buffered: number;
}

export interface Targets {
  /** Target ratio to the bare baseline, if the issue sets one. */
  targetRatio?: number;
  /** Whether the p99 < 5 ms target applies. */
  p99Target?: boolean;
  /** Side-by-side runs without a target (a control case to compare with one). */
  sideBySide?: boolean;
}

export interface CaseResult extends Targets {
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
  /** Where the redirect says the measured lookups were answered (from its /metrics). */
  served?: string;
  /** Median rps of the bare runs paired with this case's runs, and the median of the per-run ratios. */
  bareRps?: number;
  ratio?: number;
  /** Open-loop runs at the fixed rates, each paired with a bare run at the same rate. */
  latency?: LatencyResult[];
  /** Runs with the bare server loaded at the same time on the same core. */
  concurrent?: ConcurrentPair[];
  /** Median of the concurrent pairs' cost ratios: the drift-free estimate of "× bare". */
  concurrentRatio?: number;
  clicks?: ClickEvents;
}

export interface Skipped {
  id: string;
  label: string;
  reason: string;
}

/** A server under test: where it listens, its PID (for its CPU time), and for a redirect app its admin listener. */
export interface Server {
  base: string;
  pid: number;
  /** The redirect's operator listener: lookups and click events are read from its /metrics. */
  admin?: string;
}

/** The bare server, kept running for the whole invocation so every measured run is paired with a bare run. */
export interface Bare extends Server {
  runs: RunResult[];
}

export const BARE_PATH = ['/AbCd123'];

/** The targets per case. */
export const TARGETS: Partial<Record<CaseId, Targets>> = {
  'l1-embedded': { targetRatio: 0.65, p99Target: true },
  'l1-hot': { targetRatio: 0.65, p99Target: true },
  'l1-kafka': { targetRatio: 0.65, p99Target: true },
  // "Conversion tracking costs the redirect no more than 5 %": judged against l1-kafka (same process,
  // before) and l1-conversions-off-after-kafka (after), side by side.
  'l1-conversions-kafka': { sideBySide: true },
  'l1-conversions-off-after-kafka': { sideBySide: true },
  'l1-options': { targetRatio: 0.5 },
  'l1-options-kafka': { targetRatio: 0.5 },
  // No target: the control of l1-options-kafka (same requests, plain link) measured side by side too.
  'l1-visitors-kafka': { sideBySide: true },
  // "A link with 10 rules costs no more than 10 % over a plain link": judged against l1-visitors-kafka, side by side.
  'l1-rules-kafka': { sideBySide: true },
  // "A social-card answer to a bot costs no more than a redirect": judged against l1-bots-kafka,
  // the same bots redirected by a plain link, side by side in the same invocation.
  'l1-card-kafka': { sideBySide: true },
  'l1-bots-kafka': { sideBySide: true },
  // "The checks cost the redirect nothing on its hot path": l1-safety-kafka judged against l1-safety-off-kafka, side by side.
  'l1-safety-off-kafka': { sideBySide: true },
  'l1-safety-kafka': { sideBySide: true },
  'l1-safety-off-after-kafka': { sideBySide: true },
  // What Node charges for the card's answer on a bare server, against the bare 302.
  'card-floor': { sideBySide: true },
  'redis-hot': { targetRatio: 0.45, p99Target: true },
  'redis-many': { targetRatio: 0.45, p99Target: true },
  'redis-kafka': { targetRatio: 0.45, p99Target: true },
  'redis-floor': { p99Target: true },
};

/** One closed-loop run of `seconds` against `server` from the loader core, with the server's CPU. */
export async function load(ctx: BenchContext, server: Server, paths: readonly string[], seconds: number): Promise<RunResult> {
  const { opts } = ctx;
  const r = await closedLoop(ctx.rig, { loader: opts.loader, base: server.base, paths, connections: opts.connections, seconds, cpuOf: server.pid });
  return { rps: r.rps, requests: r.requests, p50ms: r.p50ms, p99ms: r.p99ms, errors: r.errors, serverCpu: r.cpu, load1: loadavg()[0] };
}

/** One open-loop run at `rate` from the loader core; the first `--warmup` seconds are sent but not counted. */
function openLoopRun(ctx: BenchContext, base: string, paths: readonly string[], rate: number): Promise<OpenLoopResult> {
  const vegeta = ctx.vegeta();
  if (!vegeta) throw new Error('vegeta is not available (no Go toolchain to install it)');
  const { opts } = ctx;
  return openLoop(ctx.rig, { vegeta, base, paths, rate, seconds: opts.duration, warmupSeconds: opts.warmup, connections: opts.connections });
}

/** What the p99 target is judged on: the median p99 of a rate's open-loop runs. */
export const medianP99 = (l: LatencyResult) => median(l.runs.map((x) => x.p99ms));
export const bareMedianP99 = (l: LatencyResult) => median(l.bareRuns.map((x) => x.p99ms));

/** Whether a case missed a target (closed-loop p99 here: the profile is decided before the open-loop verdict matters). */
export const missed = (r: CaseResult) =>
  (r.targetRatio !== undefined && (r.concurrentRatio ?? r.ratio ?? 0) < r.targetRatio) || (!!r.p99Target && r.p99ms >= 5);

function servedFrom(before: Metrics, after: Metrics): string {
  const [b, a] = [before, after].map((m) => byLabel(m, 'shortlink_redirect_lookup_total', 'source'));
  const diff = [...a.entries()].map(([k, v]) => [k, v - (b.get(k) ?? 0)] as const).filter(([, v]) => v > 0);
  const total = diff.reduce((s, [, v]) => s + v, 0);
  if (!total) return 'none';
  return diff
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ${share(v, total)}%`)
    .join(', ');
}

function clickEvents(bus: string, before: Metrics, after: Metrics): ClickEvents {
  const redirects = (m: Metrics) =>
    [...byLabel(m, 'shortlink_redirect_requests_total', 'status')].filter(([s]) => s.startsWith('3')).reduce((s, [, v]) => s + v, 0);
  const delta = (series: string) => metric(after, series) - metric(before, series);
  return {
    bus,
    redirects: redirects(after) - redirects(before),
    dropped: delta('shortlink_click_events_dropped_total'),
    sendFailures: delta('shortlink_click_send_failures_total'),
    buffered: metric(after, 'shortlink_click_buffer_size'),
  };
}

/** `runs` pairs of (bare run, case run) back to back, so each ratio is taken against the machine as it was at that moment. */
async function sequentialPairs(
  ctx: BenchContext,
  bare: Bare,
  id: string,
  server: Server,
  paths: readonly string[],
): Promise<{ runs: RunResult[]; bareRuns: RunResult[] }> {
  const runs: RunResult[] = [];
  const bareRuns: RunResult[] = [];
  for (let i = 0; i < ctx.opts.runs; i++) {
    const b = await load(ctx, bare, BARE_PATH, ctx.opts.duration);
    bare.runs.push(b);
    bareRuns.push(b);
    const r = await load(ctx, server, paths, ctx.opts.duration);
    r.bareRps = b.rps;
    ctx.log(
      `${id}: run ${i + 1}/${ctx.opts.runs}: ${Math.round(r.rps)} rps, p50 ${r.p50ms.toFixed(2)} ms, p99 ${r.p99ms.toFixed(2)} ms, errors ${r.errors}, CPU ${r.serverCpu?.toFixed(0) ?? '?'}%` +
        ` | paired bare ${Math.round(b.rps)} rps, p99 ${b.p99ms.toFixed(2)} ms (×${(r.rps / b.rps).toFixed(2)})`,
    );
    runs.push(r);
  }
  return { runs, bareRuns };
}

/** `runs` runs with the case and the bare server loaded at the same time (see ConcurrentPair). */
async function sideBySide(ctx: BenchContext, bare: Bare, id: string, server: Server, paths: readonly string[]): Promise<ConcurrentPair[]> {
  const pairs: ConcurrentPair[] = [];
  for (let i = 0; i < ctx.opts.runs; i++) {
    const [b, r] = await Promise.all([load(ctx, bare, BARE_PATH, ctx.opts.duration), load(ctx, server, paths, ctx.opts.duration)]);
    const cpuShare = r.serverCpu && b.serverCpu ? b.serverCpu / r.serverCpu : 1;
    const pair = { rps: r.rps, bareRps: b.rps, cpu: r.serverCpu, bareCpu: b.serverCpu, costRatio: (r.rps / b.rps) * cpuShare };
    pairs.push(pair);
    ctx.log(
      `${id}: concurrent with bare, run ${i + 1}/${ctx.opts.runs}: ${Math.round(r.rps)} rps at CPU ${r.serverCpu?.toFixed(0) ?? '?'}% | bare ${Math.round(b.rps)} rps at CPU ${b.serverCpu?.toFixed(0) ?? '?'}% (cost ×${pair.costRatio.toFixed(3)})`,
    );
  }
  return pairs;
}

/** For each `--latency-rates` rate, `runs` pairs of open-loop runs (bare, then the case). */
async function openLoopPairs(ctx: BenchContext, bare: Bare, id: string, server: Server, paths: readonly string[]): Promise<LatencyResult[]> {
  const latency: LatencyResult[] = [];
  for (const rate of ctx.opts.latencyRates) {
    const l: LatencyResult = { rate, runs: [], bareRuns: [] };
    for (let i = 0; i < ctx.opts.runs; i++) {
      const b = await openLoopRun(ctx, bare.base, BARE_PATH, rate);
      const r = await openLoopRun(ctx, server.base, paths, rate);
      l.bareRuns.push(b);
      l.runs.push(r);
      ctx.log(
        `${id}: open loop ${rate}/s, run ${i + 1}/${ctx.opts.runs}: p50 ${r.p50ms.toFixed(2)} ms, p99 ${r.p99ms.toFixed(2)} ms, max ${r.maxms.toFixed(1)} ms, ` +
          `answered ${Math.round(r.answered)}/s, errors ${r.errors} | paired bare p99 ${b.p99ms.toFixed(2)} ms`,
      );
    }
    latency.push(l);
  }
  return latency;
}

/** The runs of a case and the medians and sums the table shows. */
export function summariseRuns(runs: RunResult[]): Pick<CaseResult, 'runs' | 'rps' | 'p50ms' | 'p99ms' | 'errors' | 'requests' | 'serverCpu'> {
  const cpu = runs.map((r) => r.serverCpu).filter((c): c is number => c !== null);
  return {
    runs,
    rps: median(runs.map((r) => r.rps)),
    p50ms: median(runs.map((r) => r.p50ms)),
    p99ms: median(runs.map((r) => r.p99ms)),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    requests: runs.reduce((a, r) => a + r.requests, 0),
    serverCpu: cpu.length ? median(cpu) : null,
  };
}

export interface CaseSpec {
  id: CaseId;
  setup: string;
  server: Server;
  paths: readonly string[];
  /** The redirect's click bus (with `server.admin`): its click events are reported. */
  bus?: string;
  /** Measured on the `--base` revision's redirect: the result is `<id>@base`, labelled "before". */
  base?: boolean;
}

/** Distinct codes among request paths (a path may add a query and, after tabs, headers). */
const codesOf = (paths: readonly string[]) => new Set(paths.map((p) => p.split(/[?\t]/)[0])).size;

/** A case, measured by the method above. */
export async function measure(ctx: BenchContext, bare: Bare, spec: CaseSpec): Promise<CaseResult> {
  const { id, server, paths } = spec;
  const targets = TARGETS[id] ?? {};
  const scrape = () => (server.admin ? metricsOf(server.admin) : Promise.resolve(null));
  const atStart = await scrape();
  const codes = codesOf(paths);
  ctx.log(`${id}: warm-up ${ctx.opts.warmup}s (${codes} code${codes > 1 ? 's' : ''}, ${paths.length} distinct request${paths.length > 1 ? 's' : ''})`);
  const w = await load(ctx, server, paths, ctx.opts.warmup);
  if (w.errors > 0) ctx.log(`${id}: warm-up had ${w.errors} errors of ${w.requests}`);
  const before = await scrape();
  const { runs, bareRuns } = await sequentialPairs(ctx, bare, id, server, paths);
  const concurrent = targets.targetRatio !== undefined || targets.sideBySide ? await sideBySide(ctx, bare, id, server, paths) : [];
  const afterRuns = await scrape();
  const served = before && afterRuns ? servedFrom(before, afterRuns) : undefined;
  if (served) ctx.log(`${id}: lookups answered from ${served}`);
  const latency = targets.p99Target ? await openLoopPairs(ctx, bare, id, server, paths) : [];
  const atEnd = await scrape();
  const clicks = atStart && atEnd ? clickEvents(spec.bus ?? '?', atStart, atEnd) : undefined;
  if (clicks)
    ctx.log(`${id}: click events (${clicks.bus} bus): ${clicks.dropped} dropped of ${clicks.redirects} redirects, ${clicks.sendFailures} send failures`);
  return {
    latency: latency.length ? latency : undefined,
    concurrent: concurrent.length ? concurrent : undefined,
    concurrentRatio: concurrent.length ? median(concurrent.map((c) => c.costRatio)) : undefined,
    id: spec.base ? `${id}@base` : id,
    label: spec.base ? `${labelOf(id, ctx.opts)}, before (--base)` : labelOf(id, ctx.opts),
    setup: spec.setup,
    codes,
    ...summariseRuns(runs),
    bareRps: median(bareRuns.map((r) => r.rps)),
    ratio: median(runs.map((r) => r.rps / r.bareRps!)),
    served,
    clicks,
    ...targets,
  };
}
