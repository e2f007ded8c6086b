/**
 * The chaos run's checker: plain functions of the record (record.ts), one per invariant
 * (docs/reliability.md lists them with the bounds they allow). Each returns the violations it found;
 * `check` runs them all and sums the run up for the verdict table.
 */
import { ChaosRecord, Fault, FaultTarget, Op, OpKind, Settled } from './record';
import { isRedisFault } from './schedule';

export type Invariant =
  'acknowledged-writes' | 'redirect-targets' | 'clicks-counted-once' | 'conversions-counted-once' | 'errors' | 'max-clicks' | 'visitor-limit' | 'overload';

/**
 * Under overload (both cores hogged, or a flood of requests beyond capacity; docs/reliability.md): every
 * answer of the workload within these bounds (a 429 or 503 with Retry-After is an answer, one without is
 * not), and this share of the redirects succeeding: all of them under the hog, the workload's own
 * during a flood. The flood's own requests (measured by clients saturated by their own flood) must be
 * answered, a 429/503 with Retry-After, but are held to no time bound but the clients' timeouts.
 * An answer's time is the platform's: from the request's start to its end, less the time the client's
 * own event loop was stalled meanwhile (`clientStallMs`: the answer may have waited that long in the
 * client). The redirect's bound is its deadline (REQUEST_DEADLINE_REDIRECT_MS, 1.5 s, from its
 * arrival, then 503 DEADLINE_EXCEEDED) + 0.5 s for the busy loop's lateness in sending that answer.
 */
export const OVERLOAD = { redirectAnswerMs: 2_000, apiAnswerMs: 5_000, redirectSuccessFloor: 0.95, floodBaselineRedirectFloor: 0.95 } as const;

/**
 * Overload the schedule did not throw: the seconds in which the machine's CPU pressure (PSI `some`, sampled by the run)
 * was at least this share, when runnable tasks waited for a CPU most of the time (other work on a shared machine). In such
 * a window (+ the CPU hog's recovery time) a 503 `OVERLOADED` or `DEADLINE_EXCEEDED` with Retry-After is the platform
 * shedding on its own measure of load (the event loop's lag, its deadline: docs/design.md, "Overload"): not an `errors`
 * violation, but judged by `overload` like the hog's windows (the bounds, and the floor over all such windows together).
 * Anywhere else such a 503 is an error like any other.
 */
export const MACHINE_PRESSURE_FLOOR = 0.8;
const SHED_CODES: ReadonlySet<string> = new Set(['OVERLOADED', 'DEADLINE_EXCEEDED']);
const shedByDesign = (op: Op) => op.status === 503 && !!op.retryAfter && op.problem !== undefined && SHED_CODES.has(op.problem);

/** The platform's time of an answer: the client's, less its own stalls meanwhile. */
export const answerMs = (op: Op) => op.end - op.start - (op.clientStallMs ?? 0);

/** The windows of the machine's own CPU pressure (MACHINE_PRESSURE_FLOOR), consecutive pressured seconds merged. */
export function pressureWindows(record: ChaosRecord): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  for (const s of record.cpuPressure ?? []) {
    if (s.some < MACHINE_PRESSURE_FLOOR) continue;
    const last = out[out.length - 1];
    if (last && s.from - last.end <= 100) last.end = s.to;
    else out.push({ start: s.from, end: s.to });
  }
  return out;
}

/** The machine's CPU pressure over the run, and the shed answers it excused (outside every fault window). */
export interface PressureSummary {
  meanSome: number | null;
  pressuredSeconds: number;
  shedExcused: number;
}

export function pressureSummary(record: ChaosRecord): PressureSummary {
  const samples = record.cpuPressure ?? [];
  const windows = pressureWindows(record);
  return {
    meanSome: samples.length ? samples.reduce((a, x) => a + x.some, 0) / samples.length : null,
    pressuredSeconds: windows.reduce((a, w) => a + (w.end - w.start) / 1000, 0),
    shedExcused: record.ops.filter((o) => shedByDesign(o) && inPressure(windows, o) && !record.faults.some((f) => excuses(f, o))).length,
  };
}

const inPressure = (windows: ReadonlyArray<{ start: number; end: number }>, op: Op) =>
  windows.some((w) => op.end >= w.start && op.start <= w.end + RECOVERY_MS.cpu);

