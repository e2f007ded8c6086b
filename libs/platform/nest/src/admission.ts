import type { IncomingMessage, ServerResponse } from 'http';
import { Counter, Gauge, Registry } from 'prom-client';
import type { AppConfig } from '@shortlink/config';
import { AdaptiveConcurrencyLimit, Clock, EventLoopLag, RequestDeadline, systemClock, WORK_CLASSES, WorkClass } from '@shortlink/core';
import { compatShedHeaders } from './compat-cors';
import { problem } from './problem-details';

type AppName = 'generation' | 'redirect' | 'analytics';
type Settings = AppConfig['http']['admission'];

/** The analytics reads of the API (stats, breakdowns, visits, the live stream): the lowest class. */
const ANALYTICS_PATH =
  /^\/(?:api\/v1\/(?:stats|events)(?:[/?]|$)|api\/v1\/links\/[^/?]+\/(?:stats|breakdown|visits)(?:[/?]|$)|rest\/v\d+\/(?:short-urls\/[^/?]+\/)?visits)/;

/**
 * The class of a request (docs/design.md, "Overload"), or null for what is never shed (`/health`,
 * which a load balancer and the restarts of the chaos run read). On the redirect app every path
 * outside `/api/` is a visit (`GET /{code}` and its variants); elsewhere an analytics read is
 * `analytics`, another GET/HEAD `read`, anything else `write`; a CORS preflight (OPTIONS) is never shed.
 */
export function workClassOf(app: AppName, method: string, url: string): WorkClass | null {
  if (url === '/health' || url.startsWith('/health?') || url.startsWith('/health/')) return null;
  // A CORS preflight costs nothing to answer, and without its answer a browser cannot read the 503 that may follow.
  if (method === 'OPTIONS') return null;
  if (app === 'redirect' && !url.startsWith('/api/')) return 'redirect';
  const read = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
  if (read && (app === 'analytics' || ANALYTICS_PATH.test(url))) return 'analytics';
  return read ? 'read' : 'write';
}

/**
 * The share of ADMISSION_QUEUE_SHED_MS a class may have waited in the event loop's queue when its
 * handler runs, beyond which it is shed at once (docs/design.md, "Overload"): visits and API writes
 * wait longest, API reads half as long, analytics reads a quarter. A visit never more than half its
 * deadline: what is left must cover the shard look-up.
 */
const QUEUE_SHARE: Readonly<Record<WorkClass, number>> = { redirect: 1, write: 1, read: 0.5, analytics: 0.25 };

type ShedReason = 'limit' | 'deadline' | 'queue';
const SHED_REASONS: readonly ShedReason[] = ['limit', 'deadline', 'queue'];

