/**
 * What a chaos run records (docs/reliability.md): every client operation with its start, end and
 * outcome, every fault with its window, and what the run read from the servers once it settled.
 * The checker (checker.ts) decides from this record alone; nothing in it is taken on trust.
 */

/** `stats`: an analytics read (`GET /api/v1/links/{code}/stats` on the analytics app), sent only during a flood. */
export type OpKind = 'create' | 'batch' | 'edit' | 'disable' | 'enable' | 'delete' | 'redirect' | 'stats' | 'lead' | 'sale';

/** `ok`: acknowledged (2xx, or the redirect's answer); `fail`: refused for sure (4xx); `unknown`: a 5xx or no answer, the write may have happened. */
export type Outcome = 'ok' | 'fail' | 'unknown';

export interface Op {
  /** The client process that sent it. */
  client: number;
  kind: OpKind;
  /** The app instance asked, e.g. `redirect-1`. */
  instance: string;
  /** The link's code (for a batch, see `rows`). */
  code?: string;
  /** The target a create or an edit sets. */
  url?: string;
  /** `maxClicks` of a create. */
  maxClicks?: number;
  /** `clicksPerIpPerMinute` of a create (every client sends from 127.0.0.1: one visitor). */
  clicksPerIpPerMinute?: number;
  /** A batch's rows: the code and target of each created row, or its status. */
  rows?: Array<{ code?: string; url: string; status: number }>;
  start: number;
  end: number;
  /** The HTTP status, or null when no answer came (timeout, connection refused or reset). */
  status: number | null;
  contentType?: string | null;
  /** A redirect's Location. */
  location?: string | null;
  /** The problem's `code` of an error answer. */
  problem?: string;
  error?: string;
  outcome: Outcome;
  /** The Retry-After header of a 429 or 503 answer (null: none; absent in records of before the flood). */
  retryAfter?: string | null;
  /** A lead's or a sale's customer (`lead`, `sale`; `code` is the link the click id came from, which the lead and sales count for). */
  customerId?: string;
  /** A sale's invoiceId and amount (EUR cents). */
  invoiceId?: string;
  amount?: number;
  /** The same lead or sale sent again (its outcome was unknown, or on purpose). */
  retry?: boolean;
  /** Milliseconds of the request during which the client's own event loop was stalled (absent: none); the answer may have waited that long in the client. */
  clientStallMs?: number;
  /** Sent by the extra loops of a flood window (the traffic beyond capacity), not by the client's own workload. */
  flood?: boolean;
}

/**
 * What a fault hits: a server or an app instance (killed or hung), the network between the apps and a
 * server (`mariadb-link`, `clickhouse-link`: slowed or cut by Toxiproxy; `kafka-link`: Kafka cut off
 * from one redirect instance), a Redis master cut off from the rest of its cluster while the clients
 * still reach it (`redis-partition`; partition.ts), the machine (`cpu`: both cores hogged by stress-ng), or the apps'
 * capacity (`flood`: every client sends far more requests than the apps can serve).
 */
export type FaultTarget =
  | 'redis-master'
  | 'redis-partition'
  | 'mariadb'
  | 'kafka'
  | 'clickhouse'
  | 'analytics'
  | 'redirect'
  | 'generation'
  | 'mariadb-link'
  | 'clickhouse-link'
  | 'kafka-link'
  | 'cpu'
  | 'flood';
/**
 * kill: SIGKILL, then started again; pause: SIGSTOP, then SIGCONT; slow: latency (and, to MariaDB, some
 * connections reset) on the link; cut: the link partitioned (the proxy refuses and drops connections, or
 * iptables drops every packet between the two sides);
 * hog: a CPU hog on both cores; flood: the clients' extra loops (client.ts, FLOOD_LOOPS) for the window.
 */
export type FaultAction = 'kill' | 'pause' | 'slow' | 'cut' | 'hog' | 'flood';