export const INVARIANTS: ReadonlyArray<{ name: Invariant; says: string }> = [
  { name: 'acknowledged-writes', says: 'an acknowledged create, edit, disable or delete is visible after the run settles, and not undone' },
  { name: 'redirect-targets', says: "a 302 leads to a target the link had during the request's window (ack + propagation bound)" },
  {
    name: 'clicks-counted-once',
    says: 'every 302 is counted once in each rollup and in the raw visits, or counted as dropped (or lost with a SIGKILLed redirect)',
  },
  {
    name: 'conversions-counted-once',
    says: 'each lead (customer) and sale (invoiceId) acknowledged is counted once for its link in the analytics answer, retries included; one with an unknown outcome at most once',
  },
  {
    name: 'errors',
    says: `no 5xx or unanswered request outside a fault window + its recovery time (a 503 OVERLOADED or DEADLINE_EXCEEDED with Retry-After also while the machine's CPU pressure was ≥ ${MACHINE_PRESSURE_FLOOR * 100} %); every error answer is problem+json`,
  },
  {
    name: 'max-clicks',
    says: 'a maxClicks link grants at most its limit + the clicks unflushed or held in leases when Redis may have lost its counter',
  },
  {
    name: 'visitor-limit',
    says: "a clicksPerIpPerMinute link redirects the run's one visitor at most limit + each instance's requests in one merge interval a minute",
  },
  {
    name: 'overload',
    says: `while both cores are hogged or the clients flood the apps (or, outside every fault window, the machine's CPU pressure is ≥ ${MACHINE_PRESSURE_FLOOR * 100} %), every redirect of the workload is answered within ${OVERLOAD.redirectAnswerMs / 1000} s and every API call within ${OVERLOAD.apiAnswerMs / 1000} s (a 429/503 with Retry-After is an answer; the flood's own must be answered), and ≥ ${OVERLOAD.redirectSuccessFloor * 100} % of the redirects (under a flood: of the workload's own, ≥ ${OVERLOAD.floodBaselineRedirectFloor * 100} %) succeed`,
  },
];

export interface Violation {
  invariant: Invariant;
  message: string;
}

/**
 * How long after a component is back errors are still expected (docs/reliability.md, "Recovery times"):
 * MariaDB: SHARD_TIMEOUT_MS + SHARD_BREAKER_OPEN_MS (3 s + 1 s, docs/design.md "Failure containment");
 * a Redis master (killed, hung, or cut off from its cluster): cluster-node-timeout (2 s,
 * deploy/local/lib/redis.sh) + the edits' 1 s broadcast retry;
 * Kafka, ClickHouse and the analytics consumer are on no request's path ("Clicks and analytics"): none;
 * an app instance: only requests to that instance fail, and only while it is down; Kafka cut off from
 * one redirect: as Kafka, and on that instance only. A link slowed or
 * cut: as the server (a cut MariaDB link is a dead server to the apps). The CPU hog: the queue it
 * left drains within a second (the overload invariant holds the answers to their bounds). A flood: the
 * apps shed what they cannot serve at once, so nothing is queued behind it either.
 */
export const RECOVERY_MS: Record<FaultTarget, number> = {
  'redis-master': 3000,
  'redis-partition': 3000,
  mariadb: 4000,
  kafka: 0,
  clickhouse: 0,
  analytics: 0,
  redirect: 0,
  generation: 0,
  'mariadb-link': 4000,
  'clickhouse-link': 0,
  'kafka-link': 0,
  cpu: 1000,
  flood: 1000,
};

/** Faults whose victim is one app instance (`redirect-1`): they excuse that instance's failures only. */
const INSTANCE_TARGETS: ReadonlySet<FaultTarget> = new Set(['redirect', 'generation', 'analytics', 'kafka-link']);

/**
 * An app instance back from a SIGSTOP or a restart first drains what queued on its sockets meanwhile: its
 * event loop is seconds late on that first turn, and admission sheds what it reads then (503 `OVERLOADED`
 * with Retry-After; docs/design.md, "Overload"), the requests that arrived while it drained among them.
 * Such a shed by design on that instance this soon after its fault is the fault's; any other error is not.
 */
export const BACKLOG_DRAIN_MS = 500;
const APP_TARGETS: ReadonlySet<FaultTarget> = new Set(['redirect', 'generation', 'analytics']);
const drainingBacklog = (fault: Fault, op: Op) =>
  APP_TARGETS.has(fault.target) && fault.victim === op.instance && shedByDesign(op) && op.start >= fault.end && op.start <= fault.end + BACKLOG_DRAIN_MS;

/** A time of the run as seconds since the workload started. */
const at = (record: ChaosRecord, t: number) => `+${((t - record.startedAt) / 1000).toFixed(3)} s`;

/**
 * The link's target in a 302's Location: without the click id the redirect adds for a link with conversion tracking
 * (`sl_cid`, its default parameter; docs/analytics.md, "Conversions"). The run's targets have no query of their own.
 */
export function targetIn(location: string | null | undefined): string | null | undefined {
  if (!location || !location.includes('sl_cid=')) return location;
  const u = new URL(location);
  u.searchParams.delete('sl_cid');
  return u.toString();
}

const failed = (op: Op) => op.status === null || op.status >= 500;

/** Whether the fault, with its recovery time, excuses a failure of this request. */
export function excuses(fault: Fault, op: Op): boolean {
  // The flood's own requests are the fault itself (the overload invariant judges them), whenever their client sent them.
  if (fault.target === 'flood' && op.flood) return true;
  if (INSTANCE_TARGETS.has(fault.target) && fault.victim !== op.instance) return false;
  const recovery =
    (fault.target === 'kafka' || fault.target === 'kafka-link') && (op.kind === 'lead' || op.kind === 'sale')
      ? TRACK_KAFKA_RECOVERY_MS
      : RECOVERY_MS[fault.target];
  return op.end >= fault.start && op.start <= fault.end + recovery;
}

