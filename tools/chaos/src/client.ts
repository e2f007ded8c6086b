/**
 * One client process of a chaos run (forked by main.ts): creates (single and batch), edits,
 * disables, enables, deletes and redirects over a Zipf mix of every code the run created, and
 * records each operation with its start, end and outcome. It writes only the links it created
 * itself, one write at a time per link, so the checker knows the order of each link's writes.
 * A flood client (no links of its own at start, no workload loops) runs FLOOD_LOOPS loops without any pause during a
 * flood window (`flood` on, then off): the same mix and analytics reads, far beyond what the apps can serve; their
 * operations are marked `flood`.
 * A workload client also reports conversions (issue 38), as a tenant's backend would: a lead for a click id it got in the
 * Location of a link with `trackConversions`, then sales of that customer with an invoiceId, with a key of the
 * `conversions:write` scope only; some sent twice on purpose, and one whose outcome is unknown sent again (the same
 * customerId or invoiceId), so the checker can verify each counts once.
 * The client measures its own event loop's stalls (a timer every 10 ms): the time an answer may have waited in the
 * client, not in the platform, is recorded per operation (`clientStallMs`), and the workload clients run at a higher
 * scheduling priority than the apps and the CPU hog, as users on machines of their own would.
 * Messages: in `start` (ClientConfig), `codes` (what the other clients created), `flood`, `stop`; out `created`, `ready`, `done`.
 */
import { AsyncLocalStorage } from 'async_hooks';
import { writeFileSync } from 'fs';
import { setPriority } from 'os';
import { Op, OpKind, Outcome } from './record';
import { seeded, zipfRank } from './schedule';

export interface ClientConfig {
  client: number;
  seed: number;
  apiKey: string;
  /** A key with the `conversions:write` scope only, for track/lead and track/sale. */
  conversionsKey?: string;
  generation: Array<{ name: string; base: string }>;
  redirect: Array<{ name: string; base: string }>;
  /** The analytics instances (asked only during a flood). */
  analytics: Array<{ name: string; base: string }>;
  /** Distinguishes the run's target URLs. */
  tag: string;
  /** Links this client creates before the faults start. */
  initialLinks: number;
  /** Operations per second this client aims at, and how many it keeps in flight at most. */
  rate: number;
  concurrency: number;
  /** Where the client writes its operations (JSON array) when stopped. */
  out: string;
}

export type ToClient =
  { type: 'start'; config: ClientConfig } | { type: 'codes'; codes: string[] } | { type: 'flood'; on: boolean; until?: number } | { type: 'stop' };
export type FromClient = { type: 'created'; codes: string[] } | { type: 'ready' } | { type: 'done' };

const BROWSER_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const API_TIMEOUT_MS = 10_000;
const REDIRECT_TIMEOUT_MS = 5_000;
/**
 * Loops of a flood client (main.ts starts 2, which send nothing outside a flood) during a flood, each sending its next
 * request as soon as the last is answered: 2 × 64 requests in flight at all times, where the workload keeps 3 × 8 with
 * pauses (≈ 75 requests/s in all).
 */
export const FLOOD_LOOPS = 64;
/** Share of a flood loop's requests that are analytics reads; the rest follow MIX. */
const FLOOD_STATS_SHARE = 0.3;
/** Marks the operations of the flood loops. */
const flooding = new AsyncLocalStorage<boolean>();

/** Shares of the operations (the rest are redirects). */
const MIX: Array<[OpKind, number]> = [
  ['create', 0.05],
  ['lead', 0.02],
  ['sale', 0.02],
  ['batch', 0.01],
  ['edit', 0.05],
  ['disable', 0.02],
  ['enable', 0.02],
  ['delete', 0.01],
];

interface Own {
  maxClicks?: number;
  clicksPerIpPerMinute?: number;
  busy: boolean;
  deleted: boolean;
  edits: number;
}

// After its 'done' the main process may close the channel first: a late message (a create that answered meanwhile) is dropped, not a crash.
const send = (msg: FromClient) => {
  if (process.connected) process.send?.(msg, undefined, undefined, () => undefined);
};

/** How often the client's own event loop is sampled; a tick later than this by more than STALL_MIN_MS is a stall. */
const STALL_TICK_MS = 10;
const STALL_MIN_MS = 5;
/** Shares of the creates that turn conversion tracking on, and of the leads and sales that are sent twice on purpose. */
const TRACK_SHARE = 0.3;
const RETRY_SHARE = 0.25;