export interface Fault {
  target: FaultTarget;
  action: FaultAction;
  /** What exactly was hit: `redis-node-7502`, `mysql-b`, `redirect-1`, … */
  victim: string;
  /** SIGKILL or SIGSTOP sent, the link's toxics added, the hog started. */
  start: number;
  /** The component is back: restarted and healthy, SIGCONT sent, the link clean again, the hog ended. */
  end: number;
  /** How long it was meant to stay down. */
  downMs: number;
  /** What the fault saw, in words (a Redis partition: the old master's answers to a write and when its replica took over). */
  note?: string;
  /** Set when bringing it back failed (the run then fails). */
  error?: string;
  /**
   * What a lost `maxClicks` counter could grant again, summed over the redirect instances, read just before the fault: the clicks
   * granted and not yet flushed to the shards, and the grants held in leases (docs/design.md, "Max clicks", Bound).
   */
  unflushedClicksBefore?: number;
}

/** A redirect instance's click accounting, from its last /metrics scrape (a killed one's last scrape before the kill). */
export interface RedirectIncarnation {
  instance: string;
  pid: number;
  /** `shortlink_click_events_dropped_total`. */
  dropped: number;
  /** Killed with SIGKILL: its buffered clicks went with it. */
  killedAt?: number;
  /**
   * Its last scrape before the kill: when it was sent, and `shortlink_click_buffer_size` then. The clicks lost with it are at most
   * that buffer plus the 302s it answered from that moment until the kill (checker.ts, `atRiskAtKill`).
   */
  lastScrape?: { at: number; buffer: number };
}

/** What the run read once it settled. */
export interface Settled {
  at: number;
  /**
   * Clicks per code in each rollup (`link_minute`, `link_hour`, `link_day`) of the run's domain, and
   * the raw visits (`visits`, which the Shlink API serves; absent from records of runs before it was read).
   */
  counted: Record<string, { minute: number; hour: number; day: number; visits?: number }>;
  incarnations: RedirectIncarnation[];
  /** Each created link as the API (`GET /api/v1/links/{code}`) and a redirect instance answer it. */
  /**
   * Leads, sales and revenue (EUR cents) per code of the run's domain, from the analytics answer (`GET /api/v1/stats/conversions`,
   * the funnel) once it settled; absent from records of runs before the workload tracked conversions.
   */
  conversions?: Record<string, { leads: number; sales: number; revenue: number }>;
  links: Record<
    string,
    { apiStatus: number | null; apiUrl?: string; apiState?: string; redirectStatus: number | null; location?: string | null; problem?: string }
  >;
}

export interface RunConfig {
  seed: number;
  mode: 'short' | 'long';
  /** REDIRECT_COUNTER_SYNC_MS: how often a redirect merges its visitor counts with the shared windows (docs/design.md, "Link options"). */
  counterSyncMs?: number;
  /** README, "When an edit reaches the redirect". */
  propagationBoundMs: number;
  /** REDIRECT_L1_TTL_MS: how long an instance that missed a change may serve the old value (docs/design.md, "Edits reach every instance"). */
  l1TtlMs: number;
  /**
   * The propagation bound under a Redis fault (docs/design.md, "Edits reach every instance"): from
   * the later of the acknowledgement and the master being back. Absent in records of before the
   * outbox, which allowed the L1 TTL instead.
   */
  faultBoundMs?: number;
}

/**
 * The machine's CPU pressure (Linux PSI, `/proc/pressure/cpu`, `some`: the share of the time at least one runnable task
 * waited for a CPU), sampled every second by the run; absent where the kernel has no PSI, and in records of before.
 */
export interface CpuPressureSample {
  from: number;
  to: number;
  /** 0–1. */
  some: number;
}

export interface ChaosRecord {
  config: RunConfig;
  cpuPressure?: CpuPressureSample[];
  startedAt: number;
  /** The workload stopped. */
  endedAt: number;
  ops: Op[];
  faults: Fault[];
  settled: Settled;
}