/**
 * The track endpoints answer 201 only once Kafka acknowledged the event (docs/analytics.md, "Conversions"): they are on
 * Kafka's path, unlike every other request of the workload, and after a Kafka stall the producer's requests in flight
 * fail before its next ones succeed. CI's run of 2026-12-07 23:19 saw leads and sales answered 503
 * DEPENDENCY_UNAVAILABLE 3.5–5 s after a 2 s SIGSTOP of Kafka.
 */
export const TRACK_KAFKA_RECOVERY_MS = 6000;

// ----------------------------------------------------------------------------- link histories

type LinkState = { status: 'active' | 'disabled' | 'deleted'; url: string };
const keyOf = (s: LinkState) => `${s.status} ${s.url}`;

/** One write of a link, with the states the link may be in after it (several when an earlier write's outcome is unknown). */
interface Step {
  op: Op;
  after: LinkState[];
}

export interface LinkHistory {
  code: string;
  maxClicks?: number;
  clicksPerIpPerMinute?: number;
  steps: Step[];
}

const WRITE_KINDS: ReadonlySet<OpKind> = new Set(['edit', 'disable', 'enable', 'delete']);

/** The create ops a record holds, one per created link: single creates and each 201 row of a batch. */
function creates(ops: readonly Op[]): Op[] {
  const out: Op[] = [];
  for (const op of ops) {
    if (op.kind === 'create' && op.outcome === 'ok' && op.code && op.url) out.push(op);
    if (op.kind === 'batch')
      for (const r of op.rows ?? [])
        if (r.status === 201 && r.code) out.push({ ...op, kind: 'create', code: r.code, url: r.url, rows: undefined, status: 201, outcome: 'ok' });
  }
  return out;
}

function apply(op: Op, s: LinkState): LinkState {
  if (s.status === 'deleted') return s;
  switch (op.kind) {
    case 'edit':
      return { ...s, url: op.url ?? s.url };
    case 'disable':
      return { ...s, status: 'disabled' };
    case 'enable':
      return { ...s, status: 'active' };
    case 'delete':
      return { ...s, status: 'deleted' };
    default:
      return s;
  }
}

const dedupe = (states: LinkState[]) => [...new Map(states.map((s) => [keyOf(s), s])).values()];

/**
 * Each acknowledged link's writes in order. The workload writes a link from one client only and one
 * write at a time, so the order of the writes is the order of their starts.
 */
export function histories(ops: readonly Op[]): Map<string, LinkHistory> {
  const out = new Map<string, LinkHistory>();
  for (const c of creates(ops))
    out.set(c.code!, {
      code: c.code!,
      maxClicks: c.maxClicks,
      clicksPerIpPerMinute: c.clicksPerIpPerMinute,
      steps: [{ op: c, after: [{ status: 'active', url: c.url! }] }],
    });
  const writes = ops.filter((o) => WRITE_KINDS.has(o.kind) && o.code && out.has(o.code)).sort((a, b) => a.start - b.start);
  for (const w of writes) {
    const h = out.get(w.code!)!;
    const before = h.steps[h.steps.length - 1].after;
    const applied = before.map((s) => apply(w, s));
    const after = w.outcome === 'ok' ? applied : w.outcome === 'fail' ? before : dedupe([...before, ...applied]);
    h.steps.push({ op: w, after: dedupe(after) });
  }
  return out;
}

// ----------------------------------------------------------------------------- invariants

/** What the settled servers show matches one of the states the link may be in after its last write. */
function shows(seen: Settled['links'][string], s: LinkState, h: LinkHistory): boolean {
  if (s.status === 'deleted') return seen.apiStatus === 404 && seen.redirectStatus === 404;
  if (seen.apiStatus !== 200 || seen.apiUrl !== s.url || seen.apiState !== s.status) return false;
  if (s.status === 'disabled') return seen.redirectStatus === 404;
  if (seen.redirectStatus === 302) return targetIn(seen.location) === s.url;
  // The run's one visitor may have used the link's minute (the read-back is a visit too).
  if (h.clicksPerIpPerMinute !== undefined && seen.redirectStatus === 429 && seen.problem === 'RATE_LIMITED') return true;
  return h.maxClicks !== undefined && seen.redirectStatus === 410 && seen.problem === 'LINK_EXHAUSTED';
}

export function checkAcknowledgedWrites(record: ChaosRecord, links = histories(record.ops)): Violation[] {
  const out: Violation[] = [];
  for (const h of links.values()) {
    const seen = record.settled.links[h.code];
    const last = h.steps[h.steps.length - 1];
    const expected = last.after.map(keyOf).join(' or ');
    if (!seen) out.push({ invariant: 'acknowledged-writes', message: `${h.code}: created (acknowledged) but not read back after the run` });
    else if (!last.after.some((s) => shows(seen, s, h)))
      out.push({
        invariant: 'acknowledged-writes',
        message: `${h.code}: after its last write (${last.op.kind}, ${last.op.outcome}) it should be ${expected}; the API shows ${seen.apiStatus} ${seen.apiState ?? ''} ${seen.apiUrl ?? ''}, the redirect ${seen.redirectStatus} ${seen.location ?? seen.problem ?? ''}`,
      });
  }
  return out;
}

