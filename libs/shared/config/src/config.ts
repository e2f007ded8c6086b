import { isIP } from 'net';
import { z } from 'zod';

const port = z.coerce.number().int().min(1).max(65535);
/** 0 lets the system pick a free port (tests run many listeners side by side). */
const adminPort = z.coerce.number().int().min(0).max(65535);
const csv = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
);
/** Switches take the README's spellings ("Configuration"), exactly these: anything else fails the boot. */
const SWITCH_SPELLINGS = ['true', 'false', 'on', 'off', '1', '0'] as const;
const bool = z
  .enum(SWITCH_SPELLINGS, { error: (issue) => `must be one of ${SWITCH_SPELLINGS.join('|')}, got "${String(issue.input)}"` })
  .transform((v) => v === 'true' || v === 'on' || v === '1');
const driver = <T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z.enum(values, { error: (issue) => `must be one of ${values.join('|')}, got "${String(issue.input)}"` }).default(fallback as never);

/** The files of a GEO_DATABASE that names files. */
const geoFiles = (s: string): string[] =>
  s
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);

const SHARD_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Every environment variable the platform reads, with defaults for the embedded profile. */
export const envSchema = z.object({
  NODE_ENV: z.string().default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** json; pretty (readable lines); auto = pretty when stdout is a terminal, else json. */
  LOG_FORMAT: driver(['auto', 'json', 'pretty'] as const, 'auto'),
  SHORTLINK_DATA_DIR: z.string().default('./data'),
  HOST: z.string().default('127.0.0.1'),
  GENERATION_PORT: port.default(8081),
  REDIRECT_PORT: port.default(8080),
  ANALYTICS_PORT: port.default(8082),
  /** Operator listeners (/metrics, /internal/*, /health/details): loopback unless told otherwise. */
  ADMIN_HOST: z.string().default('127.0.0.1'),
  GENERATION_ADMIN_PORT: adminPort.default(9081),
  REDIRECT_ADMIN_PORT: adminPort.default(9080),
  ANALYTICS_ADMIN_PORT: adminPort.default(9082),
  /** Load balancers whose X-Forwarded-For is believed (CIDRs or addresses); none by default. */
  TRUSTED_PROXIES: csv.default([]),
  /** Slow clients: a request's headers must arrive within this, the whole request within the next. */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1000).max(120_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  /**
   * Web origins whose pages may call the generation and analytics APIs (CORS), e.g.
   * `https://console.example.com`; `*` for any origin (then without cookies). None by default.
   */
  CORS_ORIGINS: csv.default([]),
  /** Failed API-key checks allowed per client address and minute before 429 (0 = off). */
  AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(0).default(20),
  /**
   * Plans (docs/design.md, "Tenants, keys and plans"): API requests per minute per tenant (all its
   * keys together), shared by every instance; batch rows per tenant in a sliding 24 h; active keys
   * per tenant; batch requests running at once per tenant.
   */
  PLAN_FREE_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).default(100),
  PLAN_PAID_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).default(10_000),
  PLAN_FREE_BATCH_ROWS_PER_DAY: z.coerce.number().int().min(0).default(10_000),
  PLAN_PAID_BATCH_ROWS_PER_DAY: z.coerce.number().int().min(0).default(5_000_000),
  PLAN_FREE_MAX_KEYS: z.coerce.number().int().min(1).max(10_000).default(5),
  PLAN_PAID_MAX_KEYS: z.coerce.number().int().min(1).max(10_000).default(100),
  PLAN_FREE_CONCURRENT_BATCHES: z.coerce.number().int().min(1).max(1000).default(2),
  PLAN_PAID_CONCURRENT_BATCHES: z.coerce.number().int().min(1).max(1000).default(10),
  /** Batch creation and bulk changes (docs/design.md, "Batch creation"). */
  BATCH_MAX_ROWS: z.coerce.number().int().min(1).max(1_000_000).default(100_000),
  BATCH_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(256 * 1024 * 1024),
  /** Rows validated, charged, recorded and answered together; also the memory bound of a batch. */
  BATCH_CHUNK_ROWS: z.coerce.number().int().min(1).max(10_000).default(1000),
  /** Rows per multi-row INSERT at most. */
  BATCH_INSERT_ROWS: z.coerce.number().int().min(1).max(10_000).default(500),
  /** A batch request may take this long to arrive (other requests: HTTP_REQUEST_TIMEOUT_MS). */
  BATCH_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(600_000),
  /** How long a batch's Idempotency-Key and its answer are kept. */
  BATCH_IDEMPOTENCY_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(24),
  /** An instance's claim on a running batch lasts this long without renewal (a retry after a crash waits at most this). */
  BATCH_LEASE_MS: z.coerce.number().int().min(500).max(600_000).default(10_000),
  BULK_MAX_LINKS: z.coerce.number().int().min(1).max(100_000).default(10_000),
  BULK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  /** Public base of short URLs, e.g. https://sho.rt; defaults to the redirect app's address. */
  SHORTLINK_PUBLIC_BASE_URL: z.string().url().optional(),
  /** Domain links are created on when none is given; extra short domains served by redirect. */
  SHORTLINK_DEFAULT_DOMAIN: z.string().min(1).optional(),
  SHORTLINK_DOMAINS: csv.default([]),
  SHORTLINK_BOOTSTRAP_API_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  /**
   * Keys of the code scrambler and of the visitor hash (docs/design.md, "Security model").
   * Required with DB_DRIVER=mysql; the embedded profile generates them into its data directory.
   */
  SHORTLINK_CODE_SECRET: z.string().optional(),
  SHORTLINK_VISITOR_SECRET: z.string().optional(),
  CODE_STRATEGY: driver(['sequence', 'hash'] as const, 'sequence'),
  /** URL safety: also refuse names that resolve to non-public addresses (a DNS lookup per URL). */
  URL_DNS_CHECK: bool.default(false),
  URL_DNS_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(2000),
  /** Domains refused as targets, one per line (a listed domain covers its subdomains). */
  BLOCKED_DOMAINS_FILE: z.string().min(1).optional(),
  /** A deleted or expired code is not handed out again for this many days. */
  RETIRED_CODE_DAYS: z.coerce.number().int().min(0).max(3650).default(90),
  /** How often the expiry job marks expired links and purges the long-expired. */
  EXPIRY_JOB_INTERVAL_MS: z.coerce.number().int().min(1000).default(60_000),
  /**
   * The outbox relay of the generation app (docs/design.md, "Edits reach every instance"): how often
   * it reads the shards' outboxes, how long its claim on an event lasts (then another relay takes it
   * over), and how long after a delivery to the caches it reads it back.
   */
  OUTBOX_RELAY_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  OUTBOX_LEASE_MS: z.coerce.number().int().min(1000).max(600_000).default(10_000),
  OUTBOX_CONFIRM_AFTER_MS: z.coerce.number().int().min(100).max(600_000).default(3000),
  ID_BLOCK_SIZE: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  /** Days audit entries are kept; the expiry job deletes older ones in batches (docs/design.md, "Audit log"). */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
  /**
   * People and sessions (docs/design.md, "People and sessions"): where people accept invitations
   * (the console; default the generation app's /console), how long an invitation works, the SMTP
   * server invitations are mailed through (none: they are only in the API's answer), passwords'
   * minimum length, sessions' idle and absolute lifetimes and their cookie's Secure attribute
   * (auto: when the request came over https, as ClientAddressResolver.isHttps says, or SHORTLINK_CONSOLE_URL is https), and failed sign-ins allowed per
   * account and per address in a window before 429.
   */
  SHORTLINK_CONSOLE_URL: z.string().url().optional(),
  /** The analytics app's address, where the console opens a link's analytics (the dashboard, in the same session); default: the console's host on ANALYTICS_PORT. */
  SHORTLINK_ANALYTICS_URL: z.string().url().optional(),
  /**
   * Where the generation app reaches the analytics app's query API for the console (server to
   * server: GET /api/analytics/v1/… is relayed there with the person's session); default:
   * SHORTLINK_ANALYTICS_URL, else http://127.0.0.1:ANALYTICS_PORT (HOST when it names one address).
   */
  SHORTLINK_ANALYTICS_API_URL: z.string().url().optional(),
  /**
   * The API clients' settings (the `shortlink` CLI, links:import, links:export; loadClientConfig,
   * client-config.ts), never read by the apps: the generation API's address (default
   * http://127.0.0.1:8081) and the key they send as x-api-key.
   */
  SHORTLINK_API_URL: z.string().url().optional(),
  SHORTLINK_API_KEY: z.string().min(1).optional(),
  INVITATION_TTL_HOURS: z.coerce.number().int().min(1).max(720).default(72),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^\s]+$/, 'must be smtp://[user:pass@]host[:port] or smtps://…')
    .optional(),
  MAIL_FROM: z.string().min(3).max(320).default('shortlink <no-reply@localhost>'),
  PASSWORD_MIN_LENGTH: z.coerce.number().int().min(8).max(128).default(12),
  SESSION_IDLE_MINUTES: z.coerce.number().int().min(1).max(43_200).default(120),
  SESSION_ABSOLUTE_HOURS: z.coerce.number().int().min(1).max(8760).default(24),
  SESSION_COOKIE_SECURE: driver(['auto', 'on', 'off'] as const, 'auto'),
  SIGN_IN_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(10),
  SIGN_IN_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(50),
  SIGN_IN_THROTTLE_WINDOW_SECONDS: z.coerce.number().int().min(10).max(3600).default(300),
  /**
   * Single sign-on with a tenant's OpenID Connect provider (docs/design.md, "Single sign-on"): the
   * redirect URI registered with the providers (this app's /api/v1/auth/sso/callback as the browser
   * reaches it), how long a call to a provider may take, and whether http:// issuers are accepted
   * (tests and closed networks only: tokens would cross the network in the clear).
   */
  SSO_CALLBACK_URL: z.string().url().optional(),
  SSO_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(120).default(10),
  SSO_ALLOW_INSECURE_ISSUERS: bool.default(false),

  DB_DRIVER: driver(['sqlite', 'mysql'] as const, 'sqlite'),
  SHARD_STRATEGY: driver(['ring', 'jump'] as const, 'ring'),
  SHARD_VIRTUAL_NODES: z.coerce.number().int().min(1).max(10_000).default(150),
  /** sqlite: shard names, one file each under SHORTLINK_DATA_DIR/shards. */
  SQLITE_SHARDS: csv.default(['s0', 's1', 's2', 's3']),
  /** mysql: name=url pairs, e.g. s0=mysql://u:p@127.0.0.1:3307/shortlink_s0,s1=... */
  MYSQL_SHARDS: z.string().optional(),
  MYSQL_META_URL: z.string().optional(),
  MYSQL_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(10),
  /** mysql: shards that exist but are not on the ring yet (name=url pairs): where `reshard --add` can move links. */
  MYSQL_SPARE_SHARDS: z.string().optional(),
  /** How often each app reads the versioned shard ring from the meta database (docs/design.md, "Online resharding"). */
  SHARD_RING_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  /** How often while a move is under way: the frozen step holds writes of moving links for about two of these. */
  SHARD_RING_MOVE_POLL_MS: z.coerce.number().int().min(20).max(60_000).default(100),
  /** An app that could not read the ring for this long stops writing links until it can. */
  SHARD_RING_LEASE_MS: z.coerce.number().int().min(500).max(600_000).default(10_000),
  /** Longest one shard operation may take before the request gets 503 SHARD_UNAVAILABLE (0: unbounded). */
  SHARD_TIMEOUT_MS: z.coerce.number().int().min(0).max(120_000).default(3000),
  /** Consecutive failures after which a shard is skipped (503 at once) for SHARD_BREAKER_OPEN_MS. */
  SHARD_BREAKER_FAILURES: z.coerce.number().int().min(1).default(5),
  SHARD_BREAKER_OPEN_MS: z.coerce.number().int().min(10).default(1000),

  CACHE_DRIVER: driver(['memory', 'redis'] as const, 'memory'),
  REDIS_CLUSTER_NODES: csv.optional(),
  /**
   * How the commands of one event-loop turn reach a node: `cork` (one socket write per node, no
   * extra objects), `pipeline` (ioredis auto-pipelining), `off` (one write per command).
   */
  REDIS_WRITE_BATCHING: driver(['cork', 'pipeline', 'off'] as const, 'cork'),
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  MEMORY_CACHE_MAX_ENTRIES: z.coerce.number().int().min(100).default(1_000_000),

  BUS_DRIVER: driver(['memory', 'kafka'] as const, 'memory'),
  KAFKA_BROKERS: csv.optional(),
  KAFKA_CLICK_TOPIC: z.string().default('shortlink.clicks'),
  KAFKA_CLICK_PARTITIONS: z.coerce.number().int().min(1).max(1000).default(6),
  KAFKA_CONSUMER_GROUP: z.string().default('shortlink-analytics'),
  /** The platform's own events (link changes, batches) the webhook deliverer consumes (docs/design.md, "Webhooks"). */
  KAFKA_EVENTS_TOPIC: z.string().default('shortlink.events'),
  /** The webhook deliverer's consumer group on the events topic; `<it>.clicks` is its group on the click topic. */
  KAFKA_WEBHOOK_CONSUMER_GROUP: z.string().default('shortlink-webhooks'),
  /** Webhooks: deliver to private, loopback and link-local addresses too (tests, private deployments). */
  WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  /** Webhooks: the delay before the second attempt; each next one doubles (with jitter) up to WEBHOOK_RETRY_MAX_MS. */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(5000),
  WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().min(10).max(86_400_000).default(3_600_000),
  /** Webhooks: attempts go on this long after the event (24 h). */
  WEBHOOK_RETRY_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(7 * 86_400_000)
    .default(86_400_000),
  /** Webhooks: an endpoint whose every attempt failed this long is disabled (3 days). */
  WEBHOOK_DISABLE_AFTER_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(30 * 86_400_000)
    .default(3 * 86_400_000),
  /** Webhooks: how long one attempt waits for the receiver's answer. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  CLICK_BUFFER_CAPACITY: z.coerce.number().int().min(1).default(100_000),
  CLICK_BUFFER_BATCH_SIZE: z.coerce.number().int().min(1).default(500),
  CLICK_BUFFER_FLUSH_MS: z.coerce.number().int().min(1).default(200),

  OLAP_DRIVER: driver(['chdb', 'clickhouse'] as const, 'chdb'),
  CLICKHOUSE_URL: z.string().url().optional(),
  CLICKHOUSE_USER: z.string().default('default'),
  CLICKHOUSE_PASSWORD: z.string().default(''),
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier')
    .default('shortlink'),

  ANALYTICS_CONSUMER_ENABLED: bool.default(true),
  // --- analytics (issue 13; docs/analytics.md)
  /** Events older than this when consumed are dropped (and counted); younger ones land in their own minute. */
  ANALYTICS_ALLOWED_LATENESS_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(86_400),
  /** Days minute rows are kept; hour and day rollups longer (0 = forever). Old data leaves by partition. */
  ANALYTICS_MINUTE_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  ANALYTICS_HOUR_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(400),
  ANALYTICS_DAY_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(0),
  /** Days the raw visits (a row per click) are kept; old days leave by partition (issue 22). */
  ANALYTICS_VISIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  /** Live click stream (issue 22): clicks each analytics instance keeps for Last-Event-ID resume, at most this many… */
  ANALYTICS_STREAM_REPLAY_EVENTS: z.coerce.number().int().min(0).max(1_000_000).default(10_000),
  /** …and none older than this. */
  ANALYTICS_STREAM_REPLAY_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
  /** Open streams per tenant on one analytics instance; one more answers 429 STREAM_LIMIT_REACHED. */
  ANALYTICS_STREAM_MAX_PER_TENANT: z.coerce.number().int().min(1).max(1000).default(5),
  /** Kafka consumer session: a member that stops heartbeating loses its partitions after this (broker minimum 6 s). */
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6000).max(300_000).default(30_000),
  // --- end analytics
  /**
   * Where countries (and regions and cities) of clients come from: `country`, the DB-IP country
   * database of the @ip-location-db npm package (~8 MB in memory); `city`, its DB-IP city database
   * instead (~135 MB, IPv4 and IPv6 files; countries too); or absolute paths of MMDB files in
   * ip-location-db's flat layout, separated by commas (docs/design.md, "Visitors").
   */
  GEO_DATABASE: z
    .string()
    .default('country')
    .transform((s) => s.trim())
    .refine((s) => s === 'country' || s === 'city' || (geoFiles(s).length > 0 && geoFiles(s).every((f) => f.startsWith('/') && f.endsWith('.mmdb'))), {
      error: (issue) => `must be country, city or absolute paths of .mmdb files separated by commas, got "${String(issue.input)}"`,
    }),

  /** Redirect read path (issue: multi-level cache). */
  CACHE_POLICY: driver(['lru', 'ttl'] as const, 'lru'),
  /** No link entry of the shared cache (value, tombstone, "no such link") lives longer (docs/design.md, "Keys in the shared cache"). */
  CACHE_MAX_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(10)
    .max(30 * 86_400)
    .default(3600),
  REDIRECT_L1_ENABLED: bool.default(true),
  REDIRECT_L1_MAX_ENTRIES: z.coerce.number().int().min(1).default(100_000),
  REDIRECT_L1_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(64 * 1024 * 1024),
  REDIRECT_L1_TTL_MS: z.coerce.number().int().min(1).default(60_000),
  REDIRECT_L1_NEGATIVE_TTL_MS: z.coerce.number().int().min(1).default(5_000),
  REDIRECT_REDIS_ENABLED: bool.default(true),
  BLOOM_ENABLED: bool.default(true),
  BLOOM_CAPACITY: z.coerce.number().int().min(1000).default(1_000_000),
  BLOOM_FP_RATE: z.coerce.number().gt(0).lt(0.5).default(0.01),
  BLOOM_PARTITIONS: z.coerce.number().int().min(1).max(1024).default(16),
  /** Each new generation of the Bloom filter holds this many times the links of the one before (docs/design.md, "Redirect read path"). */
  BLOOM_GROWTH: z.coerce.number().min(1.5).max(16).default(2),
  /** How often every instance reads the Bloom filter's layout; one that could not for 3 × this answers "unknown". */
  BLOOM_LAYOUT_REFRESH_MS: z.coerce.number().int().min(20).max(60_000).default(1000),
  HOT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  HOT_BUCKET_SECONDS: z.coerce.number().int().min(1).default(10),
  HOT_THRESHOLD: z.coerce.number().int().min(1).default(50),
  HOT_MAX_TRACKED: z.coerce.number().int().min(1).default(5000),
  LOCK_TTL_MS: z.coerce.number().int().min(10).default(3000),
  LOCK_WAIT_MS: z.coerce.number().int().min(0).default(2000),
  LOCK_POLL_MS: z.coerce.number().int().min(1).default(10),
  DB_CONCURRENCY: z.coerce.number().int().min(1).default(32),
  /** Redirect lookups that may wait for one of the DB_CONCURRENCY permits, and how long each may wait (docs/design.md, "Redirect read path"). */
  DB_QUEUE_MAX: z.coerce.number().int().min(0).default(2000),
  DB_QUEUE_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(1000),
  /** The Redis breaker of the redirect's read path: consecutive failures that open it, and for how long. */
  REDIS_BREAKER_FAILURES: z.coerce.number().int().min(1).optional(),
  REDIS_BREAKER_HALF_OPEN_MS: z.coerce.number().int().min(10).optional(),
  /** Older names of REDIS_BREAKER_FAILURES and REDIS_BREAKER_HALF_OPEN_MS, still read when the new ones are not set. */
  BREAKER_FAILURES: z.coerce.number().int().min(1).optional(),
  BREAKER_HALF_OPEN_MS: z.coerce.number().int().min(10).optional(),
  RATE_LIMIT_PER_IP_PER_MINUTE: z.coerce.number().int().min(0).default(6000),
  RATE_LIMIT_GLOBAL_PER_SECOND: z.coerce.number().int().min(0).default(50_000),
  RATE_LIMIT_LOCAL_FALLBACK_PER_SECOND: z.coerce.number().int().min(0).default(20_000),
  SNAPSHOT_FILE: z.string().optional(),
  SNAPSHOT_INTERVAL_MS: z.coerce.number().int().min(100).default(30_000),
  SNAPSHOT_MAX_LINKS: z.coerce.number().int().min(1).default(10_000),
  /** Link options at the redirect (docs/design.md, "Link options"). */
  REDIRECT_CLICK_COUNT_FLUSH_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  /** How often the redirect reads tenants' domains and suspensions again (docs/design.md, "Tenants, keys and plans"). */
  REDIRECT_TENANT_REFRESH_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
  REDIRECT_PASSWORD_ATTEMPTS: z.coerce.number().int().min(1).default(5),
  REDIRECT_PASSWORD_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(15 * 60_000),
  REDIRECT_PASSWORD_CONCURRENCY: z.coerce.number().int().min(1).default(4),
  /** Password checks per client address and minute in one instance, right passwords included (0 = off). */
  REDIRECT_PASSWORD_CHECKS_PER_VISITOR_PER_MINUTE: z.coerce.number().int().min(0).default(30),
});