/** The client's own event-loop stalls, [from, to] epoch ms, and how much of a span they cover. */
export class Stalls {
  readonly spans: Array<[number, number]> = [];
  private last = Date.now();
  private timer: ReturnType<typeof setInterval> | undefined;

  start(): void {
    this.last = Date.now();
    this.timer = setInterval(() => this.tick(Date.now()), STALL_TICK_MS);
  }
  stop(): void {
    clearInterval(this.timer);
  }
  tick(now: number): void {
    const late = now - this.last - STALL_TICK_MS;
    if (late > STALL_MIN_MS) this.spans.push([now - late, now]);
    this.last = now;
  }
  /** Milliseconds of [start, end] during which this client's loop was stalled. */
  within(start: number, end: number): number {
    let n = 0;
    for (const [a, b] of this.spans) if (b > start && a < end) n += Math.min(b, end) - Math.max(a, start);
    return n;
  }
}

function run(c: ClientConfig): { stop: () => Promise<void>; add: (codes: string[]) => void; flood: (on: boolean, until?: number) => void } {
  const random = seeded(c.seed * 31 + c.client);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const ops: Op[] = [];
  const all: string[] = [];
  const own = new Map<string, Own>();
  let urls = 0;
  let stopping = false;
  /** Click ids from the Location of 302s of links with conversion tracking, and the link they came from. */
  const clickIds: Array<{ clickId: string; code: string }> = [];
  /** Customers whose lead was acknowledged, with their link. */
  const customers: Array<{ customerId: string; code: string }> = [];
  let conversions = 0;
  const nextUrl = (code?: string) => `https://example.com/chaos/${c.tag}/${c.client}/${code ?? 'new'}/${urls++}`;

  const outcomeOf = (status: number | null): Outcome => (status === null || status >= 500 ? 'unknown' : status >= 400 ? 'fail' : 'ok');

  /** One HTTP call, recorded. `body` is JSON; `read` turns a 2xx answer into the op's details. */
  async function call(
    kind: OpKind,
    target: { name: string; base: string },
    path: string,
    init: { method: string; body?: unknown; timeoutMs: number; headers?: Record<string, string> },
    details: Partial<Op>,
    read?: (res: Response, op: Op) => Promise<void>,
  ): Promise<Op> {
    const op: Op = { client: c.client, kind, instance: target.name, ...details, start: Date.now(), end: 0, status: null, outcome: 'unknown' };
    if (flooding.getStore()) op.flood = true;
    try {
      const res = await fetch(`${target.base}${path}`, {
        method: init.method,
        redirect: 'manual',
        headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(init.timeoutMs),
      });
      op.status = res.status;
      op.contentType = res.headers.get('content-type');
      if (res.status === 429 || res.status === 503) op.retryAfter = res.headers.get('retry-after');
      if (res.status >= 400) {
        const text = await res.text();
        try {
          op.problem = (JSON.parse(text) as { code?: string }).code;
        } catch {
          op.problem = undefined;
        }
      } else if (read) await read(res, op);
      else await res.arrayBuffer();
    } catch (e) {
      op.error = (e as Error).name === 'TimeoutError' ? 'timeout' : String((e as Error & { cause?: { code?: string } }).cause?.code ?? (e as Error).message);
    }
    op.end = Date.now();
    op.outcome = outcomeOf(op.status);
    ops.push(op);
    return op;
  }

  const api = (kind: OpKind, method: string, path: string, body: unknown, details: Partial<Op>, read?: (res: Response, op: Op) => Promise<void>) =>
    call(kind, pick(c.generation), path, { method, body, timeoutMs: API_TIMEOUT_MS, headers: { 'x-api-key': c.apiKey } }, details, read);

  const created = (codes: string[], maxClicks?: number, clicksPerIpPerMinute?: number) => {
    for (const code of codes) own.set(code, { maxClicks, clicksPerIpPerMinute, busy: false, deleted: false, edits: 0 });
    all.push(...codes);
    send({ type: 'created', codes });
  };

  async function create(): Promise<void> {
    const url = nextUrl();
    const maxClicks = random() < 0.2 ? 20 + Math.floor(random() * 40) : undefined;
    // Every client sends from 127.0.0.1: the run is one visitor, whom such a link holds to its limit a minute over both instances.
    const clicksPerIpPerMinute = random() < 0.2 ? 20 + Math.floor(random() * 20) : undefined;
    const trackConversions = c.conversionsKey !== undefined && random() < TRACK_SHARE ? true : undefined;
    const op = await api(
      'create',
      'POST',
      '/api/v1/links',
      { url, maxClicks, clicksPerIpPerMinute, trackConversions },
      { url, maxClicks, clicksPerIpPerMinute },
      async (res, o) => {
        o.code = ((await res.json()) as { code?: string }).code;
      },
    );
    if (op.outcome === 'ok' && op.code) created([op.code], maxClicks, clicksPerIpPerMinute);
  }

  async function batch(): Promise<void> {
    const rows = Array.from({ length: 5 }, () => ({ url: nextUrl() }));
    const op = await api('batch', 'POST', '/api/v1/links/batch', rows, { rows: rows.map((r) => ({ url: r.url, status: 0 })) }, async (res, o) => {
      const lines = (await res.text()).split('\n').filter(Boolean);
      for (const line of lines) {
        const l = JSON.parse(line) as { row?: number; status?: number; link?: { code: string } };
        if (l.row !== undefined && o.rows?.[l.row]) Object.assign(o.rows[l.row], { status: l.status ?? 0, code: l.link?.code });
      }
    });
    const ok = (op.rows ?? []).filter((r) => r.status === 201 && r.code).map((r) => r.code!);
    if (ok.length) created(ok);
  }

  /** One write of one of this client's links that is not being written. */
  async function write(kind: 'edit' | 'disable' | 'enable' | 'delete'): Promise<void> {
    const free = [...own.entries()].filter(([, o]) => !o.busy && !o.deleted);
    if (!free.length) return;
    const [code, link] = pick(free);
    link.busy = true;
    try {
      const path = `/api/v1/links/${encodeURIComponent(code)}`;
      if (kind === 'delete') {
        const op = await api('delete', 'DELETE', path, undefined, { code });
        if (op.outcome === 'ok') link.deleted = true;
      } else if (kind === 'edit') {
        const url = nextUrl(code);
        await api('edit', 'PATCH', path, { url }, { code, url });
      } else await api(kind, 'PATCH', path, { status: kind === 'disable' ? 'disabled' : 'active' }, { code });
    } finally {
      link.busy = false;
    }
  }

  async function redirect(): Promise<void> {
    if (!all.length) return;
    // Newest first: a new link gets most of its clicks early; one in ten requests picks any link.
    const code = random() < 0.9 ? all[all.length - 1 - zipfRank(all.length, 1.1, random)] : pick(all);
    const op = await call(
      'redirect',
      pick(c.redirect),
      `/${encodeURIComponent(code)}`,
      { method: 'GET', timeoutMs: REDIRECT_TIMEOUT_MS, headers: { 'user-agent': BROWSER_UA } },
      { code },
      async (res, o) => {
        o.location = res.headers.get('location');
        await res.arrayBuffer();
      },
    );
    const clickId = op.status === 302 && op.location ? new URL(op.location).searchParams.get('sl_cid') : null;
    if (clickId && !flooding.getStore() && clickIds.length < 500) clickIds.push({ clickId, code });
  }

  /** A track call; sent again when its outcome is unknown (as a backend retries), and, RETRY_SHARE of the time, twice on purpose. */
  async function track(kind: 'lead' | 'sale', path: string, body: Record<string, unknown>, details: Partial<Op>): Promise<Op> {
    const post = (retry: boolean) =>
      call(
        kind,
        pick(c.generation),
        path,
        { method: 'POST', body, timeoutMs: API_TIMEOUT_MS, headers: { 'x-api-key': c.conversionsKey! } },
        {
          ...details,
          ...(retry ? { retry: true } : {}),
        },
      );
    const first = await post(false);
    if (first.outcome === 'unknown' || random() < RETRY_SHARE) {
      const again = await post(true);
      if (again.outcome === 'ok') return again;
    }
    return first;
  }

  /** A customer signs up: a lead for a click id this client got (one customer per click id). */
  async function lead(): Promise<void> {
    const click = flooding.getStore() ? undefined : clickIds.shift();
    if (!click) return redirect();
    const customerId = `${c.tag}-c${c.client}-${conversions++}`;
    const op = await track('lead', '/api/v1/track/lead', { clickId: click.clickId, eventName: 'Sign up', customerId }, { code: click.code, customerId });
    if (op.outcome === 'ok') customers.push({ customerId, code: click.code });
  }

  /** A payment of a customer whose lead was acknowledged, with an invoiceId of its own. */
  async function sale(): Promise<void> {
    if (!customers.length || flooding.getStore()) return redirect();
    const { customerId, code } = pick(customers);
    const invoiceId = `${c.tag}-i${c.client}-${conversions++}`;
    const amount = 100 + Math.floor(random() * 9900);
    await track(
      'sale',
      '/api/v1/track/sale',
      { customerId, amount, currency: 'EUR', eventName: 'Purchase', invoiceId },
      { code, customerId, invoiceId, amount },
    );
  }

  /** An analytics read of any link (only the flood sends them). */
  async function stats(): Promise<void> {
    if (!all.length || !c.analytics.length) return;
    const code = pick(all);
    await call(
      'stats',
      pick(c.analytics),
      `/api/v1/links/${encodeURIComponent(code)}/stats`,
      { method: 'GET', timeoutMs: API_TIMEOUT_MS, headers: { 'x-api-key': c.apiKey } },
      { code },
    );
  }

  async function one(): Promise<void> {
    let u = random();
    for (const [kind, share] of MIX) {
      if ((u -= share) < 0) {
        if (kind === 'create') return create();
        if (kind === 'batch') return batch();
        if (kind === 'lead') return c.conversionsKey ? lead() : redirect();
        if (kind === 'sale') return c.conversionsKey ? sale() : redirect();
        return write(kind as 'edit' | 'disable' | 'enable' | 'delete');
      }
    }
    return redirect();
  }

  const stalls = new Stalls();
  stalls.start();
  const loops: Array<Promise<void>> = [];
  const start = async () => {
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = w; i < c.initialLinks; i += 4) await create();
      }),
    );
    send({ type: 'ready' });
    const perLoopMs = (1000 * c.concurrency) / c.rate;
    for (let l = 0; l < c.concurrency; l++)
      loops.push(
        (async () => {
          while (!stopping) {
            const t = Date.now();
            await one().catch(() => undefined);
            const wait = perLoopMs * (0.5 + random()) - (Date.now() - t);
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          }
        })(),
      );
  };
  const started = start();

  let flood: { on: boolean; loops: Array<Promise<void>> } | undefined;
  /** `until`: the window's end (epoch ms): a client saturated by its own loops reads the message that ends it late (1 s in a long run). */
  const floodOn = (until: number) => {
    if (flood?.on || stopping) return;
    const state: { on: boolean; loops: Array<Promise<void>> } = { on: true, loops: [] };
    flood = state;
    for (let l = 0; l < FLOOD_LOOPS; l++)
      state.loops.push(
        flooding.run(true, async () => {
          while (state.on && !stopping && Date.now() < until) await (random() < FLOOD_STATS_SHARE ? stats() : one()).catch(() => undefined);
        }),
      );
  };

  return {
    flood: (on: boolean, until = Number.POSITIVE_INFINITY) => {
      if (on) floodOn(until);
      else if (flood) flood.on = false;
    },
    stop: async () => {
      stopping = true;
      await started;
      await Promise.all([...loops, ...(flood?.loops ?? [])]);
      stalls.stop();
      for (const op of ops) {
        const stalled = stalls.within(op.start, op.end);
        if (stalled > 0) op.clientStallMs = stalled;
      }
      writeFileSync(c.out, JSON.stringify(ops));
    },
    add: (codes: string[]) => void all.push(...codes),
  };
}

if (require.main === module) {
  let client: ReturnType<typeof run> | undefined;
  process.on('message', (m: ToClient) => {
    if (m.type === 'start') {
      // The workload stands for users on machines of their own: ahead of the apps and the CPU hog for the CPU (root may raise it).
      if (m.config.concurrency > 0)
        try {
          setPriority(-10);
        } catch {
          // not root: the stalls it then has are measured (clientStallMs)
        }
      client = run(m.config);
    } else if (m.type === 'codes') client?.add(m.codes);
    else if (m.type === 'flood') client?.flood(m.on, m.until);
    else if (m.type === 'stop')
      void client?.stop().then(() => {
        send({ type: 'done' });
        process.disconnect?.();
      });
  });
}