/**
 * How long after the acknowledgement of a change an instance may still serve the old value: the
 * propagation bound while Redis and the change channel are up; when a Redis fault falls between the
 * acknowledgement and the request, the bound under a fault counted from the later of the two and
 * the master being back (docs/design.md, "Edits reach every instance"); the L1 TTL when the serving
 * instance itself was paused (it may have missed the change's message).
 */
function staleBound(record: ChaosRecord, ackAt: number, requestAt: number, instance: string): number {
  const { propagationBoundMs, l1TtlMs, faultBoundMs } = record.config;
  let bound = propagationBoundMs;
  for (const f of record.faults) {
    const back = f.end + RECOVERY_MS[f.target];
    const between = f.start <= requestAt && back + propagationBoundMs >= ackAt - propagationBoundMs;
    if (!between) continue;
    if (f.target === 'redirect' && f.victim === instance) bound = Math.max(bound, l1TtlMs);
    if (isRedisFault(f.target)) bound = Math.max(bound, faultBoundMs === undefined ? l1TtlMs : Math.max(0, back - ackAt) + faultBoundMs);
  }
  return bound;
}

export function checkRedirectTargets(record: ChaosRecord, links = histories(record.ops)): Violation[] {
  const out: Violation[] = [];
  for (const r of record.ops) {
    if (r.kind !== 'redirect' || r.status !== 302 || !r.code) continue;
    const h = links.get(r.code);
    if (!h) continue; // a code the workload did not create: nothing to compare with
    const possible = h.steps.some((step, i) => {
      if (step.op.start > r.end) return false;
      if (!step.after.some((s) => s.status === 'active' && s.url === targetIn(r.location))) return false;
      const superseding = h.steps.slice(i + 1).find((later) => later.op.outcome === 'ok');
      return !superseding || superseding.op.end + staleBound(record, superseding.op.end, r.start, r.instance) > r.start;
    });
    if (!possible) {
      const current = h.steps.filter((s) => s.op.start <= r.end && s.op.outcome === 'ok').pop();
      const state = current?.after.map(keyOf).join(' or ') ?? 'not created yet';
      out.push({
        invariant: 'redirect-targets',
        message: `${r.code}: ${r.instance} answered 302 → ${r.location} at ${at(record, r.start)}–${at(record, r.end)}, when the link was ${state} (acknowledged at ${current ? at(record, current.op.end) : '–'})`,
      });
    }
  }
  return out;
}

export interface ClickTotals {
  produced: number;
  counted: number;
  dropped: number;
  /** Clicks buffered by redirect instances when they were SIGKILLed: at most this many may be missing beyond the dropped ones. */
  atRiskAtKill: number;
  missing: number;
  extra: number;
}

/**
 * Clicks that SIGKILLed redirect instances can have taken with them (docs/design.md, "Clicks and analytics": a buffer in memory
 * dies with its process): each one's buffer at its last scrape, plus the 302s it answered between the moment that scrape was
 * sent and the kill (a click is buffered before its 302 leaves, so one that ended before the scrape was in the gauge or sent).
 */
export function atRiskAtKill(record: ChaosRecord): number {
  let n = 0;
  for (const inc of record.settled.incarnations) {
    if (inc.killedAt === undefined || !inc.lastScrape) continue;
    const { at, buffer } = inc.lastScrape;
    n +=
      buffer +
      record.ops.filter((o) => o.kind === 'redirect' && o.instance === inc.instance && o.status === 302 && o.end >= at && o.start <= inc.killedAt!).length;
  }
  return n;
}

export function clickTotals(record: ChaosRecord): ClickTotals {
  const produced = new Map<string, number>();
  for (const r of record.ops) if (r.kind === 'redirect' && r.status === 302 && r.code) produced.set(r.code, (produced.get(r.code) ?? 0) + 1);
  let missing = 0;
  let extra = 0;
  for (const code of new Set([...produced.keys(), ...Object.keys(record.settled.counted)])) {
    const diff = (produced.get(code) ?? 0) - (record.settled.counted[code]?.minute ?? 0);
    if (diff > 0) missing += diff;
    else extra -= diff;
  }
  return {
    produced: [...produced.values()].reduce((a, b) => a + b, 0),
    counted: Object.values(record.settled.counted).reduce((a, c) => a + c.minute, 0),
    dropped: record.settled.incarnations.reduce((a, i) => a + i.dropped, 0),
    atRiskAtKill: atRiskAtKill(record),
    missing,
    extra,
  };
}

