import { ConfigError, loadConfig } from './config';

const SECRETS = { SHORTLINK_CODE_SECRET: 'q7Vd0x3mZ9pL2kR8sT1uW4yB6nC5eF0gH', SHORTLINK_VISITOR_SECRET: 'Zr4Kp8Lm2Qn6Ws0Xt3Yv7Bu1Ca5De9Fg' };
const violationsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (e) {
    return [...(e as ConfigError).violations];
  }
  return [];
};

describe('loadConfig', () => {
  it('gives the embedded profile with no environment at all', () => {
    const c = loadConfig({});
    expect(c.db.driver).toBe('sqlite');
    expect(c.cache.driver).toBe('memory');
    expect(c.bus.driver).toBe('memory');
    expect(c.olap.driver).toBe('chdb');
    expect(c.ports).toEqual({ generation: 8081, redirect: 8080, analytics: 8082 });
    expect(c.links.defaultDomain).toBe('localhost:8080');
    expect(c.links.publicBaseUrl).toBe('http://localhost:8080');
  });

  it('keeps audit entries AUDIT_RETENTION_DAYS (365 by default) and lists a retention that is not a whole number of days from 1', () => {
    expect(loadConfig({}).audit.retentionMs).toBe(365 * 86_400_000);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '30' }).audit.retentionMs).toBe(30 * 86_400_000);
    expect(violationsOf({ AUDIT_RETENTION_DAYS: '0' }).join('\n')).toContain('AUDIT_RETENTION_DAYS');
    expect(violationsOf({ AUDIT_RETENTION_DAYS: 'a year' }).join('\n')).toContain('AUDIT_RETENTION_DAYS');
  });

  it('refuses private webhook receivers unless WEBHOOK_ALLOW_PRIVATE, retries for 24 h, disables after 3 days, all settable', () => {
    expect(loadConfig({}).webhooks).toEqual({
      eventsTopic: 'shortlink.events',
      consumerGroup: 'shortlink-webhooks',
      allowPrivate: false,
      retry: { baseDelayMs: 5000, maxDelayMs: 3_600_000, windowMs: 86_400_000 },
      disableAfterMs: 3 * 86_400_000,
      timeoutMs: 10_000,
    });
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '200' }).webhooks).toMatchObject({
      allowPrivate: true,
      retry: { baseDelayMs: 200 },
    });
    expect(violationsOf({ WEBHOOK_ALLOW_PRIVATE: 'yes', WEBHOOK_RETRY_BASE_MS: '0' }).join('\n')).toMatch(
      /WEBHOOK_ALLOW_PRIVATE[\s\S]*WEBHOOK_RETRY_BASE_MS|WEBHOOK_RETRY_BASE_MS[\s\S]*WEBHOOK_ALLOW_PRIVATE/,
    );
  });

  it('reads the custom domain settings: both methods, the system resolver, no TLS front, plan caps; lists bad ones', () => {
    const defaults = loadConfig({});
    expect(defaults.domains).toEqual({
      verifier: { enabled: true, intervalMs: 5000 },
      methods: ['dns', 'http'],
      resolvers: [],
      checkTimeoutMs: 5000,
      httpPort: 80,
      allowPrivate: false,
      firstCheckMs: 10_000,
      backoff: { baseMs: 60_000, maxMs: 3_600_000 },
      retryWindowMs: 72 * 3_600_000,
      recheckMs: 6 * 3_600_000,
      unverifyAfter: 3,
      tlsFront: null,
    });
    expect([defaults.plans.free.maxDomains, defaults.plans.paid.maxDomains]).toEqual([1, 50]);
    expect(
      loadConfig({
        DOMAIN_VERIFICATION_METHODS: 'dns',
        DOMAIN_DNS_RESOLVER: '127.0.0.1:5353, [::1]:53, 10.0.0.2',
        DOMAIN_TLS_FRONT: 'caddy:443',
        DOMAIN_TLS_FRONT_CA_FILE: '/etc/ssl/pebble.pem',
      }).domains,
    ).toMatchObject({
      methods: ['dns'],
      resolvers: ['127.0.0.1:5353', '[::1]:53', '10.0.0.2'],
      tlsFront: { host: 'caddy', port: 443, caFile: '/etc/ssl/pebble.pem', timeoutMs: 30_000 },
    });
    const violations = violationsOf({
      DOMAIN_VERIFICATION_METHODS: 'dns,email',
      DOMAIN_DNS_RESOLVER: 'ns1.example.com',
      DOMAIN_TLS_FRONT: 'https://caddy',
      PLAN_FREE_MAX_DOMAINS: '-1',
    }).join('\n');
    for (const name of ['DOMAIN_VERIFICATION_METHODS', 'DOMAIN_DNS_RESOLVER', 'DOMAIN_TLS_FRONT', 'PLAN_FREE_MAX_DOMAINS']) expect(violations).toContain(name);
  });

  it('reads the live stream settings: a replay window of 10 000 clicks and 300 s, 5 open streams per tenant, and lists bad ones', () => {
    expect(loadConfig({}).analytics.stream).toEqual({ replayEvents: 10_000, replaySeconds: 300, maxPerTenant: 5 });
    expect(
      loadConfig({ ANALYTICS_STREAM_REPLAY_EVENTS: '0', ANALYTICS_STREAM_REPLAY_SECONDS: '60', ANALYTICS_STREAM_MAX_PER_TENANT: '1' }).analytics.stream,
    ).toEqual({ replayEvents: 0, replaySeconds: 60, maxPerTenant: 1 });
    const violations = violationsOf({
      ANALYTICS_STREAM_REPLAY_EVENTS: '-1',
      ANALYTICS_STREAM_REPLAY_SECONDS: 'long',
      ANALYTICS_STREAM_MAX_PER_TENANT: '0',
    }).join('\n');
    for (const name of ['ANALYTICS_STREAM_REPLAY_EVENTS', 'ANALYTICS_STREAM_REPLAY_SECONDS', 'ANALYTICS_STREAM_MAX_PER_TENANT'])
      expect(violations).toContain(name);
  });

  it('reads the single sign-on settings: the callback URL (default the generation app’s), the timeout, http issuers off; lists bad ones', () => {
    expect(loadConfig({}).people.sso).toEqual({
      callbackUrl: 'http://localhost:8081/api/v1/auth/sso/callback',
      timeoutMs: 10_000,
      allowInsecureIssuers: false,
      successUrl: 'http://localhost:8081/console/',
      startsPerMinute: { perTenant: 600, perAddress: 60 },
    });
    expect(
      loadConfig({
        SSO_CALLBACK_URL: 'https://links.example/api/v1/auth/sso/callback',
        SSO_TIMEOUT_SECONDS: '3',
        SSO_ALLOW_INSECURE_ISSUERS: 'true',
        SHORTLINK_CONSOLE_URL: 'https://console.example/',
        SSO_STARTS_PER_MINUTE_PER_TENANT: '100',
        SSO_STARTS_PER_MINUTE_PER_ADDRESS: '5',
      }).people.sso,
    ).toEqual({
      callbackUrl: 'https://links.example/api/v1/auth/sso/callback',
      timeoutMs: 3000,
      allowInsecureIssuers: true,
      successUrl: 'https://console.example/',
      startsPerMinute: { perTenant: 100, perAddress: 5 },
    });
    const violations = violationsOf({
      SSO_CALLBACK_URL: 'not a url',
      SSO_TIMEOUT_SECONDS: '0',
      SSO_ALLOW_INSECURE_ISSUERS: 'maybe',
      SSO_STARTS_PER_MINUTE_PER_TENANT: '0',
      SSO_STARTS_PER_MINUTE_PER_ADDRESS: 'many',
    }).join('\n');
    for (const name of [
      'SSO_CALLBACK_URL',
      'SSO_TIMEOUT_SECONDS',
      'SSO_ALLOW_INSECURE_ISSUERS',
      'SSO_STARTS_PER_MINUTE_PER_TENANT',
      'SSO_STARTS_PER_MINUTE_PER_ADDRESS',
    ])
      expect(violations).toContain(name);
  });

  it('reads the people settings: console URL, SMTP, sessions and sign-in throttle, with defaults, and lists bad ones', () => {
    const d = loadConfig({}).people;
    expect(d).toMatchObject({
      acceptUrl: 'http://localhost:8081/console/accept-invitation',
      analyticsUrl: null,
      mail: { smtpUrl: null },
      passwordMinLength: 12,
    });
    expect(loadConfig({ SHORTLINK_ANALYTICS_URL: 'https://stats.example/' }).people.analyticsUrl).toBe('https://stats.example');
    expect(d.analyticsApiUrl).toBe('http://127.0.0.1:8082');
    expect(loadConfig({ HOST: '0.0.0.0', ANALYTICS_PORT: '9999' }).people.analyticsApiUrl).toBe('http://127.0.0.1:9999');
    expect(
      loadConfig({ SHORTLINK_ANALYTICS_URL: 'https://stats.example/', SHORTLINK_ANALYTICS_API_URL: 'http://analytics.internal:8082/' }).people.analyticsApiUrl,
    ).toBe('http://analytics.internal:8082');
    expect(d.session).toEqual({
      idleMs: 120 * 60_000,
      absoluteMs: 24 * 3_600_000,
      cookieSecure: 'auto',
      consoleIsHttps: false,
      consoleOrigin: 'http://localhost:8081',
    });
    expect(d.signInThrottle).toEqual({ perAccount: 10, perAddress: 50, windowMs: 300_000 });
    const c = loadConfig({ SHORTLINK_CONSOLE_URL: 'https://console.example/', SMTP_URL: 'smtp://u:p@mail.example:587', SESSION_IDLE_MINUTES: '30' }).people;
    expect(c).toMatchObject({ acceptUrl: 'https://console.example/accept-invitation', mail: { smtpUrl: 'smtp://u:p@mail.example:587' } });
    expect(c.session).toMatchObject({ idleMs: 30 * 60_000, consoleIsHttps: true, consoleOrigin: 'https://console.example' });
    expect(violationsOf({ SMTP_URL: 'mail.example:25' }).join('\n')).toContain('SMTP_URL');
    expect(violationsOf({ SESSION_IDLE_MINUTES: '600', SESSION_ABSOLUTE_HOURS: '2' }).join('\n')).toContain('SESSION_IDLE_MINUTES');
    expect(violationsOf({ PASSWORD_MIN_LENGTH: '4' }).join('\n')).toContain('PASSWORD_MIN_LENGTH');
  });

  it('lists every violation at once, including unknown drivers', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig({ DB_DRIVER: 'postgres', CACHE_DRIVER: 'memcached', REDIRECT_PORT: '99999' });
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.violations).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^DB_DRIVER: must be one of sqlite\|mysql, got "postgres"/),
        expect.stringMatching(/^CACHE_DRIVER:/),
        expect.stringMatching(/^REDIRECT_PORT:/),
      ]),
    );
  });

  it('requires the servers of the real drivers it selects', () => {
    expect(() => loadConfig({ DB_DRIVER: 'mysql', CACHE_DRIVER: 'redis', BUS_DRIVER: 'kafka', OLAP_DRIVER: 'clickhouse' })).toThrow(
      /MYSQL_SHARDS: required[\s\S]*MYSQL_META_URL[\s\S]*REDIS_CLUSTER_NODES[\s\S]*KAFKA_BROKERS[\s\S]*CLICKHOUSE_URL/,
    );
  });

  it('parses the real stack settings into typed slices', () => {
    const c = loadConfig({
      ...SECRETS,
      DB_DRIVER: 'mysql',
      MYSQL_SHARDS: 's0=mysql://u:p@127.0.0.1:3307/a,s1=mysql://u:p@127.0.0.1:3308/b',
      MYSQL_META_URL: 'mysql://u:p@127.0.0.1:3307/meta',
      CACHE_DRIVER: 'redis',
      REDIS_CLUSTER_NODES: '127.0.0.1:7101,127.0.0.1:7102',
      SHORTLINK_PUBLIC_BASE_URL: 'https://Sho.rt/',
    });
    expect(c.db).toMatchObject({
      driver: 'mysql',
      shards: [
        { name: 's0', url: 'mysql://u:p@127.0.0.1:3307/a' },
        { name: 's1', url: 'mysql://u:p@127.0.0.1:3308/b' },
      ],
    });
    expect(c.cache).toEqual({
      driver: 'redis',
      nodes: [
        { host: '127.0.0.1', port: 7101 },
        { host: '127.0.0.1', port: 7102 },
      ],
      writeBatching: 'cork',
      commandTimeoutMs: 500,
    });
    expect(c.links.defaultDomain).toBe('sho.rt');
    expect(() => loadConfig({ ...SECRETS, DB_DRIVER: 'mysql', MYSQL_SHARDS: 'nonsense', MYSQL_META_URL: 'mysql://x/y' })).toThrow(/not name=mysql/);
  });

  it('reads the Redis client settings and lists a bad command timeout with the other violations', () => {
    const redis = { CACHE_DRIVER: 'redis', REDIS_CLUSTER_NODES: '127.0.0.1:7101' };
    expect(loadConfig({ ...redis, REDIS_WRITE_BATCHING: 'pipeline', REDIS_COMMAND_TIMEOUT_MS: '250' }).cache).toMatchObject({
      writeBatching: 'pipeline',
      commandTimeoutMs: 250,
    });
    expect(() => loadConfig({ ...redis, REDIS_WRITE_BATCHING: 'true' })).toThrow(/REDIS_WRITE_BATCHING: must be one of cork\|pipeline\|off, got "true"/);
    expect(() => loadConfig({ ...redis, REDIS_COMMAND_TIMEOUT_MS: '0', DB_DRIVER: 'oracle' })).toThrow(
      /REDIS_COMMAND_TIMEOUT_MS[\s\S]*DB_DRIVER|DB_DRIVER[\s\S]*REDIS_COMMAND_TIMEOUT_MS/,
    );
  });

  it('reads switches in the README’s spellings, and fails the boot on any other, listing them', () => {
    for (const on of ['true', 'on', '1']) expect(loadConfig({ URL_DNS_CHECK: on }).links.urlSafety.dnsCheck).toBe(true);
    for (const off of ['false', 'off', '0']) expect(loadConfig({ URL_DNS_CHECK: off, BLOOM_ENABLED: off }).redirect.bloom.enabled).toBe(false);
    expect(loadConfig({}).links.urlSafety.dnsCheck).toBe(false);
    for (const other of ['yes', 'TRUE', 'On', 'enabled', ' 1']) {
      expect(violationsOf({ URL_DNS_CHECK: other })).toEqual([`URL_DNS_CHECK: must be one of true|false|on|off|1|0, got "${other}"`]);
    }
  });

  it('generates the secrets into the data directory on the embedded profile, and refuses to run the real one without them', () => {
    expect(loadConfig({ SHORTLINK_DATA_DIR: '/var/lib/sl/' }).secrets).toEqual({
      code: { file: '/var/lib/sl/secrets/code-secret' },
      visitor: { file: '/var/lib/sl/secrets/visitor-secret' },
    });
    const missing = violationsOf({ DB_DRIVER: 'mysql', MYSQL_SHARDS: 's0=mysql://u:p@h:1/a', MYSQL_META_URL: 'mysql://u:p@h:1/m' });
    expect(missing).toEqual([
      expect.stringMatching(/^SHORTLINK_CODE_SECRET: required with DB_DRIVER=mysql \(at least 32 random bytes.*anyone can compute every code/),
      expect.stringMatching(/^SHORTLINK_VISITOR_SECRET: required with DB_DRIVER=mysql/),
    ]);
  });

  it('refuses short or patterned secrets in either profile, and keeps a good one as given', () => {
    expect(violationsOf({ SHORTLINK_CODE_SECRET: 'shortlink-dev-code-secret' })).toEqual([
      expect.stringMatching(/^SHORTLINK_CODE_SECRET: must be at least 32 bytes of random data, got 25/),
    ]);
    expect(violationsOf({ SHORTLINK_VISITOR_SECRET: 'ab'.repeat(20) })).toEqual([expect.stringMatching(/^SHORTLINK_VISITOR_SECRET: looks like a pattern/)]);
    expect(loadConfig(SECRETS).secrets.code).toEqual({ given: SECRETS.SHORTLINK_CODE_SECRET });
  });

  it('reads CORS_ORIGINS as origins, or * alone, and lists each bad one', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://Console.example.com, http://127.0.0.1:5173' }).http.corsOrigins).toEqual([
      'https://console.example.com',
      'http://127.0.0.1:5173',
    ]);
    expect(loadConfig({ CORS_ORIGINS: '*' }).http.corsOrigins).toEqual(['*']);
    expect(loadConfig({}).http.corsOrigins).toEqual([]);
    expect(violationsOf({ CORS_ORIGINS: 'https://a.example/app,console.example.com,ftp://a.example' })).toHaveLength(3);
    expect(violationsOf({ CORS_ORIGINS: '*,https://a.example' })).toEqual([expect.stringMatching(/^CORS_ORIGINS: `\*` allows every origin/)]);
  });

  it('reads TRUSTED_PROXIES as address blocks and lists a bad one', () => {
    expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1,::1/128' }).http.trustedProxies).toEqual([
      { address: '10.0.0.0', prefix: 8, family: 'ipv4' },
      { address: '127.0.0.1', prefix: 32, family: 'ipv4' },
      { address: '::1', prefix: 128, family: 'ipv6' },
    ]);
    expect(loadConfig({}).http.trustedProxies).toEqual([]);
    expect(violationsOf({ TRUSTED_PROXIES: '10.0.0.0/33,example.com,1.2.3.4/8/1' })).toHaveLength(3);
  });

  it('reads GEO_DATABASE as the bundled country or city database or absolute .mmdb paths, and fails the boot on anything else', () => {
    expect(loadConfig({}).geo.database).toBe('country');
    expect(loadConfig({ GEO_DATABASE: '' }).geo.database).toBe('country'); // empty is unset, as everywhere
    expect(loadConfig({ GEO_DATABASE: 'city' }).geo.database).toBe('city');
    expect(loadConfig({ GEO_DATABASE: '/g/city-v4.mmdb, /g/city-v6.mmdb' }).geo.database).toEqual({ files: ['/g/city-v4.mmdb', '/g/city-v6.mmdb'] });
    for (const bad of ['cities', 'geo.mmdb', '/g/city.csv', ' , ']) expect(violationsOf({ GEO_DATABASE: bad }).join('\n')).toContain('GEO_DATABASE');
  });

  it('puts the operator listeners on loopback by default, one port per app', () => {
    expect(loadConfig({}).admin).toEqual({ host: '127.0.0.1', ports: { generation: 9081, redirect: 9080, analytics: 9082 } });
  });

  it('needs at least one well-named shard under either strategy', () => {
    const mysql = { ...SECRETS, DB_DRIVER: 'mysql', MYSQL_META_URL: 'mysql://u:p@h:1/m' };
    for (const strategy of ['ring', 'jump']) {
      expect(violationsOf({ ...mysql, SHARD_STRATEGY: strategy, MYSQL_SHARDS: ' , ' })).toEqual(['MYSQL_SHARDS: needs at least one shard']);
      expect(violationsOf({ SHARD_STRATEGY: strategy, SQLITE_SHARDS: ',' })).toEqual(['SQLITE_SHARDS: needs at least one shard']);
    }
    expect(violationsOf({ SQLITE_SHARDS: 's0,../etc,s0' })).toEqual([
      expect.stringMatching(/shard name "\.\.\/etc"/),
      'SQLITE_SHARDS: shard names must be unique',
    ]);
  });

  it('reads the Redis breaker as REDIS_BREAKER_*, and its older names BREAKER_* when the new ones are not set', () => {
    expect(loadConfig({}).redirect.redisBreaker).toEqual({ failures: 5, halfOpenAfterMs: 2000 });
    expect(loadConfig({ REDIS_BREAKER_FAILURES: '7', REDIS_BREAKER_HALF_OPEN_MS: '900' }).redirect.redisBreaker).toEqual({ failures: 7, halfOpenAfterMs: 900 });
    expect(loadConfig({ BREAKER_FAILURES: '3', BREAKER_HALF_OPEN_MS: '400' }).redirect.redisBreaker).toEqual({ failures: 3, halfOpenAfterMs: 400 });
    expect(loadConfig({ BREAKER_FAILURES: '3', REDIS_BREAKER_FAILURES: '8' }).redirect.redisBreaker.failures).toBe(8);
    const both = [expect.stringMatching(/^REDIS_BREAKER_FAILURES/), expect.stringMatching(/^BREAKER_HALF_OPEN_MS/)];
    expect(violationsOf({ REDIS_BREAKER_FAILURES: '0', BREAKER_HALF_OPEN_MS: '1' })).toEqual(both);
  });

  it('reads the spare shards and the ring settings, and lists a spare shard named twice or a lease shorter than three reads', () => {
    const mysql = { ...SECRETS, DB_DRIVER: 'mysql', MYSQL_META_URL: 'mysql://u:p@h:1/m', MYSQL_SHARDS: 's0=mysql://u:p@h:1/a,s1=mysql://u:p@h:1/b' };
    const c = loadConfig({ ...mysql, MYSQL_SPARE_SHARDS: 's4=mysql://u:p@h:2/e', SHARD_RING_POLL_MS: '500', SHARD_TIMEOUT_MS: '800' });
    expect(c.db).toMatchObject({
      driver: 'mysql',
      spareShards: [{ name: 's4', url: 'mysql://u:p@h:2/e' }],
      ring: { pollMs: 500, movePollMs: 100, leaseMs: 10_000 },
      shardTimeoutMs: 800,
      shardBreaker: { failures: 5, openMs: 1000 },
    });
    expect(loadConfig({}).db).toMatchObject({ driver: 'sqlite', ring: { pollMs: 1000, movePollMs: 100, leaseMs: 10_000 }, shardTimeoutMs: 3000 });
    // Never slower during a move than outside one.
    expect(loadConfig({ SHARD_RING_POLL_MS: '60', SHARD_RING_MOVE_POLL_MS: '500' }).db.ring.movePollMs).toBe(60);
    expect(violationsOf({ ...mysql, MYSQL_SPARE_SHARDS: 's1=mysql://u:p@h:2/e,bad', SHARD_RING_POLL_MS: '2000', SHARD_RING_LEASE_MS: '5000' })).toEqual([
      'MYSQL_SPARE_SHARDS: "bad" is not name=mysql://user:pass@host:port/db',
      'MYSQL_SPARE_SHARDS: shard "s1" is also in MYSQL_SHARDS',
      'SHARD_RING_LEASE_MS: must be at least 3 × SHARD_RING_POLL_MS (6000), got 5000',
    ]);
  });
});
