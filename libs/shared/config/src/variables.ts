import { isIP } from 'net';
import { z } from 'zod';

/**
 * Every environment variable the platform reads, each declared once: its group, what it does, its
 * schema, its default as one would write it in the environment, and whether it is a secret. The
 * boot schema (`envSchema`), the typed slices (`loadConfig`) and docs/configuration.md
 * (`renderConfigurationReference`, checked for drift by a spec) are all made from this list.
 */
export const GROUPS = [
  'Server',
  'Logging',
  'HTTP',
  'Secrets',
  'Links',
  'Plans',
  'Batch and bulk changes',
  'Audit log',
  'People and sessions',
  'Single sign-on',
  'Console',
  'Clients (CLI and SDK tools)',
  'Storage (shards and meta database)',
  'Shared cache (Redis)',
  'Event bus (Kafka)',
  'Webhooks',
  'Custom domains and TLS',
  'Trust and safety',
  'Analytics',
  'Geolocation',
  'Redirect read path',
] as const;
export type Group = (typeof GROUPS)[number];

export interface Variable<S extends z.ZodType = z.ZodType> {
  readonly group: Group;
  readonly description: string;
  readonly schema: S;
  /** The default as written in the environment; absent: the variable is optional. */
  readonly default?: string;
  /** How the default is worked out when it depends on other variables (shown instead of `default`). */
  readonly derivedDefault?: string;
  /** Never printed, logged or put in a document's example values. */
  readonly secret?: boolean;
}
interface Defaulted<S extends z.ZodType> extends Variable<S> {
  readonly default: string;
}

const withDefault = <S extends z.ZodType>(group: Group, defaultValue: string, schema: S, description: string): Defaulted<S> => ({
  group,
  description,
  schema,
  default: defaultValue,
});
const optional = <S extends z.ZodType>(
  group: Group,
  schema: S,
  description: string,
  extra: { derivedDefault?: string; secret?: boolean } = {},
): Variable<S> => ({ group, description, schema, ...extra });

const int = (min: number, max?: number) => (max === undefined ? z.coerce.number().int().min(min) : z.coerce.number().int().min(min).max(max));
const port = int(1, 65535);
/** 0 lets the system pick a free port (tests run many listeners side by side). */
const adminPort = int(0, 65535);
const csv = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
);
/** Switches take exactly these spellings: anything else fails the boot. */
export const SWITCH_SPELLINGS = ['true', 'false', 'on', 'off', '1', '0'] as const;
const bool = z
  .enum(SWITCH_SPELLINGS, { error: (issue) => `must be one of ${SWITCH_SPELLINGS.join('|')}, got "${String(issue.input)}"` })
  .transform((v) => v === 'true' || v === 'on' || v === '1');
const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (issue) => `must be one of ${values.join('|')}, got "${String(issue.input)}"` });

/** A name server as node's resolver takes it: an address, `a.b.c.d:port` or `[v6]:port`. */
function isNameServer(value: string): boolean {
  if (isIP(value)) return true;
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(value) ?? /^([^:\[\]]+):(\d{1,5})$/.exec(value);
  return m !== null && isIP(m[1]) !== 0 && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
}

/** The files of a GEO_DATABASE that names files. */
export const geoFiles = (s: string): string[] =>
  s
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);