export function checkClicks(record: ChaosRecord): Violation[] {
  const out: Violation[] = [];
  const produced = new Map<string, number>();
  const unanswered = new Map<string, number>();
  for (const r of record.ops) {
    if (r.kind !== 'redirect' || !r.code) continue;
    if (r.status === 302) produced.set(r.code, (produced.get(r.code) ?? 0) + 1);
    if (r.status === null) unanswered.set(r.code, (unanswered.get(r.code) ?? 0) + 1);
  }
  for (const [code, c] of Object.entries(record.settled.counted)) {
    if (c.minute !== c.hour || c.hour !== c.day)
      out.push({ invariant: 'clicks-counted-once', message: `${code}: the rollups disagree: minute ${c.minute}, hour ${c.hour}, day ${c.day}` });
    if (c.visits !== undefined && c.visits !== c.minute)
      out.push({ invariant: 'clicks-counted-once', message: `${code}: ${c.visits} raw visits, but ${c.minute} clicks in the rollups` });
    // A request that got no answer may still have been served (and counted).
    const most = (produced.get(code) ?? 0) + (unanswered.get(code) ?? 0);
    if (c.minute > most)
      out.push({
        invariant: 'clicks-counted-once',
        message: `${code}: ${c.minute} clicks counted, but only ${produced.get(code) ?? 0} 302s answered (+ ${unanswered.get(code) ?? 0} unanswered)`,
      });
  }
  const t = clickTotals(record);
  if (t.missing > t.dropped + t.atRiskAtKill)
    out.push({
      invariant: 'clicks-counted-once',
      message: `${t.missing} 302s are not counted, but only ${t.dropped} were counted as dropped and ${t.atRiskAtKill} were buffered in SIGKILLed redirect instances`,
    });
  return out;
}

export function checkErrors(record: ChaosRecord): Violation[] {
  const out: Violation[] = [];
  const pressure = pressureWindows(record);
  for (const op of record.ops) {
    if (op.status !== null && op.status >= 400 && !(op.contentType ?? '').startsWith('application/problem+json'))
      out.push({
        invariant: 'errors',
        message: `${op.kind} ${op.code ?? ''} on ${op.instance} answered ${op.status} as ${op.contentType ?? 'no content type'}, not problem+json`,
      });
    if (failed(op) && !record.faults.some((f) => excuses(f, op) || drainingBacklog(f, op)) && !(shedByDesign(op) && inPressure(pressure, op)))
      out.push({
        invariant: 'errors',
        message: `${op.kind} ${op.code ?? ''} on ${op.instance} at ${at(record, op.start)}–${at(record, op.end)} got ${op.status ?? `no answer (${op.error})`}${op.problem ? ` ${op.problem}` : ''} outside every fault window`,
      });
  }
  return out;
}

/**
 * Requests while both cores were hogged or the clients flooded the apps: answered within the bounds, a
 * 429 or 503 with its Retry-After, and the redirects' success above the floor (OVERLOAD): every redirect
 * under the hog, the workload's own under a flood (the flood's own are there to be shed).
 */
export function checkOverload(record: ChaosRecord): Violation[] {
  const out: Violation[] = [];
  for (const window of record.faults.filter((f) => f.target === 'cpu' || f.target === 'flood')) {
    const what = window.target === 'cpu' ? 'under the CPU hog' : 'during the flood';
    const during = record.ops.filter((o) => o.end >= window.start && o.start <= window.end + RECOVERY_MS[window.target]);
    for (const op of during) {
      const bound = op.kind === 'redirect' ? OVERLOAD.redirectAnswerMs : OVERLOAD.apiAnswerMs;
      if (op.status === null || (!op.flood && answerMs(op) > bound))
        out.push({
          invariant: 'overload',
          message: `${op.kind} ${op.code ?? ''} on ${op.instance} at ${at(record, op.start)} ${what}: ${op.status === null ? `no answer (${op.error})` : `answered ${op.status}${op.problem ? ` ${op.problem}` : ''} after ${op.end - op.start} ms${op.clientStallMs ? ` (the client stalled ${op.clientStallMs} ms of it)` : ''}`} (bound ${bound} ms)`,
        });
      else if ((op.status === 429 || op.status === 503) && op.retryAfter === null)
        out.push({
          invariant: 'overload',
          message: `${op.kind} ${op.code ?? ''} on ${op.instance} at ${at(record, op.start)} ${what}: ${op.status}${op.problem ? ` ${op.problem}` : ''} without Retry-After`,
        });
    }
    const floor = window.target === 'cpu' ? OVERLOAD.redirectSuccessFloor : OVERLOAD.floodBaselineRedirectFloor;
    const redirects = during.filter((o) => o.kind === 'redirect' && (window.target === 'cpu' || !o.flood));
    const succeeded = redirects.filter((o) => !failed(o) && o.status !== 429).length;
    if (redirects.length && succeeded / redirects.length < floor)
      out.push({
        invariant: 'overload',
        message: `${what} at ${at(record, window.start)}: ${succeeded} of ${redirects.length} ${window.target === 'cpu' ? '' : "of the workload's own "}redirects succeeded (floor ${floor * 100} %)`,
      });
  }
  // The machine's own CPU pressure, outside every fault's window (each fault has its own allowance): the same bounds on every
  // answer; the floor over all of them together.
  const pressure = pressureWindows(record);
  const pressured = record.ops.filter((o) => !o.flood && o.status !== null && inPressure(pressure, o) && !record.faults.some((f) => excuses(f, o)));
  for (const op of pressured) {
    const bound = op.kind === 'redirect' ? OVERLOAD.redirectAnswerMs : OVERLOAD.apiAnswerMs;
    if (answerMs(op) > bound)
      out.push({
        invariant: 'overload',
        message: `${op.kind} ${op.code ?? ''} on ${op.instance} at ${at(record, op.start)} under the machine's own CPU pressure: answered ${op.status}${op.problem ? ` ${op.problem}` : ''} after ${op.end - op.start} ms${op.clientStallMs ? ` (the client stalled ${op.clientStallMs} ms of it)` : ''} (bound ${bound} ms)`,
      });
  }
  const redirects = pressured.filter((o) => o.kind === 'redirect');
  const succeeded = redirects.filter((o) => !failed(o) && o.status !== 429).length;
  if (redirects.length && succeeded / redirects.length < OVERLOAD.redirectSuccessFloor)
    out.push({
      invariant: 'overload',
      message: `under the machine's own CPU pressure: ${succeeded} of ${redirects.length} redirects succeeded (floor ${OVERLOAD.redirectSuccessFloor * 100} %)`,
    });
  return out;
}

