import { isIP } from 'net';
import { type Env, envSchema, geoFiles } from './variables';

export { type Env, envSchema } from './variables';

const SHARD_NAME = /^[A-Za-z0-9_-]{1,64}$/;

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

/** A threat feed of URL_REPUTATION_FEEDS (docs/design.md, "Trust and safety"). */
export interface FeedConfig {
  readonly format: 'urlhaus' | 'phishtank' | 'openphish' | 'hosts';
  /** A file path or an http(s) URL. */
  readonly location: string;
  readonly action: 'flagged' | 'banned';
}

/** URL_REPUTATION_FEEDS: `format[/flag|/ban]:location`; host lists flag unless told, the other formats ban. */
function parseFeeds(entries: readonly string[], violations: string[]): FeedConfig[] {
  return entries.flatMap((entry) => {
    const match = /^(urlhaus|phishtank|openphish|hosts)(?:\/(flag|ban))?:(.+)$/.exec(entry);
    if (!match) {
      violations.push(`URL_REPUTATION_FEEDS: "${entry}" is not format[/flag|/ban]:location with a format of urlhaus, phishtank, openphish or hosts`);
      return [];
    }
    const format = match[1] as FeedConfig['format'];
    const action = match[2] === 'flag' ? 'flagged' : match[2] === 'ban' ? 'banned' : format === 'hosts' ? 'flagged' : 'banned';
    const location = match[3].trim();
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location) && !/^https?:\/\//i.test(location))
      violations.push(`URL_REPUTATION_FEEDS: "${entry}": a feed is a file path or an http(s) URL`);
    return [{ format, action, location }];
  });
}