export const VARIABLES = {
  // ------------------------------------------------------------------ Server
  NODE_ENV: withDefault('Server', 'development', z.string(), 'The usual Node.js setting; `production` in the image. Nothing else changes with it.'),
  HOST: withDefault('Server', '127.0.0.1', z.string(), 'Address the public listeners bind (`0.0.0.0` in containers).'),
  GENERATION_PORT: withDefault('Server', '8081', port, 'The generation app: the API, the console (`/console`), the compatible APIs.'),
  REDIRECT_PORT: withDefault('Server', '8080', port, 'The redirect app: `GET /{code}` and the visitor pages.'),
  ANALYTICS_PORT: withDefault('Server', '8082', port, 'The analytics app: the query API and the dashboard.'),
  ADMIN_HOST: withDefault(
    'Server',
    '127.0.0.1',
    z.string(),
    'Address of the operator listeners (`/metrics`, `/internal/*`, `/health/details`). Keep them off public networks (docs/design.md, "Security model").',
  ),
  GENERATION_ADMIN_PORT: withDefault('Server', '9081', adminPort, "The generation app's operator listener (0: any free port)."),
  REDIRECT_ADMIN_PORT: withDefault('Server', '9080', adminPort, "The redirect app's operator listener (0: any free port)."),
  ANALYTICS_ADMIN_PORT: withDefault('Server', '9082', adminPort, "The analytics app's operator listener (0: any free port)."),
  SHORTLINK_GENERATION_URL: optional(
    'Server',
    z.string().url(),
    "Where the redirect app relays Shlink's REST API (`/rest/v3/*` on a short domain, but `health`, which it answers itself): the generation app's address.",
    { derivedDefault: '`http://127.0.0.1:<GENERATION_PORT>` (`HOST` when it names one address)' },
  ),
  SHORTLINK_DATA_DIR: withDefault(
    'Server',
    './data',
    z.string(),
    'Where the embedded profile keeps its SQLite shards, chdb data and generated secrets, and the redirect its hot-link snapshot.',
  ),

  // ------------------------------------------------------------------ Logging
  LOG_LEVEL: withDefault('Logging', 'info', oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const), 'pino log level of every app.'),
  LOG_FORMAT: withDefault(
    'Logging',
    'auto',
    oneOf(['auto', 'json', 'pretty'] as const),
    '`json` (one object a line), `pretty` (readable lines), `auto` (pretty when stdout is a terminal, else json).',
  ),

  // ------------------------------------------------------------------ HTTP
  TRUSTED_PROXIES: withDefault(
    'HTTP',
    '',
    csv,
    'Load balancers whose `X-Forwarded-For` is believed: CIDRs or addresses, comma-separated; none by default. The right-most untrusted hop is the client.',
  ),
  HTTP_HEADERS_TIMEOUT_MS: withDefault('HTTP', '10000', int(1000, 120_000), "A request's headers must arrive within this (slowloris), else 408."),
  HTTP_REQUEST_TIMEOUT_MS: withDefault(
    'HTTP',
    '30000',
    int(1000, 600_000),
    'A whole request, body included, must arrive within this (batches: `BATCH_REQUEST_TIMEOUT_MS`).',
  ),
  CORS_ORIGINS: withDefault(
    'HTTP',
    '',
    csv,
    'Web origins whose pages may call the generation and analytics APIs from a browser (`https://console.example.com`, comma-separated; cookies included), or `*` for any (without cookies); none: no CORS headers.',
  ),
  COMPAT_CORS: withDefault(
    'HTTP',
    'true',
    bool,
    'CORS for the key-authenticated compatible APIs (Shlink `/rest/v3`, YOURLS `/yourls-api.php`, Bitly `/v4`), on every app that answers them: any origin, never with cookies (`Access-Control-Allow-Origin: *`, no credentials), as Shlink does. Off: they follow `CORS_ORIGINS`.',
  ),
  AUTH_FAILURES_PER_MINUTE: withDefault(
    'HTTP',
    '20',
    int(0),
    'Failed API-key checks allowed per client address and minute; beyond, further wrong keys get 429 (a valid key is always served; 0 = off).',
  ),

  ADMISSION_CONTROL: withDefault(
    'HTTP',
    'on',
    bool,
    'Each app sheds requests beyond its adaptive concurrency limit with 503 `OVERLOADED` and `Retry-After` instead of queueing them (docs/design.md, "Overload").',
  ),
  ADMISSION_LIMIT_INITIAL: withDefault(
    'HTTP',
    '100',
    int(1),
    'Requests in flight one app instance admits at start; the limit then adapts (AIMD) between the bounds below.',
  ),
  ADMISSION_LIMIT_MIN: withDefault('HTTP', '50', int(1), 'The adaptive limit of an API app (generation, analytics) never goes below this.'),
  ADMISSION_REDIRECT_LIMIT_MIN: withDefault(
    'HTTP',
    '1000',
    int(1),
    "The redirect's adaptive limit never goes below this: it sheds visits only beyond this many waiting at once (a stampede on one cold link coalesces into one shard query), never because the machine is slow.",
  ),
  ADMISSION_LIMIT_MAX: withDefault('HTTP', '2000', int(1), 'The adaptive limit never goes above this (nor below its floor).'),
  ADMISSION_REDIRECT_LATENCY_MS: withDefault(
    'HTTP',
    '250',
    int(1, 60_000),
    "The redirect's latency target: a redirect slower than this to its first byte lowers the limit (×0.9).",
  ),
  ADMISSION_API_LATENCY_MS: withDefault('HTTP', '1000', int(1, 60_000), 'The same for the API apps (generation, analytics).'),
  REQUEST_DEADLINE_REDIRECT_MS: withDefault(
    'HTTP',
    '2000',
    int(100, 60_000),
    "A visit's deadline: the shard calls under it get only what is left (0 left: refused at once). Not answered by the server itself: a visit whose handler still runs may still count its click.",
  ),
  REQUEST_DEADLINE_API_MS: withDefault(
    'HTTP',
    '20000',
    int(100, 600_000),
    'An API request not answered within this gets 503 `DEADLINE_EXCEEDED`, and the shard and ClickHouse calls under it get only what is left (a streamed body or answer keeps its own limits). Above the longest call the API makes on purpose: a domain ownership check, two DNS questions and an HTTP check of DOMAIN_CHECK_TIMEOUT_MS (5 s) each.',
  ),

  // ------------------------------------------------------------------ Secrets
  SHORTLINK_CODE_SECRET: optional(
    'Secrets',
    z.string(),
    'Key of the id → code bijection (and, derived from it, of list cursors, remembered-password cookies and sealed webhook and SSO secrets). Required with `DB_DRIVER=mysql`, at least 32 random bytes (`openssl rand -base64 32`), the same on every instance.',
    { derivedDefault: 'generated into `SHORTLINK_DATA_DIR/secrets` (embedded profile only)', secret: true },
  ),
  SHORTLINK_VISITOR_SECRET: optional(
    'Secrets',
    z.string(),
    'Key of the visitor hash (unique visitors without storing addresses). Required with `DB_DRIVER=mysql`, at least 32 random bytes.',
    { derivedDefault: 'generated into `SHORTLINK_DATA_DIR/secrets` (embedded profile only)', secret: true },
  ),
  SHORTLINK_BOOTSTRAP_API_KEY: optional(
    'Secrets',
    z.string().min(16, 'must be at least 16 characters'),
    "The operator's key: its tenant (paid plan) is created at boot when the key is unknown, and at every boot the key is restored (every scope, `admin` included; not revoked; no expiry; its tenant active). Never printed.",
    { derivedDefault: 'none (the embedded profile generates a key on its first run and shows it once)', secret: true },
  ),

  // ------------------------------------------------------------------ Links
  SHORTLINK_PUBLIC_BASE_URL: optional('Links', z.string().url(), 'Public base of short URLs, e.g. `https://sho.rt`.', {
    derivedDefault: '`http://localhost:<REDIRECT_PORT>`',
  }),
  SHORTLINK_DEFAULT_DOMAIN: optional('Links', z.string().min(1), 'The domain links are created on when none is given.', {
    derivedDefault: 'the host of `SHORTLINK_PUBLIC_BASE_URL`',
  }),
  SHORTLINK_DOMAINS: withDefault('Links', '', csv, 'More short domains of the service (shared by every tenant), comma-separated.'),
  CODE_STRATEGY: withDefault(
    'Links',
    'sequence',
    oneOf(['sequence', 'hash'] as const),
    '`sequence` (segment ids scrambled by a keyed Feistel network) or `hash` (MurmurHash of the URL, retried on collision).',
  ),
  ID_BLOCK_SIZE: withDefault('Links', '1000', int(1, 1_000_000), 'Ids each generation instance takes from the meta database at once.'),
  URL_DNS_CHECK: withDefault(
    'Links',
    'false',
    bool,
    'Resolve the host of every target a link is given and refuse names that do not resolve or resolve to a non-public address.',
  ),
  URL_DNS_TIMEOUT_MS: withDefault('Links', '2000', int(100, 30_000), 'The bound of one lookup of `URL_DNS_CHECK`.'),
  BLOCKED_DOMAINS_FILE: optional('Links', z.string().min(1), 'A file of domains refused as targets, one per line (a listed domain covers its subdomains).'),
  RETIRED_CODE_DAYS: withDefault('Links', '90', int(0, 3650), 'A deleted or expired code is not handed out again for this many days.'),
  EXPIRY_JOB_INTERVAL_MS: withDefault(
    'Links',
    '60000',
    int(1000),
    'How often the generation app marks expired links, purges long-expired ones and old audit entries, batch records and sessions.',
  ),
  OUTBOX_RELAY_INTERVAL_MS: withDefault(
    'Links',
    '1000',
    int(50, 60_000),
    'How often each generation instance relays the link events of the shards’ outboxes to the caches (docs/design.md, "Edits reach every instance").',
  ),
  OUTBOX_LEASE_MS: withDefault(
    'Links',
    '10000',
    int(1000, 600_000),
    'How long a link event stays with the relay of the instance that wrote it (renewed while it works); then another relay takes it over. At least 3 × `OUTBOX_RELAY_INTERVAL_MS`.',
  ),
  OUTBOX_CONFIRM_AFTER_MS: withDefault(
    'Links',
    '3000',
    int(100, 600_000),
    'How long after delivering a link change to Redis the relay reads it back (a write a failover lost is delivered again).',
  ),

  // ------------------------------------------------------------------ Plans
  PLAN_FREE_REQUESTS_PER_MINUTE: withDefault(
    'Plans',
    '100',
    int(1),
    'API requests per tenant (all its keys together) and sliding minute on the generation and analytics APIs, free plan; shared by every instance.',
  ),
  PLAN_PAID_REQUESTS_PER_MINUTE: withDefault('Plans', '10000', int(1), 'The same, paid plan.'),
  PLAN_FREE_BATCH_ROWS_PER_DAY: withDefault('Plans', '10000', int(0), 'Batch-created links per tenant and sliding 24 h, free plan.'),
  PLAN_PAID_BATCH_ROWS_PER_DAY: withDefault('Plans', '5000000', int(0), 'The same, paid plan.'),
  PLAN_FREE_CONVERSIONS_PER_MONTH: withDefault(
    'Plans',
    '1000',
    int(0),
    'Leads and sales a tenant may have counted per sliding 30 days (reported by its backend or by Stripe; duplicates are free), free plan; beyond: 429 `CONVERSION_LIMIT_REACHED` with Retry-After.',
  ),
  PLAN_PAID_CONVERSIONS_PER_MONTH: withDefault('Plans', '10000000', int(0), 'The same, paid plan.'),
  PLAN_FREE_CONVERSION_METADATA_BYTES: withDefault(
    'Plans',
    '512',
    int(0, 65_536),
    "Bytes of JSON a lead's or a sale's `metadata` may take, free plan (and never more than `CONVERSION_METADATA_MAX_BYTES`); beyond: 400 `VALIDATION_FAILED` with `field: metadata`.",
  ),
  PLAN_PAID_CONVERSION_METADATA_BYTES: withDefault('Plans', '2048', int(0, 65_536), 'The same, paid plan.'),
  PLAN_FREE_MAX_KEYS: withDefault(
    'Plans',
    '5',
    int(1, 10_000),
    'Active keys a tenant holds at once (revoked and expired ones do not count), free plan; beyond: 403 `KEY_LIMIT_REACHED`.',
  ),
  PLAN_PAID_MAX_KEYS: withDefault('Plans', '100', int(1, 10_000), 'The same, paid plan.'),
  PLAN_FREE_CONCURRENT_BATCHES: withDefault(
    'Plans',
    '2',
    int(1, 1000),
    'Batch requests of a tenant running at once across instances, free plan; beyond: 429 `BATCH_CONCURRENCY_LIMIT`.',
  ),
  PLAN_PAID_CONCURRENT_BATCHES: withDefault('Plans', '10', int(1, 1000), 'The same, paid plan.'),
  PLAN_FREE_INVITATIONS_PER_HOUR: withDefault(
    'Plans',
    '10',
    int(1, 100_000),
    'Invitations a tenant sends in a sliding hour, shared by every instance, free plan; beyond: 429 `INVITATION_LIMIT_REACHED`.',
  ),
  PLAN_PAID_INVITATIONS_PER_HOUR: withDefault('Plans', '100', int(1, 100_000), 'The same, paid plan.'),
  PLAN_FREE_MAX_DOMAINS: withDefault(
    'Plans',
    '1',
    int(0, 10_000),
    'Domains a tenant holds (added by itself, pending or not, and given by an operator), free plan; beyond, adding one: 403 `DOMAIN_LIMIT_REACHED`.',
  ),
  PLAN_PAID_MAX_DOMAINS: withDefault('Plans', '50', int(0, 10_000), 'The same, paid plan.'),

  // ------------------------------------------------------------------ Batch and bulk changes
  BATCH_MAX_ROWS: withDefault('Batch and bulk changes', '100000', int(1, 1_000_000), 'Rows of one batch request at most.'),
  BATCH_MAX_BODY_BYTES: withDefault('Batch and bulk changes', String(256 * 1024 * 1024), int(1024), 'Bytes of one batch request body at most (256 MiB).'),
  BATCH_CHUNK_ROWS: withDefault(
    'Batch and bulk changes',
    '1000',
    int(1, 10_000),
    'Rows validated, charged, recorded and answered together; also the memory bound of a batch.',
  ),
  BATCH_INSERT_ROWS: withDefault('Batch and bulk changes', '500', int(1, 10_000), 'Rows per multi-row INSERT at most.'),
  BATCH_WORKERS: withDefault(
    'Batch and bulk changes',
    '1',
    int(0, 16),
    "Worker threads that parse and check a batch's rows (JSON, the create's contract, the URL policy's fixed part) while the request's thread writes the chunk before them; 0: the request's thread does it.",
  ),
  BATCH_REQUEST_TIMEOUT_MS: withDefault('Batch and bulk changes', '600000', int(1000, 3_600_000), 'A batch request may take this long to arrive.'),
  BATCH_IDEMPOTENCY_HOURS: withDefault('Batch and bulk changes', '24', int(1, 24 * 30), "How long a batch's `Idempotency-Key` and its answer are kept."),
  BATCH_LEASE_MS: withDefault(
    'Batch and bulk changes',
    '10000',
    int(500, 600_000),
    "An instance's claim on a running batch, and a batch's concurrency slot, last this long without renewal (an instance that dies frees them after this).",
  ),
  BULK_MAX_LINKS: withDefault('Batch and bulk changes', '10000', int(1, 100_000), 'Links one bulk edit or delete may change.'),
  BULK_CONCURRENCY: withDefault('Batch and bulk changes', '16', int(1, 256), 'Links a bulk change changes at the same time.'),

  // ------------------------------------------------------------------ Audit log
  AUDIT_RETENTION_DAYS: withDefault(
    'Audit log',
    '365',
    int(1, 36_500),
    'Days audit entries are kept; the expiry job deletes older ones in batches (docs/design.md, "Audit log").',
  ),

  // ------------------------------------------------------------------ People and sessions
  INVITATION_TTL_HOURS: withDefault('People and sessions', '72', int(1, 720), 'How long an invitation works.'),
  SMTP_URL: optional(
    'People and sessions',
    z.string().regex(/^smtps?:\/\/[^\s]+$/, 'must be smtp://[user:pass@]host[:port] or smtps://…'),
    '`smtp://[user:pass@]host[:port]` or `smtps://…`: invitations are mailed through it; without it they are only in the API’s answer.',
    { secret: true },
  ),
  MAIL_FROM: withDefault('People and sessions', 'shortlink <no-reply@localhost>', z.string().min(3).max(320), 'The sender of invitation mails.'),
  PASSWORD_MIN_LENGTH: withDefault('People and sessions', '12', int(8, 128), "Members' passwords at least this long (also checked against common passwords)."),
  SESSION_IDLE_MINUTES: withDefault('People and sessions', '120', int(1, 43_200), 'A session ends when unused this long (at most `SESSION_ABSOLUTE_HOURS`).'),
  SESSION_ABSOLUTE_HOURS: withDefault('People and sessions', '24', int(1, 8760), 'A session ends this long after its sign-in, used or not.'),
  SESSION_COOKIE_SECURE: withDefault(
    'People and sessions',
    'auto',
    oneOf(['auto', 'on', 'off'] as const),
    'The session cookie’s `Secure` attribute: `auto` (when the request came over https, as a `TRUSTED_PROXIES` hop tells, or `SHORTLINK_CONSOLE_URL` is https), `on`, `off`.',
  ),
  SIGN_IN_FAILURES_PER_ACCOUNT: withDefault(
    'People and sessions',
    '10',
    int(1, 10_000),
    'Failed sign-ins allowed per email in the throttle window, then 429 with `Retry-After`; wrong codes sent to turn a second factor off or move it count too.',
  ),
  SIGN_IN_FAILURES_PER_ADDRESS: withDefault('People and sessions', '50', int(1, 100_000), 'Failed sign-ins allowed per client address in the throttle window.'),
  SIGN_IN_THROTTLE_WINDOW_SECONDS: withDefault(
    'People and sessions',
    '300',
    int(10, 3600),
    'The sliding window of the sign-in throttle (shared by every instance).',
  ),

  // ------------------------------------------------------------------ Single sign-on
  SSO_CALLBACK_URL: optional(
    'Single sign-on',
    z.string().url(),
    "The redirect URI registered with the tenants' OpenID providers: this app's `/api/v1/auth/sso/callback` as browsers reach it.",
    { derivedDefault: '`http://localhost:<GENERATION_PORT>/api/v1/auth/sso/callback`' },
  ),
  SSO_TIMEOUT_SECONDS: withDefault(
    'Single sign-on',
    '10',
    int(1, 120),
    'How long each call to a provider (discovery, token, keys, userinfo) may take before 503 `SSO_PROVIDER_UNAVAILABLE`; a start that cannot reach the provider is answered this long after it began, never sooner.',
  ),
  SSO_ALLOW_INSECURE_ISSUERS: withDefault(
    'Single sign-on',
    'false',
    bool,
    'Accept `http://` issuers and providers on internal addresses (tests and closed networks only: tokens would cross the network in the clear).',
  ),
  SSO_STARTS_PER_MINUTE_PER_TENANT: withDefault(
    'Single sign-on',
    '600',
    int(1, 1_000_000),
    'Single sign-ins anyone may start per minute for one tenant (a start may reach its provider), then 429 with `Retry-After`; counted by every instance together.',
  ),
  SSO_STARTS_PER_MINUTE_PER_ADDRESS: withDefault(
    'Single sign-on',
    '60',
    int(1, 100_000),
    'Single sign-ins one client address may start per minute, then 429 with `Retry-After`.',
  ),

  // ------------------------------------------------------------------ Console
  SHORTLINK_CONSOLE_URL: optional(
    'Console',
    z.string().url(),
    "The console's address as people reach it; invitations point to `<url>/accept-invitation`, an https URL makes the session cookie `Secure`, and its origin may sign in and write with the session cookie from a browser (as the app's own host may).",
    { derivedDefault: '`http://localhost:<GENERATION_PORT>/console`' },
  ),
  SHORTLINK_ANALYTICS_URL: optional('Console', z.string().url(), "Where the console opens a link's analytics (the dashboard, in the same session).", {
    derivedDefault: "the console's host on `ANALYTICS_PORT`",
  }),
  SHORTLINK_ANALYTICS_API_URL: optional(
    'Console',
    z.string().url(),
    "Where the generation app reaches the analytics app's query API for the console (`GET /api/analytics/v1/…` is relayed there with the person's session).",
    { derivedDefault: '`SHORTLINK_ANALYTICS_URL`, else `http://127.0.0.1:<ANALYTICS_PORT>` (`HOST` when it names one address)' },
  ),

  // ------------------------------------------------------------------ Clients
  SHORTLINK_API_URL: optional(
    'Clients (CLI and SDK tools)',
    z.string().url(),
    'The generation API the `shortlink` CLI, `links:import` and `links:export` call (no app reads it).',
    { derivedDefault: '`http://127.0.0.1:8081`' },
  ),
  SHORTLINK_API_KEY: optional(
    'Clients (CLI and SDK tools)',
    z.string().min(1),
    'The key those clients send as `x-api-key` (an environment variable, not a flag, which other users of the machine could read).',
    { secret: true },
  ),

  // ------------------------------------------------------------------ Storage
  DB_DRIVER: withDefault(
    'Storage (shards and meta database)',
    'sqlite',
    oneOf(['sqlite', 'mysql'] as const),
    '`sqlite` (embedded: one file per shard and one meta file under `SHORTLINK_DATA_DIR`) or `mysql` (MySQL/MariaDB shards and meta database).',
  ),
  SQLITE_SHARDS: withDefault('Storage (shards and meta database)', 's0,s1,s2,s3', csv, 'sqlite: shard names, one file each under `SHORTLINK_DATA_DIR/shards`.'),
  MYSQL_SHARDS: optional(
    'Storage (shards and meta database)',
    z.string(),
    'mysql: the shard ring as `name=url` pairs, e.g. `s0=mysql://u:p@127.0.0.1:3307/shortlink_s0,s1=…`. Required with `DB_DRIVER=mysql`.',
    { secret: true },
  ),
  MYSQL_META_URL: optional(
    'Storage (shards and meta database)',
    z.string(),
    'mysql: the meta database (tenants, keys, people, sessions, id sequences, webhooks, the audit log, the ring). Required with `DB_DRIVER=mysql`.',
    { secret: true },
  ),
  MYSQL_POOL_SIZE: withDefault('Storage (shards and meta database)', '10', int(1, 500), 'Connections per MySQL database and app instance.'),
  MYSQL_SPARE_SHARDS: optional(
    'Storage (shards and meta database)',
    z.string(),
    'mysql: shards that exist but are not on the ring yet (`name=url` pairs): where `npm run reshard -- --add` can move links.',
    { secret: true },
  ),
  SHARD_STRATEGY: withDefault(
    'Storage (shards and meta database)',
    'ring',
    oneOf(['ring', 'jump'] as const),
    '`ring` (consistent hashing with virtual nodes) or `jump`: the ring written as version 1 when the meta database has none; after that `npm run reshard` changes it.',
  ),
  SHARD_VIRTUAL_NODES: withDefault('Storage (shards and meta database)', '150', int(1, 10_000), 'Virtual nodes per shard of a new ring.'),
  SHARD_RING_POLL_MS: withDefault(
    'Storage (shards and meta database)',
    '1000',
    int(50, 60_000),
    'How often each app reads the versioned shard ring (docs/design.md, "Online resharding").',
  ),
  SHARD_RING_MOVE_POLL_MS: withDefault(
    'Storage (shards and meta database)',
    '100',
    int(20, 60_000),
    'How often while a move is under way (never more than `SHARD_RING_POLL_MS`): the frozen step holds writes of moving links for about two of these.',
  ),
  SHARD_RING_LEASE_MS: withDefault(
    'Storage (shards and meta database)',
    '10000',
    int(500, 600_000),
    'An app that could not read the ring for this long stops writing links until it can (at least 3 × `SHARD_RING_POLL_MS`).',
  ),
  SHARD_TIMEOUT_MS: withDefault(
    'Storage (shards and meta database)',
    '3000',
    int(0, 120_000),
    'Longest one shard operation may take before 503 `SHARD_UNAVAILABLE` (a batch chunk gets ten times it; 0: unbounded).',
  ),
  SHARD_BREAKER_FAILURES: withDefault(
    'Storage (shards and meta database)',
    '5',
    int(1),
    'Consecutive failures after which a shard is skipped (503 at once) for `SHARD_BREAKER_OPEN_MS`.',
  ),
  SHARD_BREAKER_OPEN_MS: withDefault('Storage (shards and meta database)', '1000', int(10), 'How long an open shard breaker refuses before it tries again.'),

  // ------------------------------------------------------------------ Shared cache
  CACHE_DRIVER: withDefault(
    'Shared cache (Redis)',
    'memory',
    oneOf(['memory', 'redis'] as const),
    '`memory` (in-process, embedded profile) or `redis` (a Redis Cluster: `REDIS_CLUSTER_NODES`).',
  ),
  REDIS_CLUSTER_NODES: optional('Shared cache (Redis)', csv, '`host:port` of some cluster nodes, comma-separated. Required with `CACHE_DRIVER=redis`.'),
  REDIS_WRITE_BATCHING: withDefault(
    'Shared cache (Redis)',
    'cork',
    oneOf(['cork', 'pipeline', 'off'] as const),
    'How the commands of one event-loop turn reach a node: `cork` (one socket write per node, no extra objects), `pipeline` (ioredis auto-pipelining), `off` (one write per command).',
  ),
  REDIS_COMMAND_TIMEOUT_MS: withDefault('Shared cache (Redis)', '500', int(10, 60_000), 'Deadline of one Redis command.'),
  MEMORY_CACHE_MAX_ENTRIES: withDefault('Shared cache (Redis)', '1000000', int(100), 'Entries the in-process cache (`CACHE_DRIVER=memory`) holds at most.'),

  // ------------------------------------------------------------------ Event bus
  BUS_DRIVER: withDefault(
    'Event bus (Kafka)',
    'memory',
    oneOf(['memory', 'kafka'] as const),
    '`memory` (an in-process partitioned log, embedded profile) or `kafka` (`KAFKA_BROKERS`).',
  ),
  KAFKA_BROKERS: optional('Event bus (Kafka)', csv, '`host:port` of the brokers, comma-separated. Required with `BUS_DRIVER=kafka`.'),
  KAFKA_CLICK_TOPIC: withDefault('Event bus (Kafka)', 'shortlink.clicks', z.string(), 'The topic of click events (the redirect produces, analytics consumes).'),
  KAFKA_CLICK_PARTITIONS: withDefault('Event bus (Kafka)', '6', int(1, 1000), 'Partitions of the click topic when the platform creates it.'),
  KAFKA_CONSUMER_GROUP: withDefault('Event bus (Kafka)', 'shortlink-analytics', z.string(), "The analytics consumer's group on the click topic."),
  KAFKA_SESSION_TIMEOUT_MS: withDefault(
    'Event bus (Kafka)',
    '30000',
    int(6000, 300_000),
    "Consumer session: a member that stops heartbeating loses its partitions after this (the broker's minimum is 6 s).",
  ),
  KAFKA_EVENTS_TOPIC: withDefault(
    'Event bus (Kafka)',
    'shortlink.events',
    z.string(),
    "The platform's own events (link changes, batches): the generation app produces, the webhook deliverer consumes.",
  ),
  KAFKA_CONVERSIONS_TOPIC: withDefault(
    'Event bus (Kafka)',
    'shortlink.conversions',
    z.string(),
    'Leads and sales (docs/analytics.md, "Conversions"): the generation app produces, analytics consumes (group `<KAFKA_CONSUMER_GROUP>.conversions`).',
  ),
  KAFKA_WEBHOOK_CONSUMER_GROUP: withDefault(
    'Event bus (Kafka)',
    'shortlink-webhooks',
    z.string(),
    "The webhook deliverer's group on the events topic (and `<group>.clicks` on the click topic).",
  ),
  CLICK_BUFFER_CAPACITY: withDefault('Event bus (Kafka)', '100000', int(1), "Clicks the redirect's buffer holds before the bus at most."),
  CLICK_BUFFER_BATCH_SIZE: withDefault(
    'Event bus (Kafka)',
    '5000',
    int(1),
    'Clicks the redirect sends to the bus in one batch at most (a busy redirect sends once per flush interval, one record per partition).',
  ),
  KAFKA_CLICK_COMPRESSION: withDefault(
    'Event bus (Kafka)',
    'none',
    oneOf(['none', 'gzip'] as const),
    'Compression of the click records: `none` (binary records with interned strings; gzip cost the redirect ~12 µs of its core per click) or `gzip` (docs/analytics.md, "Producer").',
  ),
  CLICK_BUFFER_FLUSH_MS: withDefault('Event bus (Kafka)', '200', int(1), "How long a click waits in the redirect's buffer at most."),

  // ------------------------------------------------------------------ Webhooks
  WEBHOOK_ALLOW_PRIVATE: withDefault(
    'Webhooks',
    'false',
    bool,
    'Deliver to private, loopback and link-local addresses too (tests, private deployments); off: such URLs get 400 `URL_NOT_ALLOWED` and fail at delivery.',
  ),
  WEBHOOK_RETRY_BASE_MS: withDefault(
    'Webhooks',
    '5000',
    int(10, 3_600_000),
    'The delay before the second attempt; each next one doubles (with jitter) up to `WEBHOOK_RETRY_MAX_MS`.',
  ),
  WEBHOOK_RETRY_MAX_MS: withDefault('Webhooks', '3600000', int(10, 86_400_000), 'The longest delay between two attempts.'),
  WEBHOOK_RETRY_WINDOW_MS: withDefault('Webhooks', '86400000', int(100, 7 * 86_400_000), 'Attempts go on this long after the event (24 h).'),
  WEBHOOK_DISABLE_AFTER_MS: withDefault(
    'Webhooks',
    String(3 * 86_400_000),
    int(1000, 30 * 86_400_000),
    "An endpoint whose every attempt failed this long is disabled (3 days; its tenant's audit log says so).",
  ),
  WEBHOOK_TIMEOUT_MS: withDefault('Webhooks', '10000', int(100, 60_000), "How long one attempt waits for the receiver's answer."),

  // ------------------------------------------------------------------ Custom domains and TLS
  DOMAIN_VERIFIER: withDefault(
    'Custom domains and TLS',
    'on',
    bool,
    "Run the ownership checks of tenants' domains in this generation instance. Every instance may: each check is taken by one at a time.",
  ),
  DOMAIN_VERIFIER_INTERVAL_MS: withDefault('Custom domains and TLS', '5000', int(100, 600_000), 'How often an instance looks for checks that are due.'),
  DOMAIN_VERIFICATION_METHODS: withDefault(
    'Custom domains and TLS',
    'dns,http',
    csv.pipe(z.array(oneOf(['dns', 'http'] as const)).min(1)),
    'How a domain is proven: `dns` (a TXT record `_shortlink-challenge.<domain>`), `http` (the token served at `http://<domain>/.well-known/shortlink-challenge/<token>`), or both (either proves it).',
  ),
  DOMAIN_DNS_RESOLVER: optional(
    'Custom domains and TLS',
    csv.pipe(
      z.array(
        z.string().refine(isNameServer, {
          error: (issue) => `"${String(issue.input)}" is not an address with an optional port (e.g. 10.0.0.2, 127.0.0.1:5353, [::1]:53)`,
        }),
      ),
    ),
    "Name servers the checks ask (TXT records, and the address of the HTTP check), as `host` or `host:port`, comma-separated; unset: the system's (`/etc/resolv.conf`, and `/etc/hosts` for addresses).",
  ),
  DOMAIN_CHECK_TIMEOUT_MS: withDefault('Custom domains and TLS', '5000', int(100, 60_000), 'How long one DNS question or HTTP check may take.'),
  DOMAIN_HTTP_CHECK_PORT: withDefault(
    'Custom domains and TLS',
    '80',
    port,
    'The port the HTTP check connects to (where the TLS front answers plain HTTP, as ACME HTTP-01 does).',
  ),
  DOMAIN_CHECK_ALLOW_PRIVATE: withDefault(
    'Custom domains and TLS',
    'off',
    bool,
    'Let the HTTP check connect to private, loopback and link-local addresses (off: a domain resolving to one fails its check, so that a tenant cannot make the service probe its network).',
  ),
  DOMAIN_FIRST_CHECK_MS: withDefault('Custom domains and TLS', '10000', int(0, 86_400_000), 'The first automatic check of a domain just added.'),
  DOMAIN_CHECK_BACKOFF_MS: withDefault(
    'Custom domains and TLS',
    '60000',
    int(100, 86_400_000),
    'The first retry after a failed check; each next one waits twice as long, up to `DOMAIN_CHECK_BACKOFF_MAX_MS`. A domain just verified is checked once more after it, and that check reads its certificate.',
  ),
  DOMAIN_CHECK_BACKOFF_MAX_MS: withDefault('Custom domains and TLS', '3600000', int(100, 7 * 86_400_000), 'The longest wait between two retries.'),
  DOMAIN_RETRY_WINDOW_HOURS: withDefault(
    'Custom domains and TLS',
    '72',
    int(1, 24 * 365),
    'How long a pending (or unverified) domain is retried automatically; a check the tenant asks for starts the window again.',
  ),
  DOMAIN_RECHECK_INTERVAL_MS: withDefault(
    'Custom domains and TLS',
    '21600000',
    int(1000, 30 * 86_400_000),
    'A verified domain is checked again this long after its last check passed (6 h).',
  ),
  DOMAIN_UNVERIFY_AFTER_FAILURES: withDefault(
    'Custom domains and TLS',
    '3',
    int(1, 100),
    'Re-checks in a row that find the proof gone (every method answered no) before a verified domain is unverified (webhook `domain.unverified`); a check that could not tell does not count.',
  ),
  DOMAIN_TLS_FRONT: optional(
    'Custom domains and TLS',
    z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'must be host:port'),
    "The TLS front's HTTPS listener (`host:port`, e.g. `caddy:443`): each verified domain's certificate is read there when its re-check passes, for the certificate metrics. Unset: none read.",
  ),
  DOMAIN_TLS_FRONT_CA_FILE: optional(
    'Custom domains and TLS',
    z.string(),
    "A PEM file of the CAs the front's certificates are checked against (a private or test ACME CA); unset: the system's.",
  ),
  DOMAIN_TLS_PROBE_TIMEOUT_MS: withDefault(
    'Custom domains and TLS',
    '30000',
    int(100, 300_000),
    'How long reading a certificate from the front may take (the first read of a domain waits for the front to obtain it).',
  ),
  // ------------------------------------------------------------------ Trust and safety
  URL_REPUTATION_DRIVER: withDefault(
    'Trust and safety',
    'feeds',
    oneOf(['none', 'feeds', 'web-risk', 'feeds+web-risk'] as const),
    'Who judges the targets of links at create and edit and on schedule: the threat feeds of `URL_REPUTATION_FEEDS`, Google Web Risk (`WEB_RISK_API_KEY`), both, or nobody (docs/design.md, "Trust and safety").',
  ),
  URL_REPUTATION_FEEDS: withDefault(
    'Trust and safety',
    '',
    csv,
    'Threat feeds, comma-separated, each `format[/flag|/ban]:location`: a format of `urlhaus` (CSV), `phishtank` (JSON), `openphish` (text), `hosts` (host lists as DNS blockers use them), and a file path or an http(s) URL. A hit bans the link (451), or flags it (warning page) for `hosts`, unless `/flag` or `/ban` says otherwise.',
  ),
  URL_REPUTATION_REFRESH_SECONDS: withDefault(
    'Trust and safety',
    '300',
    int(1, 86_400),
    'How often every feed is read again (a URL with its ETag and Last-Modified, a file by its size and time); live links on the hosts a change adds are judged within the next refresh.',
  ),
  URL_REPUTATION_FEED_MAX_BYTES: withDefault(
    'Trust and safety',
    String(64 * 1024 * 1024),
    int(1024),
    'The largest feed read; a longer one fails and the last good one stays in use.',
  ),
  URL_REPUTATION_FEED_TIMEOUT_MS: withDefault('Trust and safety', '60000', int(100, 600_000), 'How long reading a feed from a URL may take.'),
  WEB_RISK_API_KEY: optional(
    'Trust and safety',
    z.string().min(1),
    'The API key of Google Web Risk (`uris.search`). Required with a `URL_REPUTATION_DRIVER` that names `web-risk`.',
    {
      secret: true,
    },
  ),
  WEB_RISK_ENDPOINT: withDefault(
    'Trust and safety',
    'https://webrisk.googleapis.com/v1/uris:search',
    z.string().url(),
    'The `uris.search` URL (a test server or a proxy may stand in).',
  ),
  WEB_RISK_THREAT_TYPES: withDefault(
    'Trust and safety',
    'MALWARE,SOCIAL_ENGINEERING,UNWANTED_SOFTWARE',
    csv,
    'The threat lists searched, comma-separated; `MALWARE` and `SOCIAL_ENGINEERING` ban, the others flag.',
  ),
  WEB_RISK_TIMEOUT_MS: withDefault(
    'Trust and safety',
    '1500',
    int(50, 30_000),
    'How long a create or an edit waits for Web Risk; slower, the link is made on the feeds’ verdict and screened again by the scheduled checks.',
  ),
  WEB_RISK_REQUESTS_PER_SECOND: withDefault(
    'Trust and safety',
    '10',
    int(1, 10_000),
    'Calls to Web Risk per second and instance at most; beyond, targets are screened later.',
  ),
  WEB_RISK_CACHE_SECONDS: withDefault(
    'Trust and safety',
    '300',
    int(1, 86_400),
    'How long "nothing known" from Web Risk is believed (a hit holds until the `expireTime` of its answer).',
  ),
  WEB_RISK_CACHE_HOSTS: withDefault('Trust and safety', '10000', int(1), 'Hosts whose Web Risk answers each instance keeps.'),
  LINK_CHECK_REQUESTS_PER_SECOND: withDefault(
    'Trust and safety',
    '20',
    int(0, 10_000),
    'The budget of the dead-link checks: requests to targets per second over all instances (each redirect hop and GET retry counted); 0 turns the checks off. 20 covers 1M targets a day.',
  ),
  LINK_CHECK_INTERVAL_HOURS: withDefault('Trust and safety', '24', int(1, 24 * 365), 'How often a target that answers is checked again.'),
  LINK_CHECK_RETRY_MINUTES: withDefault(
    'Trust and safety',
    '60',
    int(0, 24 * 60),
    'The first check again after a failure; it doubles with each failure in a row, up to `LINK_CHECK_INTERVAL_HOURS` (0: at once, for tests).',
  ),
  LINK_CHECK_FAILURES_TO_BREAK: withDefault('Trust and safety', '2', int(1, 100), 'Failed checks in a row before a target counts as broken.'),
  LINK_CHECK_HOST_INTERVAL_MS: withDefault('Trust and safety', '1000', int(0, 3_600_000), 'At most one check of a host per this long.'),
  LINK_CHECK_TIMEOUT_MS: withDefault('Trust and safety', '10000', int(100, 120_000), "How long one request of a check waits for the target's answer."),
  LINK_CHECK_MAX_REDIRECTS: withDefault('Trust and safety', '5', int(0, 20), 'Redirects a check follows at most (each through the address check).'),
  LINK_CHECK_CONCURRENCY: withDefault('Trust and safety', '16', int(1, 1000), 'Checks in flight at once.'),
  LINK_CHECK_ALLOW_PRIVATE: withDefault(
    'Trust and safety',
    'false',
    bool,
    'Let the checks connect to private, loopback and link-local addresses (tests, private deployments); off: a target that resolves to one is broken with `private-address`.',
  ),
  LINK_CHECK_HOSTS: withDefault(
    'Trust and safety',
    '',
    csv,
    'Fixed addresses for the checks, as curl’s `--resolve`: `name=address` or `*.suffix=address`, comma-separated (split-horizon DNS, tests); other names resolve through the system.',
  ),
  SAFETY_SWEEP_LINKS_PER_SECOND: withDefault(
    'Trust and safety',
    '1000',
    int(1, 1_000_000),
    'Links the sweep reads per second (the index of targets kept whole, every link judged by the feeds).',
  ),
  SAFETY_SWEEP_INTERVAL_MINUTES: withDefault('Trust and safety', '60', int(0, 7 * 24 * 60), 'The pause between two passes of the sweep.'),
  SAFETY_JOBS_INTERVAL_MS: withDefault(
    'Trust and safety',
    '1000',
    int(50, 60_000),
    'How often the generation app takes the next round of checks and relays new reports to the queue and the audit log.',
  ),
  REPORTS_PER_VISITOR_PER_HOUR: withDefault(
    'Trust and safety',
    '5',
    int(1, 10_000),
    'Reports one client address may send per hour, over every redirect instance.',
  ),

  // ------------------------------------------------------------------ Analytics
  OLAP_DRIVER: withDefault(
    'Analytics',
    'chdb',
    oneOf(['chdb', 'clickhouse'] as const),
    '`chdb` (ClickHouse in-process, embedded profile) or `clickhouse` (a ClickHouse server: `CLICKHOUSE_URL`).',
  ),
  CLICKHOUSE_URL: optional('Analytics', z.string().url(), "The ClickHouse server's HTTP address. Required with `OLAP_DRIVER=clickhouse`."),
  CLICKHOUSE_USER: withDefault('Analytics', 'default', z.string(), 'ClickHouse user.'),
  CLICKHOUSE_PASSWORD: { ...withDefault('Analytics', '', z.string(), 'ClickHouse password.'), secret: true },
  CLICKHOUSE_DATABASE: withDefault(
    'Analytics',
    'shortlink',
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier'),
    'The ClickHouse database (created when missing).',
  ),
  ANALYTICS_CONSUMER_ENABLED: withDefault('Analytics', 'true', bool, 'Whether this analytics instance consumes clicks (off: it only answers queries).'),
  ANALYTICS_CONSUMER_CONCURRENCY: withDefault(
    'Analytics',
    '6',
    int(1, 64),
    "Partitions of the click topic the consumer works on at once: one's batch is decoded and folded while another's insert runs in ClickHouse. Batches of one partition never overlap.",
  ),
  ANALYTICS_ALLOWED_LATENESS_SECONDS: withDefault(
    'Analytics',
    '86400',
    int(60, 30 * 86_400),
    'Events older than this when consumed are dropped (and counted); younger ones land in their own minute.',
  ),
  CONVERSION_CLICK_ID_TTL_DAYS: withDefault(
    'Analytics',
    '90',
    int(1, 3650),
    'Days after its click a click id may be reported in a lead; an older one answers 404 `CLICK_ID_NOT_FOUND` (docs/analytics.md, "Conversions").',
  ),
  CONVERSION_METADATA_MAX_BYTES: withDefault('Analytics', '2048', int(0, 65_536), "Bytes of JSON a lead's or a sale's `metadata` may take."),
  CONVERSION_DIMENSIONS_WAIT_MS: withDefault(
    'Analytics',
    '10000',
    int(0, 600_000),
    'How long the conversions consumer waits for the visit of a recent click (a lead reported before its click reached the raw visits) to copy the click\'s dimensions; after it the lead counts with unknown dimensions (docs/design.md, "Conversions").',
  ),
  ANALYTICS_MINUTE_RETENTION_DAYS: withDefault('Analytics', '30', int(1, 3650), 'Days minute rows are kept (old partitions are dropped).'),
  ANALYTICS_HOUR_RETENTION_DAYS: withDefault('Analytics', '400', int(0, 36_500), 'Days hour rows are kept (0 = forever).'),
  ANALYTICS_DAY_RETENTION_DAYS: withDefault('Analytics', '0', int(0, 36_500), 'Days day rows are kept (0 = forever).'),
  ANALYTICS_VISIT_RETENTION_DAYS: withDefault('Analytics', '90', int(1, 3650), 'Days the raw visits (a row per click) are kept.'),
  ANALYTICS_STREAM_REPLAY_EVENTS: withDefault(
    'Analytics',
    '10000',
    int(0, 1_000_000),
    'The live stream: clicks each analytics instance keeps for a `Last-Event-ID` resume, at most this many…',
  ),
  ANALYTICS_STREAM_REPLAY_SECONDS: withDefault('Analytics', '300', int(0, 86_400), '…and none older than this (an older id gets a `gap` event first).'),
  ANALYTICS_STREAM_MAX_PER_TENANT: withDefault(
    'Analytics',
    '5',
    int(1, 1000),
    'Open live streams per tenant on one analytics instance; one more answers 429 `STREAM_LIMIT_REACHED`.',
  ),

  // ------------------------------------------------------------------ Geolocation
  GEO_DATABASE: withDefault(
    'Geolocation',
    'country',
    z
      .string()
      .transform((s) => s.trim())
      .refine((s) => s === 'country' || s === 'city' || (geoFiles(s).length > 0 && geoFiles(s).every((f) => f.startsWith('/') && f.endsWith('.mmdb'))), {
        error: (issue) => `must be country, city or absolute paths of .mmdb files separated by commas, got "${String(issue.input)}"`,
      }),
    'Where countries (and regions and cities) of clients come from: `country` (DB-IP country, ~8 MB in memory), `city` (DB-IP city instead, ~135 MB), or absolute paths of `.mmdb` files in ip-location-db’s flat layout, comma-separated (docs/design.md, "Visitors").',
  ),

  // ------------------------------------------------------------------ Redirect read path
  CACHE_POLICY: withDefault(
    'Redirect read path',
    'lru',
    oneOf(['lru', 'ttl'] as const),
    '`lru` (Redis entries live `CACHE_MAX_TTL_SECONDS` less up to a tenth, evicted by `allkeys-lru`) or `ttl` (1800 s + up to 300, hot links 7200 s + up to 600, capped by `CACHE_MAX_TTL_SECONDS`).',
  ),
  CACHE_MAX_TTL_SECONDS: withDefault(
    'Redirect read path',
    '3600',
    int(10, 30 * 86_400),
    'No link entry of the shared cache (value, tombstone, "no such link") lives longer: the last net under an invalidation that was lost (docs/design.md, "Keys in the shared cache").',
  ),
  REDIRECT_L1_ENABLED: withDefault('Redirect read path', 'true', bool, "The redirect's in-process cache (L1)."),
  REDIRECT_L1_MAX_ENTRIES: withDefault('Redirect read path', '100000', int(1), 'Links L1 holds at most.'),
  REDIRECT_L1_MAX_BYTES: withDefault(
    'Redirect read path',
    String(64 * 1024 * 1024),
    int(1024),
    'Heap L1 entries take at most, as measured per entry (64 MiB; `bench/l1-memory`).',
  ),
  REDIRECT_L1_TTL_MS: withDefault('Redirect read path', '60000', int(1), 'How long an L1 entry lives: the bound of an edit whose change message was lost.'),
  REDIRECT_L1_NEGATIVE_TTL_MS: withDefault('Redirect read path', '5000', int(1), 'How long L1 remembers that a code does not exist.'),
  REDIRECT_REDIS_ENABLED: withDefault('Redirect read path', 'true', bool, 'Whether the redirect reads and fills the shared cache (Redis).'),
  BLOOM_ENABLED: withDefault('Redirect read path', 'true', bool, 'The Bloom filter of existing links, which answers unknown codes without a shard look-up.'),
  BLOOM_CAPACITY: withDefault('Redirect read path', '1000000', int(1000), "Links the filter's first generation holds (and the least a rebuild sizes for)."),
  BLOOM_FP_RATE: withDefault('Redirect read path', '0.01', z.coerce.number().gt(0).lt(0.5), 'False-positive target of the whole filter.'),
  BLOOM_PARTITIONS: withDefault('Redirect read path', '16', int(1, 1024), 'Bitmaps per generation of the filter.'),
  BLOOM_GROWTH: withDefault(
    'Redirect read path',
    '2',
    z.coerce.number().min(1.5).max(16),
    'When the newest generation holds 90 % of its links, the redirect adds one this many times larger.',
  ),
  BLOOM_LAYOUT_REFRESH_MS: withDefault(
    'Redirect read path',
    '1000',
    int(20, 60_000),
    'How often every app reads the filter\'s layout; one that could not for 3 × this answers "unknown", never "no".',
  ),
  HOT_WINDOW_SECONDS: withDefault('Redirect read path', '60', int(1), 'The hot-key detector: the window clicks are counted in…'),
  HOT_BUCKET_SECONDS: withDefault('Redirect read path', '10', int(1), '…in buckets of this many seconds…'),
  HOT_THRESHOLD: withDefault('Redirect read path', '50', int(1), '…clicks in the window that make a link hot (pinned in L1)…'),
  HOT_MAX_TRACKED: withDefault('Redirect read path', '5000', int(1), '…and links tracked at most.'),
  LOCK_TTL_MS: withDefault('Redirect read path', '3000', int(10), "The stampede lock of one link's shard look-up expires after this."),
  LOCK_WAIT_MS: withDefault('Redirect read path', '2000', int(0), 'How long a request waits for another instance’s look-up of the same link.'),
  LOCK_POLL_MS: withDefault('Redirect read path', '10', int(1), 'How often a waiting request looks for the value.'),
  DB_CONCURRENCY: withDefault('Redirect read path', '32', int(1), "The redirect's shard look-ups at once (each shard runs a quarter of it)."),
  DB_QUEUE_MAX: withDefault(
    'Redirect read path',
    '2000',
    int(0),
    "Look-ups beyond a shard's share wait in its queue, this many at most, before 503 (0: refuse at once).",
  ),
  DB_QUEUE_WAIT_MS: withDefault('Redirect read path', '1000', int(0, 30_000), 'How long one look-up may wait in that queue.'),
  REDIS_BREAKER_FAILURES: optional(
    'Redirect read path',
    int(1),
    'The Redis breaker of the read path: failures in a row that open it (each shard has its own, `SHARD_BREAKER_*`).',
    { derivedDefault: '`BREAKER_FAILURES`, else 5' },
  ),
  REDIS_BREAKER_HALF_OPEN_MS: optional('Redirect read path', int(10), 'How long the open Redis breaker waits before it tries Redis again.', {
    derivedDefault: '`BREAKER_HALF_OPEN_MS`, else 2000',
  }),
  BREAKER_FAILURES: optional('Redirect read path', int(1), 'Older name of `REDIS_BREAKER_FAILURES`, still read when the new one is not set.'),
  BREAKER_HALF_OPEN_MS: optional('Redirect read path', int(10), 'Older name of `REDIS_BREAKER_HALF_OPEN_MS`, still read when the new one is not set.'),
  RATE_LIMIT_PER_IP_PER_MINUTE: withDefault('Redirect read path', '6000', int(0), 'Redirects per client address and minute, per instance (0 = off).'),
  RATE_LIMIT_GLOBAL_PER_SECOND: withDefault(
    'Redirect read path',
    '50000',
    int(0),
    'Redirects per second of every instance together, counted in Redis (0 = off).',
  ),
  RATE_LIMIT_LOCAL_FALLBACK_PER_SECOND: withDefault(
    'Redirect read path',
    '20000',
    int(0),
    'Redirects per second of one instance while Redis is down (0 = off).',
  ),
  SNAPSHOT_FILE: optional('Redirect read path', z.string(), 'Where the redirect saves its hot links, to start warm.', {
    derivedDefault: '`<SHORTLINK_DATA_DIR>/redirect-hot-links.json`',
  }),
  SNAPSHOT_INTERVAL_MS: withDefault('Redirect read path', '30000', int(100), 'How often the hot-link snapshot is saved.'),
  SNAPSHOT_MAX_LINKS: withDefault('Redirect read path', '10000', int(1), 'Links the snapshot keeps at most.'),
  REDIRECT_CLICK_COUNT_FLUSH_MS: withDefault(
    'Redirect read path',
    '1000',
    int(50, 60_000),
    'How often clicks granted against `maxClicks` reach the shard\'s count (docs/design.md, "Max clicks").',
  ),
  REDIRECT_COUNTER_SYNC_MS: withDefault(
    'Redirect read path',
    '100',
    int(10, 10_000),
    'How often each redirect instance merges its counts of the per-link visitor limit with the shared windows and settles its maxClicks leases (docs/design.md, "Max clicks").',
  ),
  REDIRECT_CLICK_LEASE_MS: withDefault(
    'Redirect read path',
    '2000',
    int(100, 600_000),
    "How long a redirect instance's lease of maxClicks grants lasts without renewal: a crashed instance's unused grants come back after it.",
  ),
  REDIRECT_TENANT_REFRESH_MS: withDefault(
    'Redirect read path',
    '1000',
    int(100, 60_000),
    "How often the redirect reads tenants' domains, suspensions and domain settings again (and generation the domains): how late a change is seen when its message was lost.",
  ),
  QR_SCANS_PER_VISITOR_PER_MINUTE: withDefault(
    'Redirect read path',
    '10',
    int(0),
    "Visits by a link's QR URL counted as scans per client address and link in a minute, across instances; more are redirected and counted as `link` (0: every visit is a scan).",
  ),
  REDIRECT_PASSWORD_ATTEMPTS: withDefault(
    'Redirect read path',
    '5',
    int(1),
    'Password attempts per visitor and link per window, reserved before the check, a right one given back (then 429).',
  ),
  REDIRECT_PASSWORD_WINDOW_MS: withDefault('Redirect read path', String(15 * 60_000), int(1000), 'The window of `REDIRECT_PASSWORD_ATTEMPTS` (15 minutes).'),
  REDIRECT_PASSWORD_CONCURRENCY: withDefault('Redirect read path', '4', int(1), 'argon2 checks in flight per instance, shared round-robin by tenant.'),
  REDIRECT_PASSWORD_CHECKS_PER_VISITOR_PER_MINUTE: withDefault(
    'Redirect read path',
    '30',
    int(0),
    'Password checks per client address and minute in one instance, right passwords included (0 = off).',
  ),
} satisfies Record<string, Variable>;

export type VariableName = keyof typeof VARIABLES;

type Declared = typeof VARIABLES;
/** The parsed environment: a variable with a default always has a value, an optional one may not. */
export type Env = {
  [K in VariableName]: Declared[K] extends { default: string } ? z.output<Declared[K]['schema']> : z.output<Declared[K]['schema']> | undefined;
};

function schemaOf(declared: Variable): z.ZodType {
  return declared.default !== undefined ? declared.schema.prefault(declared.default) : declared.schema.optional();
}

/** The boot schema of some variables (the apps take all; the API clients only theirs). */
export function environmentSchema<K extends VariableName>(names: readonly K[]): z.ZodType<Pick<Env, K>> {
  return z.object(Object.fromEntries(names.map((name) => [name, schemaOf(VARIABLES[name])]))) as unknown as z.ZodType<Pick<Env, K>>;
}

/** Every variable the platform reads. */
export const envSchema = environmentSchema(Object.keys(VARIABLES) as VariableName[]);