/** Leads, sales and revenue a link may show: from what was acknowledged (min) to that plus what had an unknown outcome (max). */
export interface ConversionBounds {
  leads: [number, number];
  sales: [number, number];
  revenue: [number, number];
}

/**
 * The conversions each link may show, from the record: a customer's lead counts once (the first report; a duplicate or a
 * retry counts nothing), a sale once per invoiceId (docs/analytics.md, "Conversions"). Acknowledged (2xx) by any of its
 * reports: counted; only unknown outcomes (5xx, no answer): counted at most once; refused (4xx) only: not counted.
 */
export function conversionBounds(ops: readonly Op[]): Map<string, ConversionBounds> {
  const out = new Map<string, ConversionBounds>();
  const boundsOf = (code: string) => {
    let b = out.get(code);
    if (!b) out.set(code, (b = { leads: [0, 0], sales: [0, 0], revenue: [0, 0] }));
    return b;
  };
  const byKey = new Map<string, Op[]>();
  for (const op of ops) {
    if ((op.kind !== 'lead' && op.kind !== 'sale') || !op.code) continue;
    const key = op.kind === 'lead' ? `lead ${op.customerId}` : `sale ${op.invoiceId}`;
    byKey.set(key, [...(byKey.get(key) ?? []), op]);
  }
  for (const reports of byKey.values()) {
    const first = reports[0];
    const acked = reports.some((o) => o.outcome === 'ok');
    const maybe = acked || reports.some((o) => o.outcome === 'unknown');
    if (!maybe) continue;
    const b = boundsOf(first.code!);
    const add = (range: [number, number], n: number) => {
      if (acked) range[0] += n;
      range[1] += n;
    };
    if (first.kind === 'lead') add(b.leads, 1);
    else {
      add(b.sales, 1);
      add(b.revenue, first.amount ?? 0);
    }
  }
  return out;
}

export function checkConversions(record: ChaosRecord): Violation[] {
  const counted = record.settled.conversions;
  const sent = record.ops.some((o) => o.kind === 'lead' || o.kind === 'sale');
  if (!counted)
    return sent
      ? [{ invariant: 'conversions-counted-once', message: 'the workload tracked conversions, but the analytics answer (the funnel) was never read' }]
      : [];
  const out: Violation[] = [];
  const bounds = conversionBounds(record.ops);
  const none: ConversionBounds = { leads: [0, 0], sales: [0, 0], revenue: [0, 0] };
  for (const code of new Set([...bounds.keys(), ...Object.keys(counted)])) {
    const b = bounds.get(code) ?? none;
    const c = counted[code] ?? { leads: 0, sales: 0, revenue: 0 };
    for (const what of ['leads', 'sales', 'revenue'] as const) {
      const [min, max] = b[what];
      if (c[what] < min || c[what] > max)
        out.push({
          invariant: 'conversions-counted-once',
          message: `${code}: ${c[what]} ${what} counted, but ${min === max ? `${min} acknowledged` : `between ${min} (acknowledged) and ${max} (with unknown outcomes)`}`,
        });
    }
  }
  return out;
}

/** Leads and sales over the run: acknowledged, unknown, and what the analytics answer counted. */
export interface ConversionTotals {
  leadsSent: number;
  salesSent: number;
  retries: number;
  leads: [number, number];
  sales: [number, number];
  revenue: [number, number];
  counted: { leads: number; sales: number; revenue: number } | null;
}

export function conversionTotals(record: ChaosRecord): ConversionTotals {
  const sum = (f: (b: ConversionBounds) => [number, number]): [number, number] =>
    [...conversionBounds(record.ops).values()].reduce<[number, number]>((a, b) => [a[0] + f(b)[0], a[1] + f(b)[1]], [0, 0]);
  const counted = record.settled.conversions;
  return {
    leadsSent: record.ops.filter((o) => o.kind === 'lead').length,
    salesSent: record.ops.filter((o) => o.kind === 'sale').length,
    retries: record.ops.filter((o) => o.retry).length,
    leads: sum((b) => b.leads),
    sales: sum((b) => b.sales),
    revenue: sum((b) => b.revenue),
    counted: counted
      ? Object.values(counted).reduce((a, c) => ({ leads: a.leads + c.leads, sales: a.sales + c.sales, revenue: a.revenue + c.revenue }), {
          leads: 0,
          sales: 0,
          revenue: 0,
        })
      : null,
  };
}