export type Env = z.infer<typeof envSchema>;

/** CORS_ORIGINS: `*` alone, or origins as a browser sends them (scheme, host, port; no path), lower-cased. */
function parseCorsOrigins(values: readonly string[], violations: string[]): string[] {
  if (values.includes('*')) {
    if (values.length > 1) violations.push('CORS_ORIGINS: `*` allows every origin and cannot be listed with others');
    return ['*'];
  }
  return values.map((value) => {
    let origin: string | null = null;
    try {
      const url = new URL(value);
      if ((url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value.replace(/\/$/, '').toLowerCase()) origin = url.origin;
    } catch {
      // reported below
    }
    if (origin === null) violations.push(`CORS_ORIGINS: "${value}" is not an origin (scheme://host[:port], no path), e.g. https://console.example.com`);
    return origin ?? value;
  });
}

/** An address block of TRUSTED_PROXIES: `10.0.0.0/8`, `::1/128`, or a plain address (a /32 or /128). */
export interface Cidr {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/**
 * Where a key comes from: given in the environment, or (embedded profile only) generated on first
 * start into a file of the data directory and reused after.
 */
export type SecretSource = { readonly given: string } | { readonly file: string };

export interface ShardConfig {
  readonly name: string;
  readonly url: string;
}

/** How links are spread over the shards, whatever the driver (docs/design.md, "Online resharding"). */
export interface ShardingConfig {
  /** The ring written as version 1 when the meta database has none; after that the meta database decides. */
  readonly strategy: Env['SHARD_STRATEGY'];
  readonly virtualNodes: number;
  readonly ring: { readonly pollMs: number; readonly movePollMs: number; readonly leaseMs: number };
  readonly shardTimeoutMs: number;
  /** Each shard's breaker: failures in a row that open it, and how long it stays open. */
  readonly shardBreaker: { readonly failures: number; readonly openMs: number };
}

/** Typed slices, one per concern; apps and adapters take only the slice they need. */
export interface AppConfig {
  readonly runtime: {
    readonly nodeEnv: string;
    readonly logLevel: Env['LOG_LEVEL'];
    readonly logFormat: Env['LOG_FORMAT'];
    readonly dataDir: string;
    readonly host: string;
  };
  readonly ports: { readonly generation: number; readonly redirect: number; readonly analytics: number };
  /** Operator listeners, one per app: /metrics, /internal/*, /health/details. */
  readonly admin: { readonly host: string; readonly ports: { readonly generation: number; readonly redirect: number; readonly analytics: number } };
  readonly http: {
    readonly trustedProxies: readonly Cidr[];
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly authFailuresPerMinute: number;
    /** Origins allowed to call the APIs from a browser (docs/design.md, "Contract"); `['*']` for any; empty: no CORS headers. */
    readonly corsOrigins: readonly string[];
  };
  readonly secrets: { readonly code: SecretSource; readonly visitor: SecretSource };
  /** Batch creation and bulk changes: limits, chunking, idempotency records. */
  readonly batch: {
    readonly maxRows: number;
    readonly maxBodyBytes: number;
    readonly chunkRows: number;
    readonly insertRows: number;
    readonly requestTimeoutMs: number;
    readonly retentionMs: number;
    readonly leaseMs: number;
    readonly bulkMaxLinks: number;
    readonly bulkConcurrency: number;
  };
  /** Per plan and tenant: API requests per minute, batch rows per day, active keys, batches running at once. */
  readonly plans: Readonly<
    Record<
      'free' | 'paid',
      { readonly requestsPerMinute: number; readonly batchRowsPerDay: number; readonly maxKeys: number; readonly concurrentBatches: number }
    >
  >;
  readonly links: {
    readonly publicBaseUrl: string;
    readonly defaultDomain: string;
    readonly domains: readonly string[];
    readonly bootstrapApiKey: string | undefined;
    readonly codeStrategy: Env['CODE_STRATEGY'];
    readonly idBlockSize: number;
    readonly urlSafety: { readonly dnsCheck: boolean; readonly dnsTimeoutMs: number; readonly blockedDomainsFile: string | null };
    readonly retireForMs: number;
    readonly expiryJobIntervalMs: number;
    /** The outbox relay (docs/design.md, "Edits reach every instance"). */
    readonly outbox: { readonly intervalMs: number; readonly leaseMs: number; readonly confirmAfterMs: number };
  };
  /** The audit log: how long its entries are kept. */
  readonly audit: { readonly retentionMs: number };
  /** Webhooks (docs/design.md, "Webhooks"): the events topic, the deliverer's group, the SSRF switch, the retry schedule. */
  readonly webhooks: {
    readonly eventsTopic: string;
    readonly consumerGroup: string;
    readonly allowPrivate: boolean;
    readonly retry: { readonly baseDelayMs: number; readonly maxDelayMs: number; readonly windowMs: number };
    readonly disableAfterMs: number;
    readonly timeoutMs: number;
  };
  /** Members, invitations, sign-in and sessions (docs/design.md, "People and sessions"). */
  readonly people: {
    /** Where invitations are accepted: `<console>/accept-invitation#token=…`. */
    readonly acceptUrl: string;
    /** Where the console opens the analytics dashboard (SHORTLINK_ANALYTICS_URL); null: the console's host on ANALYTICS_PORT. */
    readonly analyticsUrl: string | null;
    /** Where the generation app relays the console's analytics reads (SHORTLINK_ANALYTICS_API_URL), without a trailing slash. */
    readonly analyticsApiUrl: string;
    readonly invitationTtlMs: number;
    readonly mail: { readonly smtpUrl: string | null; readonly from: string };
    readonly passwordMinLength: number;
    readonly session: { readonly idleMs: number; readonly absoluteMs: number; readonly cookieSecure: 'auto' | 'on' | 'off'; readonly consoleIsHttps: boolean };
    readonly signInThrottle: { readonly perAccount: number; readonly perAddress: number; readonly windowMs: number };
    /** OpenID Connect sign-in: the redirect URI, each provider call's bound, http:// issuers allowed; people land on `successUrl` (the console) once signed in. */
    readonly sso: { readonly callbackUrl: string; readonly timeoutMs: number; readonly allowInsecureIssuers: boolean; readonly successUrl: string };
  };
  readonly db: ShardingConfig &
    (
      | { readonly driver: 'sqlite'; readonly shards: readonly string[] }
      | {
          readonly driver: 'mysql';
          readonly shards: readonly ShardConfig[];
          readonly spareShards: readonly ShardConfig[];
          readonly metaUrl: string;
          readonly poolSize: number;
        }
    );
  readonly cache:
    | { readonly driver: 'memory'; readonly maxEntries: number }
    | {
        readonly driver: 'redis';
        readonly nodes: ReadonlyArray<{ host: string; port: number }>;
        readonly writeBatching: 'cork' | 'pipeline' | 'off';
        readonly commandTimeoutMs: number;
      };
  readonly bus:
    | { readonly driver: 'memory'; readonly partitions: number; readonly consumerGroup: string }
    | {
        readonly driver: 'kafka';
        readonly brokers: readonly string[];
        readonly topic: string;
        readonly partitions: number;
        readonly consumerGroup: string;
        readonly sessionTimeoutMs: number;
      };
  readonly clickBuffer: { readonly capacity: number; readonly batchSize: number; readonly flushIntervalMs: number };
  readonly olap:
    | { readonly driver: 'chdb'; readonly database: string }
    | { readonly driver: 'clickhouse'; readonly url: string; readonly username: string; readonly password: string; readonly database: string };
  readonly analytics: {
    readonly consumerEnabled: boolean;
    readonly allowedLatenessSeconds: number;
    readonly retention: { readonly minuteDays: number; readonly hourDays: number; readonly dayDays: number; readonly visitDays: number };
    /** The live click stream: the replay window of each instance and the open streams a tenant may hold there. */
    readonly stream: { readonly replayEvents: number; readonly replaySeconds: number; readonly maxPerTenant: number };
  };
  /** The bundled database by name, or files of the operator's (GEO_DATABASE). */
  readonly geo: { readonly database: 'country' | 'city' | { readonly files: readonly string[] } };
  readonly redirect: {
    readonly policy: Env['CACHE_POLICY'];
    /** The longest any link entry lives in the shared cache. */
    readonly maxTtlMs: number;
    readonly l1: { readonly enabled: boolean; readonly maxEntries: number; readonly maxBytes: number; readonly ttlMs: number; readonly negativeTtlMs: number };
    readonly sharedCacheEnabled: boolean;
    readonly bloom: {
      readonly enabled: boolean;
      readonly capacity: number;
      readonly falsePositiveRate: number;
      readonly partitions: number;
      readonly growth: number;
      readonly refreshMs: number;
    };
    readonly hot: { readonly windowSeconds: number; readonly bucketSeconds: number; readonly threshold: number; readonly maxTrackedKeys: number };
    readonly lock: { readonly ttlMs: number; readonly waitMs: number; readonly pollMs: number };
    readonly dbConcurrency: number;
    /** Lookups waiting for a shard permit at most, and the longest wait before 503. */
    readonly dbQueue: { readonly max: number; readonly waitMs: number };
    /** The breaker around Redis: failures in a row that open it, and how long until it tries Redis again. */
    readonly redisBreaker: { readonly failures: number; readonly halfOpenAfterMs: number };
    readonly rateLimit: { readonly perIpPerMinute: number; readonly globalPerSecond: number; readonly localFallbackPerSecond: number };
    readonly snapshot: { readonly file: string; readonly intervalMs: number; readonly maxLinks: number };
    /** How often the clicks granted against maxClicks reach the shard (the bound on a lost counter). */
    readonly clickCountFlushMs: number;
    readonly tenantRefreshMs: number;
    /**
     * Password attempts per visitor and link within the window (right ones given back), argon2 checks
     * in flight per instance, and checks per visitor and minute per instance (docs/design.md, "Link options").
     */
    readonly password: { readonly attempts: number; readonly windowMs: number; readonly concurrency: number; readonly checksPerVisitorPerMinute: number };
  };
}

export class ConfigError extends Error {
  constructor(readonly violations: readonly string[]) {
    super(`invalid configuration:\n${violations.map((v) => `  - ${v}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Validates the whole environment once; every violation is listed, not just the first. */
export function loadConfig(source: Record<string, string | undefined>): AppConfig {
  const env = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(env);
  const violations: string[] = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
  if (!parsed.success) throw new ConfigError(violations);
  const e = parsed.data;

  const need = (name: keyof Env, when: string) => {
    if (e[name] === undefined) violations.push(`${name}: required when ${when}`);
  };
  if (e.DB_DRIVER === 'mysql') {
    need('MYSQL_SHARDS', 'DB_DRIVER=mysql');
    need('MYSQL_META_URL', 'DB_DRIVER=mysql');
  }
  if (e.CACHE_DRIVER === 'redis') need('REDIS_CLUSTER_NODES', 'CACHE_DRIVER=redis');
  if (e.BUS_DRIVER === 'kafka') need('KAFKA_BROKERS', 'BUS_DRIVER=kafka');
  if (e.OLAP_DRIVER === 'clickhouse') need('CLICKHOUSE_URL', 'OLAP_DRIVER=clickhouse');

  const mysqlShards = e.DB_DRIVER === 'mysql' && e.MYSQL_SHARDS ? parseShards(e.MYSQL_SHARDS, violations) : [];
  const spareShards = e.DB_DRIVER === 'mysql' && e.MYSQL_SPARE_SHARDS ? parseShards(e.MYSQL_SPARE_SHARDS, violations, 'MYSQL_SPARE_SHARDS') : [];
  for (const spare of spareShards) {
    if (mysqlShards.some((s) => s.name === spare.name)) violations.push(`MYSQL_SPARE_SHARDS: shard "${spare.name}" is also in MYSQL_SHARDS`);
  }
  if (e.OUTBOX_LEASE_MS < 3 * e.OUTBOX_RELAY_INTERVAL_MS)
    violations.push(`OUTBOX_LEASE_MS: must be at least 3 × OUTBOX_RELAY_INTERVAL_MS (${3 * e.OUTBOX_RELAY_INTERVAL_MS}), got ${e.OUTBOX_LEASE_MS}`);
  if (e.SHARD_RING_LEASE_MS < 3 * e.SHARD_RING_POLL_MS)
    violations.push(`SHARD_RING_LEASE_MS: must be at least 3 × SHARD_RING_POLL_MS (${3 * e.SHARD_RING_POLL_MS}), got ${e.SHARD_RING_LEASE_MS}`);
  const redisNodes = (e.REDIS_CLUSTER_NODES ?? []).map((n) => parseHostPort(n, 'REDIS_CLUSTER_NODES', violations));
  // Either strategy needs a shard to route to; a name becomes a file name (SQLite) or a metric label.
  if (e.DB_DRIVER === 'mysql' && e.MYSQL_SHARDS !== undefined && mysqlShards.length === 0 && !violations.some((v) => v.startsWith('MYSQL_SHARDS')))
    violations.push('MYSQL_SHARDS: needs at least one shard');
  if (e.DB_DRIVER === 'sqlite' && e.SQLITE_SHARDS.length === 0) violations.push('SQLITE_SHARDS: needs at least one shard');
  for (const name of e.DB_DRIVER === 'mysql' ? [...mysqlShards, ...spareShards].map((s) => s.name) : e.SQLITE_SHARDS) {
    if (!SHARD_NAME.test(name))
      violations.push(`${e.DB_DRIVER === 'mysql' ? 'MYSQL_SHARDS' : 'SQLITE_SHARDS'}: shard name "${name}" must be 1-64 of A-Z a-z 0-9 _ -`);
  }
  if (e.DB_DRIVER === 'sqlite' && new Set(e.SQLITE_SHARDS).size !== e.SQLITE_SHARDS.length) violations.push('SQLITE_SHARDS: shard names must be unique');
  const trustedProxies = e.TRUSTED_PROXIES.map((c) => parseCidr(c, violations));
  const corsOrigins = parseCorsOrigins(e.CORS_ORIGINS, violations);
  const dataDir = e.SHORTLINK_DATA_DIR.replace(/\/+$/, '');
  const secret = (name: 'SHORTLINK_CODE_SECRET' | 'SHORTLINK_VISITOR_SECRET', file: string): SecretSource => {
    const given = e[name];
    if (given !== undefined) {
      const weakness = secretWeakness(given);
      if (weakness) violations.push(`${name}: ${weakness}; generate one with \`openssl rand -base64 32\``);
      return { given };
    }
    // Servers of the real profile share the database, so they must share the key: it cannot be
    // generated per instance, and a default known from the source would make codes guessable.
    if (e.DB_DRIVER === 'mysql')
      violations.push(
        `${name}: required with DB_DRIVER=mysql (at least 32 random bytes, e.g. \`openssl rand -base64 32\`): it keys ${name === 'SHORTLINK_CODE_SECRET' ? 'the id -> code scrambler; with a known key anyone can compute every code and walk all links' : 'the visitor hash; with a known key visitor addresses can be recovered'}`,
      );
    return { file: `${dataDir}/secrets/${file}` };
  };
  const secrets = { code: secret('SHORTLINK_CODE_SECRET', 'code-secret'), visitor: secret('SHORTLINK_VISITOR_SECRET', 'visitor-secret') };
  if (e.SESSION_IDLE_MINUTES > e.SESSION_ABSOLUTE_HOURS * 60)
    violations.push(
      `SESSION_IDLE_MINUTES: must not be longer than SESSION_ABSOLUTE_HOURS (${e.SESSION_ABSOLUTE_HOURS * 60} minutes), got ${e.SESSION_IDLE_MINUTES}`,
    );
  if (violations.length) throw new ConfigError(violations);

  const consoleUrl = (e.SHORTLINK_CONSOLE_URL ?? `http://localhost:${e.GENERATION_PORT}/console`).replace(/\/+$/, '');
  const publicBaseUrl = (e.SHORTLINK_PUBLIC_BASE_URL ?? `http://localhost:${e.REDIRECT_PORT}`).replace(/\/+$/, '');
  const defaultDomain = (e.SHORTLINK_DEFAULT_DOMAIN ?? new URL(publicBaseUrl).host).toLowerCase();
  const shard: ShardingConfig = {
    strategy: e.SHARD_STRATEGY,
    virtualNodes: e.SHARD_VIRTUAL_NODES,
    ring: { pollMs: e.SHARD_RING_POLL_MS, movePollMs: Math.min(e.SHARD_RING_MOVE_POLL_MS, e.SHARD_RING_POLL_MS), leaseMs: e.SHARD_RING_LEASE_MS },
    shardTimeoutMs: e.SHARD_TIMEOUT_MS,
    shardBreaker: { failures: e.SHARD_BREAKER_FAILURES, openMs: e.SHARD_BREAKER_OPEN_MS },
  };
  return {
    runtime: { nodeEnv: e.NODE_ENV, logLevel: e.LOG_LEVEL, logFormat: e.LOG_FORMAT, dataDir: e.SHORTLINK_DATA_DIR, host: e.HOST },
    ports: { generation: e.GENERATION_PORT, redirect: e.REDIRECT_PORT, analytics: e.ANALYTICS_PORT },
    admin: { host: e.ADMIN_HOST, ports: { generation: e.GENERATION_ADMIN_PORT, redirect: e.REDIRECT_ADMIN_PORT, analytics: e.ANALYTICS_ADMIN_PORT } },
    http: {
      trustedProxies,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
      corsOrigins,
    },
    secrets,
    batch: {
      maxRows: e.BATCH_MAX_ROWS,
      maxBodyBytes: e.BATCH_MAX_BODY_BYTES,
      chunkRows: e.BATCH_CHUNK_ROWS,
      insertRows: e.BATCH_INSERT_ROWS,
      requestTimeoutMs: e.BATCH_REQUEST_TIMEOUT_MS,
      retentionMs: e.BATCH_IDEMPOTENCY_HOURS * 3_600_000,
      leaseMs: e.BATCH_LEASE_MS,
      bulkMaxLinks: e.BULK_MAX_LINKS,
      bulkConcurrency: e.BULK_CONCURRENCY,
    },
    plans: {
      free: {
        requestsPerMinute: e.PLAN_FREE_REQUESTS_PER_MINUTE,
        batchRowsPerDay: e.PLAN_FREE_BATCH_ROWS_PER_DAY,
        maxKeys: e.PLAN_FREE_MAX_KEYS,
        concurrentBatches: e.PLAN_FREE_CONCURRENT_BATCHES,
      },
      paid: {
        requestsPerMinute: e.PLAN_PAID_REQUESTS_PER_MINUTE,
        batchRowsPerDay: e.PLAN_PAID_BATCH_ROWS_PER_DAY,
        maxKeys: e.PLAN_PAID_MAX_KEYS,
        concurrentBatches: e.PLAN_PAID_CONCURRENT_BATCHES,
      },
    },
    links: {
      publicBaseUrl,
      defaultDomain,
      domains: [...new Set([defaultDomain, ...e.SHORTLINK_DOMAINS.map((d) => d.toLowerCase())])],
      bootstrapApiKey: e.SHORTLINK_BOOTSTRAP_API_KEY,
      codeStrategy: e.CODE_STRATEGY,
      idBlockSize: e.ID_BLOCK_SIZE,
      urlSafety: { dnsCheck: e.URL_DNS_CHECK, dnsTimeoutMs: e.URL_DNS_TIMEOUT_MS, blockedDomainsFile: e.BLOCKED_DOMAINS_FILE ?? null },
      retireForMs: e.RETIRED_CODE_DAYS * 86_400_000,
      expiryJobIntervalMs: e.EXPIRY_JOB_INTERVAL_MS,
      outbox: { intervalMs: e.OUTBOX_RELAY_INTERVAL_MS, leaseMs: e.OUTBOX_LEASE_MS, confirmAfterMs: e.OUTBOX_CONFIRM_AFTER_MS },
    },
    audit: { retentionMs: e.AUDIT_RETENTION_DAYS * 86_400_000 },
    webhooks: {
      eventsTopic: e.KAFKA_EVENTS_TOPIC,
      consumerGroup: e.KAFKA_WEBHOOK_CONSUMER_GROUP,
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
      retry: { baseDelayMs: e.WEBHOOK_RETRY_BASE_MS, maxDelayMs: e.WEBHOOK_RETRY_MAX_MS, windowMs: e.WEBHOOK_RETRY_WINDOW_MS },
      disableAfterMs: e.WEBHOOK_DISABLE_AFTER_MS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    },
    people: {
      acceptUrl: `${consoleUrl}/accept-invitation`,
      analyticsUrl: e.SHORTLINK_ANALYTICS_URL?.replace(/\/+$/, '') ?? null,
      analyticsApiUrl: (e.SHORTLINK_ANALYTICS_API_URL ?? e.SHORTLINK_ANALYTICS_URL ?? `http://${loopbackOf(e.HOST)}:${e.ANALYTICS_PORT}`).replace(/\/+$/, ''),
      invitationTtlMs: e.INVITATION_TTL_HOURS * 3_600_000,
      mail: { smtpUrl: e.SMTP_URL ?? null, from: e.MAIL_FROM },
      passwordMinLength: e.PASSWORD_MIN_LENGTH,
      session: {
        idleMs: e.SESSION_IDLE_MINUTES * 60_000,
        absoluteMs: e.SESSION_ABSOLUTE_HOURS * 3_600_000,
        cookieSecure: e.SESSION_COOKIE_SECURE,
        consoleIsHttps: consoleUrl.startsWith('https:'),
      },
      signInThrottle: {
        perAccount: e.SIGN_IN_FAILURES_PER_ACCOUNT,
        perAddress: e.SIGN_IN_FAILURES_PER_ADDRESS,
        windowMs: e.SIGN_IN_THROTTLE_WINDOW_SECONDS * 1000,
      },
      sso: {
        callbackUrl: e.SSO_CALLBACK_URL ?? `http://localhost:${e.GENERATION_PORT}/api/v1/auth/sso/callback`,
        timeoutMs: e.SSO_TIMEOUT_SECONDS * 1000,
        allowInsecureIssuers: e.SSO_ALLOW_INSECURE_ISSUERS,
        successUrl: `${consoleUrl}/`,
      },
    },
    db:
      e.DB_DRIVER === 'mysql'
        ? { driver: 'mysql', shards: mysqlShards, spareShards, metaUrl: e.MYSQL_META_URL!, poolSize: e.MYSQL_POOL_SIZE, ...shard }
        : { driver: 'sqlite', shards: e.SQLITE_SHARDS, ...shard },
    cache:
      e.CACHE_DRIVER === 'redis'
        ? { driver: 'redis', nodes: redisNodes, writeBatching: e.REDIS_WRITE_BATCHING, commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS }
        : { driver: 'memory', maxEntries: e.MEMORY_CACHE_MAX_ENTRIES },
    bus:
      e.BUS_DRIVER === 'kafka'
        ? {
            driver: 'kafka',
            brokers: e.KAFKA_BROKERS!,
            topic: e.KAFKA_CLICK_TOPIC,
            partitions: e.KAFKA_CLICK_PARTITIONS,
            consumerGroup: e.KAFKA_CONSUMER_GROUP,
            sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
          }
        : { driver: 'memory', partitions: e.KAFKA_CLICK_PARTITIONS, consumerGroup: e.KAFKA_CONSUMER_GROUP },
    clickBuffer: { capacity: e.CLICK_BUFFER_CAPACITY, batchSize: e.CLICK_BUFFER_BATCH_SIZE, flushIntervalMs: e.CLICK_BUFFER_FLUSH_MS },
    olap:
      e.OLAP_DRIVER === 'clickhouse'
        ? { driver: 'clickhouse', url: e.CLICKHOUSE_URL!, username: e.CLICKHOUSE_USER, password: e.CLICKHOUSE_PASSWORD, database: e.CLICKHOUSE_DATABASE }
        : { driver: 'chdb', database: e.CLICKHOUSE_DATABASE },
    analytics: {
      consumerEnabled: e.ANALYTICS_CONSUMER_ENABLED,
      allowedLatenessSeconds: e.ANALYTICS_ALLOWED_LATENESS_SECONDS,
      retention: {
        minuteDays: e.ANALYTICS_MINUTE_RETENTION_DAYS,
        hourDays: e.ANALYTICS_HOUR_RETENTION_DAYS,
        dayDays: e.ANALYTICS_DAY_RETENTION_DAYS,
        visitDays: e.ANALYTICS_VISIT_RETENTION_DAYS,
      },
      stream: {
        replayEvents: e.ANALYTICS_STREAM_REPLAY_EVENTS,
        replaySeconds: e.ANALYTICS_STREAM_REPLAY_SECONDS,
        maxPerTenant: e.ANALYTICS_STREAM_MAX_PER_TENANT,
      },
    },
    geo: { database: e.GEO_DATABASE === 'country' || e.GEO_DATABASE === 'city' ? e.GEO_DATABASE : { files: geoFiles(e.GEO_DATABASE) } },
    redirect: {
      policy: e.CACHE_POLICY,
      maxTtlMs: e.CACHE_MAX_TTL_SECONDS * 1000,
      l1: {
        enabled: e.REDIRECT_L1_ENABLED,
        maxEntries: e.REDIRECT_L1_MAX_ENTRIES,
        maxBytes: e.REDIRECT_L1_MAX_BYTES,
        ttlMs: e.REDIRECT_L1_TTL_MS,
        negativeTtlMs: e.REDIRECT_L1_NEGATIVE_TTL_MS,
      },
      sharedCacheEnabled: e.REDIRECT_REDIS_ENABLED,
      bloom: {
        enabled: e.BLOOM_ENABLED,
        capacity: e.BLOOM_CAPACITY,
        falsePositiveRate: e.BLOOM_FP_RATE,
        partitions: e.BLOOM_PARTITIONS,
        growth: e.BLOOM_GROWTH,
        refreshMs: e.BLOOM_LAYOUT_REFRESH_MS,
      },
      hot: { windowSeconds: e.HOT_WINDOW_SECONDS, bucketSeconds: e.HOT_BUCKET_SECONDS, threshold: e.HOT_THRESHOLD, maxTrackedKeys: e.HOT_MAX_TRACKED },
      lock: { ttlMs: e.LOCK_TTL_MS, waitMs: e.LOCK_WAIT_MS, pollMs: e.LOCK_POLL_MS },
      dbConcurrency: e.DB_CONCURRENCY,
      dbQueue: { max: e.DB_QUEUE_MAX, waitMs: e.DB_QUEUE_WAIT_MS },
      redisBreaker: {
        failures: e.REDIS_BREAKER_FAILURES ?? e.BREAKER_FAILURES ?? 5,
        halfOpenAfterMs: e.REDIS_BREAKER_HALF_OPEN_MS ?? e.BREAKER_HALF_OPEN_MS ?? 2000,
      },
      rateLimit: {
        perIpPerMinute: e.RATE_LIMIT_PER_IP_PER_MINUTE,
        globalPerSecond: e.RATE_LIMIT_GLOBAL_PER_SECOND,
        localFallbackPerSecond: e.RATE_LIMIT_LOCAL_FALLBACK_PER_SECOND,
      },
      snapshot: { file: e.SNAPSHOT_FILE ?? `${dataDir}/redirect-hot-links.json`, intervalMs: e.SNAPSHOT_INTERVAL_MS, maxLinks: e.SNAPSHOT_MAX_LINKS },
      clickCountFlushMs: e.REDIRECT_CLICK_COUNT_FLUSH_MS,
      tenantRefreshMs: e.REDIRECT_TENANT_REFRESH_MS,
      password: {
        attempts: e.REDIRECT_PASSWORD_ATTEMPTS,
        windowMs: e.REDIRECT_PASSWORD_WINDOW_MS,
        concurrency: e.REDIRECT_PASSWORD_CONCURRENCY,
        checksPerVisitorPerMinute: e.REDIRECT_PASSWORD_CHECKS_PER_VISITOR_PER_MINUTE,
      },
    },
  };
}

function parseShards(spec: string, violations: string[], variable = 'MYSQL_SHARDS'): ShardConfig[] {
  const shards: ShardConfig[] = [];
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq);
    const url = part.slice(eq + 1);
    if (eq < 1 || !/^mysql:\/\//.test(url)) violations.push(`${variable}: "${part}" is not name=mysql://user:pass@host:port/db`);
    else shards.push({ name, url });
  }
  if (new Set(shards.map((s) => s.name)).size !== shards.length) violations.push(`${variable}: shard names must be unique`);
  return shards;
}

/** Why a given secret is not good enough, or null. Length is checked in bytes (UTF-8). */
export function secretWeakness(secret: string): string | null {
  const bytes = Buffer.byteLength(secret, 'utf8');
  if (bytes < 32) return `must be at least 32 bytes of random data, got ${bytes}`;
  if (new Set(secret).size < 10) return 'looks like a pattern, not random data (fewer than 10 distinct characters)';
  return null;
}

function parseCidr(value: string, violations: string[]): Cidr {
  const [address, prefixText, extra] = value.split('/');
  const family = isIP(address) === 4 ? 'ipv4' : isIP(address) === 6 ? 'ipv6' : null;
  const max = family === 'ipv4' ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!family || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
    violations.push(`TRUSTED_PROXIES: "${value}" is not an IP address or CIDR block (e.g. 10.0.0.0/8, 127.0.0.1, ::1/128)`);
    return { address: '0.0.0.0', prefix: 32, family: 'ipv4' };
  }
  return { address, prefix, family };
}

function parseHostPort(value: string, name: string, violations: string[]): { host: string; port: number } {
  const m = /^([^:]+):(\d{1,5})$/.exec(value);
  if (!m) {
    violations.push(`${name}: "${value}" is not host:port`);
    return { host: value, port: 0 };
  }
  return { host: m[1], port: Number(m[2]) };
}

/** The address a process reaches its own host's app on: HOST when it names one address, else the loopback (a wildcard is no destination). */
function loopbackOf(host: string): string {
  if (host === '' || host === '0.0.0.0' || host === '::' || host === '[::]') return '127.0.0.1';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