/** LINK_CHECK_HOSTS: `name=address` or `*.suffix=address`. */
function parseFixedHosts(entries: readonly string[], violations: string[]): ReadonlyArray<{ readonly name: string; readonly address: string }> {
  return entries.flatMap((entry) => {
    const [name, address] = entry.split('=').map((p) => p.trim().toLowerCase());
    if (!name || !address || isIP(address) === 0 || !/^(\*\.)?[a-z0-9.-]+$/.test(name)) {
      violations.push(`LINK_CHECK_HOSTS: "${entry}" is not name=address (an IP address), e.g. checks.test=127.0.0.1 or *.checks.test=127.0.0.1`);
      return [];
    }
    return [{ name, address }];
  });
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
    /** Adaptive concurrency limits and request deadlines (docs/design.md, "Overload"). */
    readonly admission: {
      readonly enabled: boolean;
      readonly initial: number;
      readonly min: { readonly redirect: number; readonly api: number };
      readonly max: number;
      readonly latencyTargetMs: { readonly redirect: number; readonly api: number };
      readonly deadlineMs: { readonly redirect: number; readonly api: number };
    };
    /** CORS for the compatible APIs (COMPAT_CORS): any origin, never cookies. */
    readonly compatCors: boolean;
    /** Where the redirect app relays Shlink's REST API (SHORTLINK_GENERATION_URL), without a trailing slash. */
    readonly generationUrl: string;
  };
  readonly secrets: { readonly code: SecretSource; readonly visitor: SecretSource };
  /** Batch creation and bulk changes: limits, chunking, idempotency records. */
  readonly batch: {
    readonly maxRows: number;
    readonly maxBodyBytes: number;
    readonly chunkRows: number;
    readonly insertRows: number;
    /** Worker threads shaping a batch's rows (0: the request's thread). */
    readonly workers: number;
    readonly requestTimeoutMs: number;
    readonly retentionMs: number;
    readonly leaseMs: number;
    readonly bulkMaxLinks: number;
    readonly bulkConcurrency: number;
  };
  /** Per plan and tenant: API requests per minute, batch rows per day, active keys, batches running at once, invitations per hour, domains, conversions per 30 days and their metadata's bytes. */
  readonly plans: Readonly<
    Record<
      'free' | 'paid',
      {
        readonly requestsPerMinute: number;
        readonly batchRowsPerDay: number;
        readonly maxKeys: number;
        readonly concurrentBatches: number;
        readonly invitationsPerHour: number;
        readonly maxDomains: number;
        readonly conversionsPerMonth: number;
        readonly conversionMetadataBytes: number;
      }
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
  /** Conversions (docs/analytics.md, "Conversions"): their topic, how long a click id counts, the metadata's size. */
  readonly conversions: { readonly topic: string; readonly clickIdTtlDays: number; readonly maxMetadataBytes: number; readonly dimensionsWaitMs: number };
  readonly webhooks: {
    readonly eventsTopic: string;
    readonly consumerGroup: string;
    readonly allowPrivate: boolean;
    readonly retry: { readonly baseDelayMs: number; readonly maxDelayMs: number; readonly windowMs: number };
    readonly disableAfterMs: number;
    readonly timeoutMs: number;
  };
  /** Tenants' own domains: the ownership checks and the TLS front's certificates (docs/design.md, "Custom domains and TLS"). */
  readonly domains: {
    readonly verifier: { readonly enabled: boolean; readonly intervalMs: number };
    readonly methods: readonly ('dns' | 'http')[];
    /** Name servers as `host` or `host:port`; empty: the system's. */
    readonly resolvers: readonly string[];
    readonly checkTimeoutMs: number;
    readonly httpPort: number;
    readonly allowPrivate: boolean;
    readonly firstCheckMs: number;
    readonly backoff: { readonly baseMs: number; readonly maxMs: number };
    readonly retryWindowMs: number;
    readonly recheckMs: number;
    readonly unverifyAfter: number;
    /** The TLS front whose certificates are read, or null. */
    readonly tlsFront: { readonly host: string; readonly port: number; readonly caFile: string | null; readonly timeoutMs: number } | null;
  };
  /** Trust and safety (docs/design.md, "Trust and safety"): reputation, dead-link checks, the sweep, visitors' reports. */
  readonly safety: {
    readonly reputation: {
      readonly feeds: boolean;
      readonly webRisk: boolean;
      readonly feedList: readonly FeedConfig[];
      readonly refreshMs: number;
      readonly feedMaxBytes: number;
      readonly feedTimeoutMs: number;
    };
    readonly webRisk: {
      readonly apiKey: string | null;
      readonly endpoint: string;
      readonly threatTypes: readonly string[];
      readonly timeoutMs: number;
      readonly requestsPerSecond: number;
      readonly cacheMs: number;
      readonly cacheHosts: number;
    };
    readonly checks: {
      readonly requestsPerSecond: number;
      readonly intervalMs: number;
      readonly retryMs: number;
      readonly failuresToBreak: number;
      readonly hostIntervalMs: number;
      readonly timeoutMs: number;
      readonly maxRedirects: number;
      readonly concurrency: number;
      readonly allowPrivate: boolean;
      readonly fixedHosts: ReadonlyArray<{ readonly name: string; readonly address: string }>;
    };
    readonly sweep: { readonly linksPerSecond: number; readonly intervalMs: number };
    readonly jobsIntervalMs: number;
    readonly reportsPerVisitorPerHour: number;
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
    readonly session: {
      readonly idleMs: number;
      readonly absoluteMs: number;
      readonly cookieSecure: 'auto' | 'on' | 'off';
      readonly consoleIsHttps: boolean;
      /** The console's origin (SHORTLINK_CONSOLE_URL): a browser page there may sign in and write with the session cookie. */
      readonly consoleOrigin: string;
    };
    readonly signInThrottle: { readonly perAccount: number; readonly perAddress: number; readonly windowMs: number };
    /** OpenID Connect sign-in: the redirect URI, each provider call's bound, http:// issuers allowed; people land on `successUrl` (the console) once signed in. */
    readonly sso: {
      readonly callbackUrl: string;
      readonly timeoutMs: number;
      readonly allowInsecureIssuers: boolean;
      readonly successUrl: string;
      /** Starts allowed per minute (SSO_STARTS_PER_MINUTE_PER_TENANT, _PER_ADDRESS). */
      readonly startsPerMinute: { readonly perTenant: number; readonly perAddress: number };
    };
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
        readonly compression: 'none' | 'gzip';
      };
  readonly clickBuffer: { readonly capacity: number; readonly batchSize: number; readonly flushIntervalMs: number };
  readonly olap:
    | { readonly driver: 'chdb'; readonly database: string }
    | { readonly driver: 'clickhouse'; readonly url: string; readonly username: string; readonly password: string; readonly database: string };
  readonly analytics: {
    readonly consumerEnabled: boolean;
    /** Partitions consumed at once (ANALYTICS_CONSUMER_CONCURRENCY). */
    readonly consumerConcurrency: number;
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
    /** How often the visitor-limit counts are merged with the shared windows and the maxClicks leases settled. */
    readonly counterSyncMs: number;
    /** How long a maxClicks lease lives without a call from its instance. */
    readonly clickLeaseMs: number;
    readonly tenantRefreshMs: number;
    /** Scans counted per visitor and link in a minute, across instances (0: no limit). */
    readonly qrScansPerVisitorPerMinute: number;
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
  if (e.URL_REPUTATION_DRIVER.includes('web-risk')) need('WEB_RISK_API_KEY', `URL_REPUTATION_DRIVER=${e.URL_REPUTATION_DRIVER}`);
  const feedList = parseFeeds(e.URL_REPUTATION_FEEDS, violations);
  const fixedHosts = parseFixedHosts(e.LINK_CHECK_HOSTS, violations);

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
  const tlsFront = e.DOMAIN_TLS_FRONT === undefined ? null : parseHostPort(e.DOMAIN_TLS_FRONT, 'DOMAIN_TLS_FRONT', violations);
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
      admission: {
        enabled: e.ADMISSION_CONTROL,
        initial: e.ADMISSION_LIMIT_INITIAL,
        min: { redirect: e.ADMISSION_REDIRECT_LIMIT_MIN, api: e.ADMISSION_LIMIT_MIN },
        max: e.ADMISSION_LIMIT_MAX,
        latencyTargetMs: { redirect: e.ADMISSION_REDIRECT_LATENCY_MS, api: e.ADMISSION_API_LATENCY_MS },
        deadlineMs: { redirect: e.REQUEST_DEADLINE_REDIRECT_MS, api: e.REQUEST_DEADLINE_API_MS },
      },
      compatCors: e.COMPAT_CORS,
      generationUrl: (e.SHORTLINK_GENERATION_URL ?? `http://${loopbackOf(e.HOST)}:${e.GENERATION_PORT}`).replace(/\/+$/, ''),
    },
    secrets,
    batch: {
      maxRows: e.BATCH_MAX_ROWS,
      maxBodyBytes: e.BATCH_MAX_BODY_BYTES,
      chunkRows: e.BATCH_CHUNK_ROWS,
      insertRows: e.BATCH_INSERT_ROWS,
      workers: e.BATCH_WORKERS,
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
        invitationsPerHour: e.PLAN_FREE_INVITATIONS_PER_HOUR,
        maxDomains: e.PLAN_FREE_MAX_DOMAINS,
        conversionsPerMonth: e.PLAN_FREE_CONVERSIONS_PER_MONTH,
        conversionMetadataBytes: e.PLAN_FREE_CONVERSION_METADATA_BYTES,
      },
      paid: {
        requestsPerMinute: e.PLAN_PAID_REQUESTS_PER_MINUTE,
        batchRowsPerDay: e.PLAN_PAID_BATCH_ROWS_PER_DAY,
        maxKeys: e.PLAN_PAID_MAX_KEYS,
        concurrentBatches: e.PLAN_PAID_CONCURRENT_BATCHES,
        invitationsPerHour: e.PLAN_PAID_INVITATIONS_PER_HOUR,
        maxDomains: e.PLAN_PAID_MAX_DOMAINS,
        conversionsPerMonth: e.PLAN_PAID_CONVERSIONS_PER_MONTH,
        conversionMetadataBytes: e.PLAN_PAID_CONVERSION_METADATA_BYTES,
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
    conversions: {
      topic: e.KAFKA_CONVERSIONS_TOPIC,
      clickIdTtlDays: e.CONVERSION_CLICK_ID_TTL_DAYS,
      maxMetadataBytes: e.CONVERSION_METADATA_MAX_BYTES,
      dimensionsWaitMs: e.CONVERSION_DIMENSIONS_WAIT_MS,
    },
    webhooks: {
      eventsTopic: e.KAFKA_EVENTS_TOPIC,
      consumerGroup: e.KAFKA_WEBHOOK_CONSUMER_GROUP,
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
      retry: { baseDelayMs: e.WEBHOOK_RETRY_BASE_MS, maxDelayMs: e.WEBHOOK_RETRY_MAX_MS, windowMs: e.WEBHOOK_RETRY_WINDOW_MS },
      disableAfterMs: e.WEBHOOK_DISABLE_AFTER_MS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    },
    domains: {
      verifier: { enabled: e.DOMAIN_VERIFIER, intervalMs: e.DOMAIN_VERIFIER_INTERVAL_MS },
      methods: [...new Set(e.DOMAIN_VERIFICATION_METHODS)],
      resolvers: e.DOMAIN_DNS_RESOLVER ?? [],
      checkTimeoutMs: e.DOMAIN_CHECK_TIMEOUT_MS,
      httpPort: e.DOMAIN_HTTP_CHECK_PORT,
      allowPrivate: e.DOMAIN_CHECK_ALLOW_PRIVATE,
      firstCheckMs: e.DOMAIN_FIRST_CHECK_MS,
      backoff: { baseMs: e.DOMAIN_CHECK_BACKOFF_MS, maxMs: Math.max(e.DOMAIN_CHECK_BACKOFF_MS, e.DOMAIN_CHECK_BACKOFF_MAX_MS) },
      retryWindowMs: e.DOMAIN_RETRY_WINDOW_HOURS * 3_600_000,
      recheckMs: e.DOMAIN_RECHECK_INTERVAL_MS,
      unverifyAfter: e.DOMAIN_UNVERIFY_AFTER_FAILURES,
      tlsFront: tlsFront && { ...tlsFront, caFile: e.DOMAIN_TLS_FRONT_CA_FILE ?? null, timeoutMs: e.DOMAIN_TLS_PROBE_TIMEOUT_MS },
    },
    safety: {
      reputation: {
        feeds: e.URL_REPUTATION_DRIVER.includes('feeds'),
        webRisk: e.URL_REPUTATION_DRIVER.includes('web-risk'),
        feedList,
        refreshMs: e.URL_REPUTATION_REFRESH_SECONDS * 1000,
        feedMaxBytes: e.URL_REPUTATION_FEED_MAX_BYTES,
        feedTimeoutMs: e.URL_REPUTATION_FEED_TIMEOUT_MS,
      },
      webRisk: {
        apiKey: e.WEB_RISK_API_KEY ?? null,
        endpoint: e.WEB_RISK_ENDPOINT,
        threatTypes: e.WEB_RISK_THREAT_TYPES,
        timeoutMs: e.WEB_RISK_TIMEOUT_MS,
        requestsPerSecond: e.WEB_RISK_REQUESTS_PER_SECOND,
        cacheMs: e.WEB_RISK_CACHE_SECONDS * 1000,
        cacheHosts: e.WEB_RISK_CACHE_HOSTS,
      },
      checks: {
        requestsPerSecond: e.LINK_CHECK_REQUESTS_PER_SECOND,
        intervalMs: e.LINK_CHECK_INTERVAL_HOURS * 3_600_000,
        retryMs: e.LINK_CHECK_RETRY_MINUTES * 60_000,
        failuresToBreak: e.LINK_CHECK_FAILURES_TO_BREAK,
        hostIntervalMs: e.LINK_CHECK_HOST_INTERVAL_MS,
        timeoutMs: e.LINK_CHECK_TIMEOUT_MS,
        maxRedirects: e.LINK_CHECK_MAX_REDIRECTS,
        concurrency: e.LINK_CHECK_CONCURRENCY,
        allowPrivate: e.LINK_CHECK_ALLOW_PRIVATE,
        fixedHosts,
      },
      sweep: { linksPerSecond: e.SAFETY_SWEEP_LINKS_PER_SECOND, intervalMs: e.SAFETY_SWEEP_INTERVAL_MINUTES * 60_000 },
      jobsIntervalMs: e.SAFETY_JOBS_INTERVAL_MS,
      reportsPerVisitorPerHour: e.REPORTS_PER_VISITOR_PER_HOUR,
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
        consoleOrigin: new URL(consoleUrl).origin,
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
        startsPerMinute: { perTenant: e.SSO_STARTS_PER_MINUTE_PER_TENANT, perAddress: e.SSO_STARTS_PER_MINUTE_PER_ADDRESS },
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
            compression: e.KAFKA_CLICK_COMPRESSION,
          }
        : { driver: 'memory', partitions: e.KAFKA_CLICK_PARTITIONS, consumerGroup: e.KAFKA_CONSUMER_GROUP },
    clickBuffer: { capacity: e.CLICK_BUFFER_CAPACITY, batchSize: e.CLICK_BUFFER_BATCH_SIZE, flushIntervalMs: e.CLICK_BUFFER_FLUSH_MS },
    olap:
      e.OLAP_DRIVER === 'clickhouse'
        ? { driver: 'clickhouse', url: e.CLICKHOUSE_URL!, username: e.CLICKHOUSE_USER, password: e.CLICKHOUSE_PASSWORD, database: e.CLICKHOUSE_DATABASE }
        : { driver: 'chdb', database: e.CLICKHOUSE_DATABASE },
    analytics: {
      consumerEnabled: e.ANALYTICS_CONSUMER_ENABLED,
      consumerConcurrency: e.ANALYTICS_CONSUMER_CONCURRENCY,
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
      counterSyncMs: e.REDIRECT_COUNTER_SYNC_MS,
      clickLeaseMs: e.REDIRECT_CLICK_LEASE_MS,
      tenantRefreshMs: e.REDIRECT_TENANT_REFRESH_MS,
      qrScansPerVisitorPerMinute: e.QR_SCANS_PER_VISITOR_PER_MINUTE,
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