/** One overload window (CPU hog or flood): the workload's answers in it, by the platform's time. */
export interface OverloadWindow {
  fault: Fault;
  redirects: number;
  redirectsOk: number;
  redirectP50Ms: number | null;
  redirectMaxMs: number | null;
  apiMaxMs: number | null;
  clientStallMaxMs: number;
  /** 503s with Retry-After (OVERLOADED or DEADLINE_EXCEEDED), the flood's included. */
  shed: number;
}

export function overloadWindows(record: ChaosRecord): OverloadWindow[] {
  const quantile = (xs: number[], q: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] : null);
  return record.faults
    .filter((f) => f.target === 'cpu' || f.target === 'flood')
    .map((fault) => {
      const during = record.ops.filter((o) => o.end >= fault.start && o.start <= fault.end + RECOVERY_MS[fault.target]);
      const own = during.filter((o) => !o.flood && o.status !== null);
      const redirects = own.filter((o) => o.kind === 'redirect');
      const api = own.filter((o) => o.kind !== 'redirect');
      return {
        fault,
        redirects: redirects.length,
        redirectsOk: redirects.filter((o) => !failed(o) && o.status !== 429).length,
        redirectP50Ms: quantile(redirects.map(answerMs), 0.5),
        redirectMaxMs: quantile(redirects.map(answerMs), 1),
        apiMaxMs: quantile(api.map(answerMs), 1),
        clientStallMaxMs: Math.max(0, ...own.map((o) => o.clientStallMs ?? 0)),
        shed: during.filter(shedByDesign).length,
      };
    });
}

export function checkMaxClicks(record: ChaosRecord, links = histories(record.ops)): Violation[] {
  const out: Violation[] = [];
  // Clicks granted but not flushed, and grants held in leases, when Redis may lose a counter can be granted twice (docs/design.md, "Max clicks", Bound).
  // A master cut off from its cluster loses, besides, what it counted after the cut: at most the grants of maxClicks links in the window.
  const limited = new Set([...links.values()].filter((h) => h.maxClicks !== undefined).map((h) => h.code));
  const allowance = record.faults
    .filter((f) => isRedisFault(f.target))
    .reduce(
      (a, f) =>
        a +
        (f.unflushedClicksBefore ?? 0) +
        (f.target === 'redis-partition'
          ? record.ops.filter((r) => r.kind === 'redirect' && r.status === 302 && limited.has(r.code!) && r.end >= f.start && r.start <= f.end).length
          : 0),
      0,
    );
  for (const h of links.values()) {
    if (h.maxClicks === undefined) continue;
    const granted = record.ops.filter((r) => r.kind === 'redirect' && r.code === h.code && r.status === 302).length;
    if (granted > h.maxClicks + allowance)
      out.push({
        invariant: 'max-clicks',
        message: `${h.code}: maxClicks ${h.maxClicks} granted ${granted} redirects (bound: ${h.maxClicks} + ${allowance} unflushed or leased)`,
      });
  }
  return out;
}

/**
 * How late beyond its merge interval a redirect instance may learn the other instance's counts of a
 * visitor: the merge's round trip and its timer's lateness on this busy shared machine, at most.
 */
export const VISITOR_MERGE_LATE_MS = 400;

/** The most requests `ops` (one instance's, of one link) had that could be answered within any `span` ms. */
function mostInSpan(ops: readonly Op[], span: number): number {
  let most = 0;
  for (const r of ops) most = Math.max(most, ops.filter((q) => q.end >= r.start && q.start <= r.start + span).length);
  return most;
}

/**
 * docs/design.md, "Link options", per-link visitor limit: a visitor gets at most limit + each
 * instance's requests within one merge interval (+ its lateness) a minute; an instance killed in the
 * minute takes its unsent counts with it (as many again, for its successor), and while a Redis
 * master is down or paused (+ its recovery) each instance decides alone: instances × limit. Every
 * client of the run sends from 127.0.0.1, so each link has one visitor. Only 302s whose request
 * started and ended in one minute are counted: the server's minute of the others is not known.
 */