/** Whether the request has a body that has not all arrived yet (its handler reads it to its end). */
function hasBodyToCome(req: IncomingMessage): boolean {
  if (req.method === 'GET' || req.method === 'HEAD' || req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** What an answer already sent leaves a late handler: nothing to write to. */
function silence(res: ServerResponse): void {
  const self = () => res;
  Object.assign(res, { writeHead: self, setHeader: self, appendHeader: self, removeHeader: () => undefined, flushHeaders: () => undefined });
  Object.assign(res, { write: () => true, end: self });
}

function answer(req: IncomingMessage, res: ServerResponse, status: number, code: string, detail: string, retryAfterSeconds: number): void {
  const body = JSON.stringify(problem(status, code, detail, req.url?.split('?', 1)[0]));
  res.writeHead(status, {
    // A page of another site calling a compatible API (Shlink's web client) reads the 503 and its Retry-After too.
    ...compatShedHeaders(req.headers.origin, req.url ?? '/'),
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    'retry-after': String(retryAfterSeconds),
    'cache-control': 'no-store',
  });
  res.end(body);
}

/**
 * Admission control of one app's HTTP server, in front of everything else (docs/design.md,
 * "Overload"): an adaptive concurrency limit with a share per class (redirects over API writes over
 * reads over analytics reads), 503 `OVERLOADED` with `Retry-After` at once beyond it, and a deadline
 * per request counted from its arrival (the event loop's lag when its handler runs, EventLoopLag,
 * is time it already waited): the calls below it (shard queries, ClickHouse) get only what is left
 * of it (RequestDeadline), and an answer not begun by then is 503 `DEADLINE_EXCEEDED` with
 * `Retry-After`, a visit's too (its handler records the click only with the redirect it sends, and
 * sends nothing once this answer left). A request that arrives while the loop is already later than
 * its class may wait (QUEUE_SHARE) is shed at once with 503 `OVERLOADED`, before any work.
 */
export class AdmissionControl {
  readonly limit: AdaptiveConcurrencyLimit;
  private readonly deadlines: Record<WorkClass, number>;
  private readonly maxQueueMs: Record<WorkClass, number>;
  private readonly shedCount = new Map<string, number>();
  readonly loopLag: EventLoopLag;

  constructor(
    private readonly app: AppName,
    private readonly settings: Settings,
    private readonly clock: Clock = systemClock,
    loopLag?: EventLoopLag,
  ) {
    const latencyTargetMs = app === 'redirect' ? settings.latencyTargetMs.redirect : settings.latencyTargetMs.api;
    const min = app === 'redirect' ? settings.min.redirect : settings.min.api;
    const max = Math.max(min, settings.max);
    this.limit = new AdaptiveConcurrencyLimit({ initial: Math.max(min, settings.initial), min, max, latencyTargetMs, clock });
    const api = settings.deadlineMs.api;
    this.deadlines = { redirect: settings.deadlineMs.redirect, write: api, read: api, analytics: api };
    const queue = (kind: WorkClass) => Math.min(settings.queueShedMs * QUEUE_SHARE[kind], this.deadlines[kind] / 2);
    this.maxQueueMs = { redirect: queue('redirect'), write: queue('write'), read: queue('read'), analytics: queue('analytics') };
    this.loopLag = loopLag ?? new EventLoopLag(20, clock);
    if (settings.enabled && !loopLag) this.loopLag.start();
  }

  get enabled(): boolean {
    return this.settings.enabled;
  }

  /**
   * Serves `req` through `next` if admitted, else answers it. `streamed`: a route whose body may take
   * minutes (a batch upload) keeps its own limits and is neither counted nor given a deadline.
   */
  admit(req: IncomingMessage, res: ServerResponse, streamed: boolean, next: () => void): void {
    const kind = this.settings.enabled && !streamed ? workClassOf(this.app, req.method ?? 'GET', req.url ?? '/') : null;
    if (kind === null) return next();
    const now = this.clock.now();
    const waited = this.loopLag.lagMs();
    if (waited > this.maxQueueMs[kind]) {
      this.count(kind, 'queue');
      return answer(req, res, 503, 'OVERLOADED', 'this instance is too busy to answer in time; retry shortly', 1);
    }
    const permit = this.limit.tryAcquire(kind);
    if (permit === null) {
      this.count(kind, 'limit');
      return answer(req, res, 503, 'OVERLOADED', 'this instance is over its concurrency limit; retry shortly', 1);
    }
    let answered = false;
    const original = res.writeHead;
    // From the request's arrival: it waited `waited` ms in the loop's queue before this handler ran.
    const deadline = { at: now - waited + this.deadlines[kind] };
    // A body the client is still sending is the client's time, not the server's (a password form on a slow
    // link): the deadline waits for the body's end and then counts from it (docs/design.md, "Overload").
    let bodyReceived = !hasBodyToCome(req);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expire = () => {
      if (answered || res.headersSent || !bodyReceived) return;
      answered = true;
      permit.done(true);
      this.count(kind, 'deadline');
      answer(req, res, 503, 'DEADLINE_EXCEEDED', 'the request could not be answered in time; retry shortly', 1);
      silence(res);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(expire, Math.max(0, deadline.at - this.clock.now()));
    };
    if (!bodyReceived)
      req.once('end', () => {
        bodyReceived = true;
        deadline.at = Math.max(deadline.at, this.clock.now() + this.deadlines[kind]);
        arm();
      });
    arm();
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      if (!answered) {
        answered = true;
        clearTimeout(timer);
        permit.done(res.statusCode === 503 || args[0] === 503);
      }
      return (original as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['writeHead'];
    res.once('close', () => {
      clearTimeout(timer);
      if (!answered) {
        answered = true;
        permit.done(true);
      }
    });
    RequestDeadline.run(
      () => deadline.at,
      () => answered,
      next,
    );
  }

  private count(kind: WorkClass, reason: ShedReason): void {
    const key = `${kind} ${reason}`;
    this.shedCount.set(key, (this.shedCount.get(key) ?? 0) + 1);
  }

  /** shortlink_requests_shed_total{class,reason}, shortlink_admission_limit, shortlink_admission_in_flight. */
  register(registry: Registry): void {
    const shed = this.shedCount;
    new Counter({
      name: 'shortlink_requests_shed_total',
      help: 'Requests answered 503 by admission control: over the concurrency limit (reason=limit), past their deadline (reason=deadline), or arrived while the event loop was later than their class may wait (reason=queue)',
      labelNames: ['class', 'reason'],
      registers: [registry],
      collect() {
        this.reset();
        for (const kind of WORK_CLASSES) for (const reason of SHED_REASONS) this.inc({ class: kind, reason }, shed.get(`${kind} ${reason}`) ?? 0);
      },
    });
    const limit = this.limit;
    new Gauge({
      name: 'shortlink_admission_limit',
      help: 'The adaptive concurrency limit of this instance now (requests in flight)',
      registers: [registry],
      collect() {
        this.set(limit.limit);
      },
    });
    const lag = this.loopLag;
    new Gauge({
      name: 'shortlink_event_loop_lag_seconds',
      help: 'How late the event loop runs now: what a request arriving now waits before its handler (admission counts its deadline from arrival)',
      registers: [registry],
      collect() {
        this.set(lag.lagMs() / 1000);
      },
    });
    new Gauge({
      name: 'shortlink_admission_in_flight',
      help: 'Admitted requests whose answer has not started yet',
      registers: [registry],
      collect() {
        this.set(limit.inFlight);
      },
    });
  }
}