export function checkVisitorLimit(record: ChaosRecord, links = histories(record.ops)): Violation[] {
  const out: Violation[] = [];
  const span = (record.config.counterSyncMs ?? 100) + VISITOR_MERGE_LATE_MS;
  const minute = (t: number) => Math.floor(t / 60_000);
  for (const h of links.values()) {
    const limit = h.clicksPerIpPerMinute;
    if (limit === undefined) continue;
    const byMinute = new Map<number, Op[]>();
    for (const r of record.ops) {
      if (r.kind !== 'redirect' || r.code !== h.code) continue;
      for (const m of new Set([minute(r.start), minute(r.end)])) byMinute.set(m, [...(byMinute.get(m) ?? []), r]);
    }
    for (const [m, ops] of byMinute) {
      const certain = ops.filter((r) => r.status === 302 && minute(r.start) === m && minute(r.end) === m).length;
      const [from, to] = [m * 60_000, (m + 1) * 60_000];
      const inMinute = (f: Fault) => f.start < to && f.end + RECOVERY_MS[f.target] >= from;
      const kills = record.faults.filter((f) => f.target === 'redirect' && f.action === 'kill' && inMinute(f));
      const instances = [...new Set(ops.map((r) => r.instance))];
      let allowed: number;
      let why: string;
      if (record.faults.some((f) => isRedisFault(f.target) && inMinute(f))) {
        allowed = (instances.length + kills.length) * limit;
        why = `${instances.length + kills.length} instances alone (a Redis master fault in the minute)`;
      } else {
        const perInstance = instances.map((i) =>
          mostInSpan(
            ops.filter((r) => r.instance === i),
            span,
          ),
        );
        const lost = kills.map((k) =>
          mostInSpan(
            ops.filter((r) => r.instance === k.victim && r.start <= k.start),
            span,
          ),
        );
        allowed = limit + [...perInstance, ...lost].reduce((a, b) => a + b, 0);
        why = `${limit} + [${perInstance.join(', ')}] requests within ${span} ms${lost.length ? ` + [${lost.join(', ')}] unsent at a kill` : ''}`;
      }
      if (certain > allowed)
        out.push({
          invariant: 'visitor-limit',
          message: `${h.code}: clicksPerIpPerMinute ${limit} redirected the visitor ${certain} times in the minute from ${at(record, from)} (bound: ${why} = ${allowed})`,
        });
    }
  }
  return out;
}

// ----------------------------------------------------------------------------- the run in numbers

export interface OpSummary {
  kind: OpKind;
  total: number;
  ok: number;
  fail: number;
  unknown: number;
}

export interface FaultSummary {
  fault: Fault;
  /** Answered (not 5xx, not unanswered) share of redirects and of API calls overlapping the window (fault + recovery). */
  redirectAvailability: number | null;
  apiAvailability: number | null;
  failures: number;
  /** From the component being back to the end of the last failed request before the next fault (0 when none failed after it). */
  recoveredAfterMs: number;
}

export function opSummary(ops: readonly Op[]): OpSummary[] {
  const kinds: OpKind[] = ['create', 'batch', 'edit', 'disable', 'enable', 'delete', 'redirect', 'stats', 'lead', 'sale'];
  return kinds.map((kind) => {
    const of = ops.filter((o) => o.kind === kind);
    return {
      kind,
      total: of.length,
      ok: of.filter((o) => o.outcome === 'ok').length,
      fail: of.filter((o) => o.outcome === 'fail').length,
      unknown: of.filter((o) => o.outcome === 'unknown').length,
    };
  });
}

export function faultSummary(record: ChaosRecord): FaultSummary[] {
  const faults = [...record.faults].sort((a, b) => a.start - b.start);
  return faults.map((fault, i) => {
    const windowEnd = fault.end + RECOVERY_MS[fault.target];
    const during = record.ops.filter((o) => o.end >= fault.start && o.start <= windowEnd);
    const share = (ops: Op[]) => (ops.length ? ops.filter((o) => !failed(o)).length / ops.length : null);
    const nextStart = faults[i + 1]?.start ?? Infinity;
    const failures = record.ops.filter((o) => failed(o) && o.start >= fault.start && o.start < nextStart && excuses(fault, o));
    const lastFailure = Math.max(fault.end, ...failures.map((o) => o.end));
    return {
      fault,
      redirectAvailability: share(during.filter((o) => o.kind === 'redirect')),
      apiAvailability: share(during.filter((o) => o.kind !== 'redirect')),
      failures: failures.length,
      recoveredAfterMs: lastFailure - fault.end,
    };
  });
}

export interface Verdict {
  ops: OpSummary[];
  faults: FaultSummary[];
  clicks: ClickTotals;
  conversions: ConversionTotals;
  overload: OverloadWindow[];
  pressure: PressureSummary;
  results: Array<{ name: Invariant; says: string; violations: Violation[] }>;
  passed: boolean;
}

export function check(record: ChaosRecord): Verdict {
  const links = histories(record.ops);
  const found: Record<Invariant, Violation[]> = {
    'acknowledged-writes': checkAcknowledgedWrites(record, links),
    'redirect-targets': checkRedirectTargets(record, links),
    'clicks-counted-once': checkClicks(record),
    'conversions-counted-once': checkConversions(record),
    errors: checkErrors(record),
    'max-clicks': checkMaxClicks(record, links),
    'visitor-limit': checkVisitorLimit(record, links),
    overload: checkOverload(record),
  };
  const faultErrors = record.faults.filter((f) => f.error);
  found.errors.push(...faultErrors.map((f) => ({ invariant: 'errors' as const, message: `${f.victim} did not come back: ${f.error}` })));
  const results = INVARIANTS.map((i) => ({ ...i, violations: found[i.name] }));
  return {
    ops: opSummary(record.ops),
    faults: faultSummary(record),
    clicks: clickTotals(record),
    conversions: conversionTotals(record),
    overload: overloadWindows(record),
    pressure: pressureSummary(record),
    results,
    passed: results.every((r) => r.violations.length === 0),
  };
}
