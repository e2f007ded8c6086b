import { createServer, IncomingMessage, request, Server, ServerResponse } from 'http';
import { AddressInfo, connect } from 'net';
import { Registry } from 'prom-client';
import { loadConfig } from '@shortlink/config';
import { KeyedWindowLimiter } from '@shortlink/core';
import { ConsistentHashRing } from '@shortlink/shard-router';
import { domainSettingsChange, Link, NO_OPTIONS, rulesFromTargets } from '@shortlink/links-domain';
import { LinkRules, LocalVisitorWindows, PasswordCookies, QrScans, VisitorLimit } from '@shortlink/redirect-rules';
import {
  CachePolicy,
  ClickQuota,
  GlobalRateLimiter,
  LocalClickLeases,
  HotKeyDetector,
  HotLinkSnapshotKeeper,
  L1Cache,
  PasswordAttempts,
  PasswordCheckGate,
  ReadPathMetrics,
  RedirectPipeline,
} from '@shortlink/read-path';
import { ShardedLinkRepository } from '@shortlink/sharding-domain';
import { SqliteLinkShardStore } from '@shortlink/link-store';
import { SqliteMetaStore } from '@shortlink/wiring';
import { MemoryCacheStore } from '@shortlink/cache';
import { Argon2PasswordHasher } from '@shortlink/passwords';
import { MmdbGeoLookup } from '@shortlink/geo';
import { ClickEvent, ClickIds } from '@shortlink/clicks-domain';
import { LINK_PREVIEWER_AGENTS } from '@shortlink/visitors-domain';
import { ClientAddressResolver, frontHandlerOf } from '@shortlink/nest-platform';
import { postLater } from '@shortlink/harness';
import { defaultSettingsOf, DomainSettingsDirectory, DomainSettingsValues, operatorAssignedDomain, TenantDirectory } from '@shortlink/tenants-domain';
import { ClickRecorder } from './click-recorder';
import { DomainFiles } from './domain-files';
import { RedirectHttpHandler } from './redirect-http.handler';
import { RedirectMetrics } from './redirect.metrics';
import { VisitorPages } from './visitor-pages';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const geo = new MmdbGeoLookup();
const argon2 = new Argon2PasswordHasher();
/**
 * The capacity of the per-instance caches and limiters built for each test: a test sees a few hundred keys, and a cache
 * of the production default (100 000 keys) costs ~20 ms to build inside jest, several per test.
 */
const SMALL = 2000;
/** Visits by a QR URL counted as scans per visitor and link in a minute, here. */
const QR_SCANS_PER_VISITOR = 2;

/** A 1×1 PNG, base64. */
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('RedirectHttpHandler', () => {
  const config = loadConfig({ SHORTLINK_PUBLIC_BASE_URL: 'http://sho.rt', SHORTLINK_DOMAINS: 'go.example' });
  let server: Server;
  let base: string;
  let shard: SqliteLinkShardStore;
  let nextId = 1;
  let clicks: ClickEvent[];
  let registry: Registry;
  let passedOn: string[];
  let meta: SqliteMetaStore;
  let tenants: TenantDirectory;
  let settings: DomainSettingsDirectory;
  let files: DomainFiles;
  let quota: ClickQuota;
  /** The per-link visitor windows every instance shares (Redis on the real stack). */
  let visitorWindows: LocalVisitorWindows;
  let visitors: VisitorLimit;
  let passwordHash: string;
  /** Redirects per client address and minute; the password tests under load raise it, to reach the rules behind it. */
  let perIpLimit = 5;
  /** Each tenant's choice for visitors of its broken links (the target when unset). */
  const fallbacks = new Map<string, { mode: 'target' | 'page' | 'url'; url: string | null }>();

  beforeAll(async () => {
    passwordHash = await argon2.hash('open sesame');
  });

  const link = (code: string, over: Partial<Link> = {}): Link => ({
    ...NO_OPTIONS,
    id: String(nextId++),
    domain: 'sho.rt',
    code,
    targetUrl: `https://example.com/${code}`,
    tenantId: 't1',
    createdAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
    updatedAt: new Date(),
    expiresAt: null,
    status: 'active',
    redirectType: 302,
    version: 1,
    moderation: 'clear',
    moderationReason: null,
    ...over,
  });

  beforeEach(async () => {
    // The embedded adapters: an in-memory SQLite shard and the in-process cache.
    shard = new SqliteLinkShardStore('s0', ':memory:');
    const repository = new ShardedLinkRepository(new ConsistentHashRing([{ name: 's0' }]), [shard]);
    const cache = new MemoryCacheStore(1000);
    registry = new Registry();
    const metrics = new RedirectMetrics(registry);
    const readPathMetrics = new ReadPathMetrics(registry);
    const pipeline = new RedirectPipeline(
      {
        cache,
        links: repository,
        l1: new L1Cache({ maxEntries: 100, maxBytes: 1 << 20, ttlMs: 60_000, negativeTtlMs: 5000 }),
        hot: new HotKeyDetector(),
        policy: new CachePolicy('lru'),
        bloom: null,
        snapshot: new HotLinkSnapshotKeeper({ load: async () => [], save: async () => undefined }),
        observer: readPathMetrics,
      },
      {
        l1Enabled: true,
        sharedCacheEnabled: true,
        bloomEnabled: false,
        lockTtlMs: 1000,
        lockWaitMs: 1000,
        lockPollMs: 5,
        dbConcurrency: 4,
        dbQueue: { max: 100, waitMs: 1000 },
        redisBreakerFailures: 5,
        redisBreakerHalfOpenAfterMs: 1000,
        nullTtlMs: 60_000,
      },
    );
    clicks = [];
    const recorder = new ClickRecorder(
      { sink: { send: async (events) => void clicks.push(...events), close: async () => undefined }, geo, visitorSecret: 'v'.repeat(40) },
      { capacity: 100, batchSize: 100, flushIntervalMs: 1000 },
    );
    quota = new ClickQuota({ store: new LocalClickLeases(), counts: repository, observer: readPathMetrics }, { flushIntervalMs: 60_000, maxLinks: SMALL });
    visitors = new VisitorLimit((visitorWindows = new LocalVisitorWindows()), { maxKeys: SMALL });
    const parts = {
      rules: new LinkRules(geo, quota, { userAgents: SMALL, addresses: SMALL, visitors }),
      quota,
      attempts: new PasswordAttempts(cache, { attempts: 3, windowMs: 60_000 }),
      passwords: argon2,
      checks: new PasswordCheckGate({ concurrency: 4, perVisitorPerMinute: 10 }),
      cookies: new PasswordCookies('k'.repeat(40)),
      clickIds: new ClickIds('k'.repeat(40)),
    };
    // Loopback is the trusted proxy here, so a test can present a client address (and its country).
    const addresses = new ClientAddressResolver([{ address: '127.0.0.1', prefix: 32, family: 'ipv4' }]);
    // The embedded meta database, with the two tenants the links below belong to.
    meta = new SqliteMetaStore(':memory:');
    for (const id of ['t1', 't2']) {
      await meta.tenants.createWithApiKey({ id, name: id, plan: 'free', status: 'active', createdAt: new Date() }, `hash-${id}`, {
        id: `k-${id}`,
        name: 'key',
        prefix: id,
        scopes: [],
        expiresAt: null,
        person: null,
      });
    }
    tenants = new TenantDirectory(meta.tenants, { refreshMs: 60_000 });
    const perIp = new KeyedWindowLimiter({ limit: perIpLimit, windowMs: 60_000, maxKeys: SMALL });
    const global = new GlobalRateLimiter(cache, 0, 0);
    settings = new DomainSettingsDirectory(meta.domainSettings, { refreshMs: 60_000 });
    const pages = new VisitorPages(settings, config.links.defaultDomain);
    files = new DomainFiles(settings, repository, 60_000);
    // Scan windows on a clock that stands still: a test never straddles two minutes.
    const still = { now: () => Date.UTC(2026, 11, 5, 8, 0, 10) };
    const scans = new QrScans(QR_SCANS_PER_VISITOR, new VisitorLimit(null, { maxKeys: SMALL }, still));
    const handler = new RedirectHttpHandler({
      links: pipeline,
      recorder,
      metrics,
      perIp,
      global,
      addresses,
      config,
      options: parts,
      tenants,
      pages,
      files,
      scans,
      brokenLinks: { fallbackFor: (tenantId) => fallbacks.get(tenantId) ?? { mode: 'target', url: null } },
    });
    passedOn = [];
    // The handler's declared front route, as the app's HTTP server puts it in front of Fastify.
    const front = frontHandlerOf(handler)!;
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (front(req, res)) return;
      passedOn.push(`${req.method} ${req.url}`);
      res.writeHead(204).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    flush = () => recorder.buffer.flush();
  });
  let flush: () => Promise<void>;

  afterEach(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await shard.close();
    await meta.close();
  });

  const get = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, { redirect: 'manual', ...init });
  /** A visitor of its own (the per-IP limit of this spec is 5 a minute). */
  let visitor = 0;
  const as = (headers: Record<string, string> = {}) => ({ 'x-forwarded-for': `198.51.100.${++visitor % 250}`, ...headers });
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    get(path, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
  /** fetch cannot set Host; node:http can. */
  const locationFor = (path: string, host: string) =>
    new Promise<string | undefined>((resolve, reject) => {
      const { port } = new URL(base);
      request({ host: '127.0.0.1', port, path, headers: { host, ...as() } }, (res) => {
        res.resume();
        resolve(res.headers.location);
      })
        .on('error', reject)
        .end();
    });
  const expectPageHeaders = (res: Response) => {
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(csp).not.toMatch(/script-src|unsafe-inline/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
  };

  it('redirects GET with the link type, Location and no-store, and records one click; HEAD redirects without a click', async () => {
    await shard.insert(link('abc1234'));
    const res = await get('/abc1234', { headers: { 'user-agent': 'ua/1', referer: 'https://ref.example/x' } });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.com/abc1234');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect((await get('/abc1234', { method: 'HEAD' })).status).toBe(302);
    await flush();
    expect(clicks).toHaveLength(1);
    expect(clicks[0]).toMatchObject({
      kind: 'click',
      code: 'abc1234',
      domain: 'sho.rt',
      tenantId: 't1',
      userAgent: 'ua/1',
      refererHost: 'ref.example',
      country: null,
      variant: null,
      seq: 0,
    });
    expect(Number.isSafeInteger(clicks[0].visitor)).toBe(true);
    // The client address never leaves the redirect: only the visitor id and the country derived from it.
    expect(JSON.stringify(clicks[0])).not.toContain('127.0.0.1');
  });

  it('answers a 301 link with a cacheable 301', async () => {
    await shard.insert(link('perm001', { redirectType: 301 }));
    const res = await get('/perm001');
    expect(res.status).toBe(301);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
  });

  it('resolves by Host: a known short domain is its own namespace, an unknown host is the default domain', async () => {
    await shard.insert(link('same001', { targetUrl: 'https://example.com/default' }));
    await shard.insert(link('same001', { domain: 'go.example', targetUrl: 'https://example.com/other-domain' }));
    expect(await locationFor('/same001', 'go.example')).toBe('https://example.com/other-domain');
    expect(await locationFor('/same001', 'GO.EXAMPLE')).toBe('https://example.com/other-domain');
    expect(await locationFor('/same001', '10.1.2.3:8080')).toBe('https://example.com/default');
  });

  it("resolves a tenant's own domain by Host once the directory has read it", async () => {
    await shard.insert(link('same001', { targetUrl: 'https://example.com/default' }));
    await shard.insert(link('same001', { domain: 'links.acme.test', targetUrl: 'https://example.com/acme' }));
    expect(await locationFor('/same001', 'links.acme.test')).toBe('https://example.com/default'); // not a known host yet
    await meta.tenants.addDomain('t1', 'links.acme.test');
    await tenants.refresh();
    expect(await locationFor('/same001', 'Links.Acme.Test')).toBe('https://example.com/acme');
    expect(await locationFor('/same001', 'sho.rt')).toBe('https://example.com/default');
  });

  it("normalises the Host: a trailing dot, any port or upper case reach the tenant's domain, never another tenant's default-domain link", async () => {
    await shard.insert(link('same1', { tenantId: 't2', targetUrl: 'https://example.com/tenant-b-default' }));
    await shard.insert(link('same1', { domain: 'go.acme.test', targetUrl: 'https://example.com/tenant-a-own' }));
    await shard.insert(link('same2', { domain: 'go.example', targetUrl: 'https://example.com/configured' }));
    await meta.tenants.addDomain('t1', 'go.acme.test');
    await tenants.refresh();
    for (const host of ['go.acme.test', 'go.acme.test.', 'go.acme.test:80', 'go.acme.test:443', 'GO.ACME.TEST.:443', 'go.acme.test:8080']) {
      expect({ host, location: await locationFor('/same1', host) }).toEqual({ host, location: 'https://example.com/tenant-a-own' });
    }
    for (const host of ['go.example.', 'go.example:443', 'go.example:8080']) expect(await locationFor('/same2', host)).toBe('https://example.com/configured');
    // A host that is none of ours is the default domain, with or without a port; so is one with two trailing dots.
    expect(await locationFor('/same1', 'elsewhere.test:8080')).toBe('https://example.com/tenant-b-default');
    expect(await locationFor('/same1', 'go.acme.test..')).toBe('https://example.com/tenant-b-default');
  });

  /** A domain the tenant added itself, pending, with its token (docs/design.md, "Custom domains and TLS"). */
  const pendingDomain = async (domain: string, tenantId = 't1') => {
    const token = `tok-${domain.replace(/\W/g, '')}-0123456789abcdef`;
    const now = new Date();
    await meta.domainOwnership.claim({ ...operatorAssignedDomain(domain, tenantId, now), token, status: 'pending', verifiedBy: null, verifiedAt: null }, 10);
    await tenants.refresh();
    return token;
  };
  /** One request with its Host (fetch cannot set it): status, headers, body. */
  const onHost = (path: string, host: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
      const { port } = new URL(base);
      request({ host: '127.0.0.1', port, path, headers: { host, ...as(), ...headers } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      })
        .on('error', reject)
        .end();
    });

  it("serves nothing on a tenant's domain that is not verified (not even the default domain's links), but its ownership token", async () => {
    await shard.insert(link('same001', { tenantId: 't2', targetUrl: 'https://example.com/default' }));
    await shard.insert(link('same001', { domain: 'new.acme.test', targetUrl: 'https://example.com/before-proof' }));
    const token = await pendingDomain('new.acme.test');
    const refused = await onHost('/same001', 'new.acme.test');
    expect(refused).toMatchObject({ status: 404, headers: { 'content-type': 'application/problem+json' } });
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'LINK_NOT_FOUND', detail: expect.stringContaining('not verified') });
    const page = await onHost('/same001', 'new.acme.test', { accept: 'text/html' });
    expect(page.status).toBe(404);
    expect(page.body).toContain('<html');
    expect((await onHost('/robots.txt', 'new.acme.test')).status).toBe(404);
    expect((await onHost('/same001/~', 'new.acme.test')).status).toBe(404);
    // The token, on its own host only, and no other.
    const challenge = await onHost(`/.well-known/shortlink-challenge/${token}`, 'NEW.acme.test.');
    expect(challenge).toMatchObject({ status: 200, body: token, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } });
    expect((await onHost(`/.well-known/shortlink-challenge/${token}`, 'sho.rt')).status).toBe(204); // left to the framework
    expect((await onHost('/.well-known/shortlink-challenge/tok-another-0123456789abcdef', 'new.acme.test')).status).toBe(204);
    expect(passedOn).toEqual([`GET /.well-known/shortlink-challenge/${token}`, 'GET /.well-known/shortlink-challenge/tok-another-0123456789abcdef']);
    await flush();
    expect(clicks).toEqual([]);
    // Verified: its links are served, and the token still is (re-checks read it).
    expect(await meta.domainOwnership.takeNow('t1', 'new.acme.test', new Date(), new Date(Date.now() + 60_000), 'test')).not.toBeNull();
    await meta.domainOwnership.saveCheck('new.acme.test', 'test', {
      status: 'verified',
      verifiedBy: 'http',
      verifiedAt: new Date(),
      checkedAt: new Date(),
      failures: 0,
      lastFailure: null,
      nextCheckAt: null,
      retryUntil: null,
    });
    await tenants.refresh();
    expect(await locationFor('/same001', 'new.acme.test')).toBe('https://example.com/before-proof');
    expect((await onHost(`/.well-known/shortlink-challenge/${token}`, 'new.acme.test')).body).toBe(token);
  });

  it("sends the domain's HSTS setting with its answers over HTTPS only", async () => {
    await shard.insert(link('hsts001', { domain: 'go.example' }));
    await meta.domainSettings.save(
      { ...defaultSettingsOf('go.example'), hsts: { maxAge: 31_536_000, includeSubDomains: true, preload: true }, version: 1, updatedAt: new Date() },
      0,
    );
    await settings.refresh();
    const secure = await onHost('/hsts001', 'go.example', { 'x-forwarded-proto': 'https' });
    expect(secure.status).toBe(302);
    expect(secure.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains; preload');
    expect((await onHost('/missing1', 'go.example', { 'x-forwarded-proto': 'https' })).headers['strict-transport-security']).toBeDefined();
    expect((await onHost('/hsts001', 'go.example')).headers['strict-transport-security']).toBeUndefined();
    expect((await onHost('/hsts001', 'sho.rt', { 'x-forwarded-proto': 'https' })).headers['strict-transport-security']).toBeUndefined();
  });

  it("answers a suspended tenant's links with the suspended page and no click; other tenants' links redirect", async () => {
    await shard.insert(link('susp001'));
    await shard.insert(link('othr001', { tenantId: 't2' }));
    await meta.tenants.updateTenant('t1', { status: 'suspended' });
    await tenants.refresh();
    const res = await get('/susp001', { headers: as() });
    expect(res.status).toBe(403);
    expectPageHeaders(res);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('This link is unavailable');
    expect((await get('/othr001', { headers: as() })).status).toBe(302);
    await flush();
    expect(clicks.map((c) => c.code)).toEqual(['othr001']);
    await meta.tenants.updateTenant('t1', { status: 'active' });
    await tenants.refresh();
    expect((await get('/susp001', { headers: as() })).status).toBe(302);
  });

  it('answers unknown and disabled links with problem+json 404 LINK_NOT_FOUND, expired ones with 410', async () => {
    await shard.insert(link('off0001', { status: 'disabled' }));
    await shard.insert(link('old0001', { expiresAt: new Date(Date.now() - 1000) }));
    for (const [path, status, code] of [
      ['/nope123', 404, 'LINK_NOT_FOUND'],
      ['/off0001', 404, 'LINK_NOT_FOUND'],
      ['/old0001', 410, 'LINK_EXPIRED'],
    ] as const) {
      const res = await get(path, { headers: as() });
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toMatchObject({ status, code, instance: path });
    }
    await flush();
    // Only the code that does not exist is an orphan visit; a disabled or expired link is the tenant's.
    expect(clicks.map((c) => [c.kind, c.code, c.tenantId])).toEqual([['orphan', 'nope123', '']]);
  });

  it('answers a disabled link exactly as a code that does not exist, on every path and method: status, headers and body', async () => {
    await shard.insert(link('off0002', { status: 'disabled', passwordHash }));
    const answer = async (code: string, path: string, init: RequestInit) => {
      const res = await get(`/${code}${path}`, { ...init, headers: { ...as(), ...(init.headers as Record<string, string>) } });
      const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date'));
      // The code and the path are the caller's own: with them swapped, nothing may differ.
      return { status: res.status, headers, body: (await res.text()).replaceAll(code, 'CODE') };
    };
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const passwordPost: RequestInit = { method: 'POST', body: 'password=x', headers: form };
    const requests: Array<[string, RequestInit]> = [
      ['', {}],
      ['', { method: 'HEAD' }],
      ['+', {}],
      ['/go', {}],
      ['', passwordPost],
    ];
    for (const [path, init] of requests) {
      const unknown = await answer('nope124', path, init);
      expect(unknown.status).toBe(404);
      expect({ path, method: init.method, ...(await answer('off0002', path, init)) }).toEqual({ path, method: init.method, ...unknown });
    }
  });

  it('refuses a client over the per-IP limit with 429 and Retry-After', async () => {
    await shard.insert(link('busy001'));
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await get('/busy001')).status);
    expect(statuses).toEqual([302, 302, 302, 302, 302, 429, 429]);
    const refused = await get('/busy001');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await registry.metrics()).toMatch(/shortlink_redirect_rate_limited_total\{scope="ip"\} 3/);
  });

  it('leaves other methods, reserved paths and other shapes to the framework', async () => {
    await get('/abc1234', { method: 'PUT' });
    await get('/health');
    await get('/metrics');
    await get('/api/v1/links');
    await get('/docs/openapi');
    await get('/-a');
    await get('/abc1234/');
    await get('/a//b');
    await get(`/${'a'.repeat(65)}`);
    expect(passedOn).toEqual([
      'PUT /abc1234',
      'GET /health',
      'GET /metrics',
      'GET /api/v1/links',
      'GET /docs/openapi',
      'GET /-a',
      'GET /abc1234/',
      'GET /a//b',
      `GET /${'a'.repeat(65)}`,
    ]);
  });

  it('redirects the codes an import kept: 1-2 characters and segments, with their suffixes (docs/design.md, "Import and export")', async () => {
    for (const code of ['1', 'zz', 'blog/2024/launch', 'a'.repeat(64)]) await shard.insert(link(code));
    await shard.insert(link('news/go-live', { moderation: 'flagged', moderationReason: 'homograph: test' }));
    for (const code of ['1', 'zz', 'blog/2024/launch', 'a'.repeat(64)]) {
      const res = await get(`/${code}?ref=x`, { headers: as() });
      expect([code, res.status, res.headers.get('location')]).toEqual([code, 302, `https://example.com/${code}?ref=x`]);
    }
    const preview = await get('/blog/2024/launch+', { headers: as() });
    expect([preview.status, await preview.text()]).toEqual([200, expect.stringContaining('https://example.com/blog/2024/launch')]);
    const warning = await get('/news/go-live', { headers: as() });
    expect([warning.status, await warning.text()]).toEqual([200, expect.stringContaining('href="/news/go-live/go"')]);
    const past = await get('/news/go-live/go', { headers: as() });
    expect([past.status, past.headers.get('location')]).toEqual([302, 'https://example.com/news/go-live']);
    expect((await get('/blog/2024', { headers: as() })).status).toBe(404);
    expect(passedOn).toEqual([]);
  });

  describe('QR scans (docs/design.md, "QR codes")', () => {
    /** What a visitor sees of an answer: everything but the date. */
    const seen = async (res: Response) => ({
      status: res.status,
      headers: Object.fromEntries([...res.headers].filter(([h]) => h !== 'date' && h !== 'keep-alive' && h !== 'connection')),
      body: await res.text(),
    });

    it('answers /{code}/~ exactly as /{code} and counts it as qr; the marker never reaches the target or its query', async () => {
      await shard.insert(link('abc1234'));
      await shard.insert(link('perm001', { redirectType: 301 }));
      await shard.insert(link('query01', { targetUrl: 'https://example.com/q?lang=en' }));
      await shard.insert(link('blog/2024/launch'));
      for (const path of ['/abc1234', '/perm001', '/query01?x=1&lang=de', '/blog/2024/launch?ref=x']) {
        const [code, query] = path.split('?');
        const qrPath = `${code}/~${query === undefined ? '' : `?${query}`}`;
        const plain = await seen(await get(path, { headers: as() }));
        const scan = await seen(await get(qrPath, { headers: as() }));
        expect([qrPath, scan]).toEqual([qrPath, plain]);
        expect(scan.headers.location).not.toContain('~');
      }
      expect((await get('/abc1234/~', { method: 'HEAD', headers: as() })).status).toBe(302);
      await flush();
      expect(clicks.map((c) => [c.code, c.source])).toEqual([
        ['abc1234', 'link'],
        ['abc1234', 'qr'],
        ['perm001', 'link'],
        ['perm001', 'qr'],
        ['query01', 'link'],
        ['query01', 'qr'],
        ['blog/2024/launch', 'link'],
        ['blog/2024/launch', 'qr'],
      ]);
      expect(passedOn).toEqual([]);
    });

    it('counts an unknown code scanned as an orphan visit by qr, and leaves other shapes with ~ to the framework', async () => {
      const res = await get('/nope123/~', { headers: as() });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'LINK_NOT_FOUND' });
      await flush();
      expect(clicks.map((c) => [c.kind, c.code, c.source])).toEqual([['orphan', 'nope123', 'qr']]);
      for (const path of ['/~', '/abc1234~', '/abc1234/~/', '/abc1234/~~', '/api/~', '/abc1234/~+', '/abc1234/go/~/x']) await get(path, { headers: as() });
      expect(passedOn).toEqual(['GET /~', 'GET /abc1234~', 'GET /abc1234/~/', 'GET /abc1234/~~', 'GET /api/~', 'GET /abc1234/~+', 'GET /abc1234/go/~/x']);
    });

    it("counts a few scans of a link per visitor and minute; the visitor's further visits by the QR URL are redirected and counted by link", async () => {
      await shard.insert(link('many0qr'));
      const me = as();
      const statuses = [];
      // Within the redirects an address may have (5 a minute here): the scans are what is limited, not the visits.
      for (let i = 0; i < QR_SCANS_PER_VISITOR + 2; i++) statuses.push((await get('/many0qr/~', { headers: me })).status);
      expect(statuses).toEqual(Array(QR_SCANS_PER_VISITOR + 2).fill(302));
      // Another visitor scans, and the same visitor's scans of another link count apart.
      await shard.insert(link('othr0qr'));
      expect((await get('/many0qr/~', { headers: as() })).status).toBe(302);
      expect((await get('/othr0qr/~', { headers: me })).status).toBe(302);
      await flush();
      expect(clicks.map((c) => [c.code, c.source])).toEqual([
        ...Array(QR_SCANS_PER_VISITOR).fill(['many0qr', 'qr']),
        ...Array(2).fill(['many0qr', 'link']),
        ['many0qr', 'qr'],
        ['othr0qr', 'qr'],
      ]);
    });

    it('keeps a scan a scan through the password form (the cookie of Path=/{code} reaches /{code}/~) and past a warning page', async () => {
      await shard.insert(link('pass0qr', { passwordHash, targetUrl: 'https://secret.example/t' }));
      const form = await get('/pass0qr/~', { headers: as({ accept: 'text/html' }) });
      expect(form.status).toBe(200);
      expect(await form.text()).toContain('<form method="post">');
      const ok = await post('/pass0qr/~?ref=print', 'password=open+sesame', as());
      expect([ok.status, ok.headers.get('location')]).toEqual([303, 'https://secret.example/t?ref=print']);
      const pair = ok.headers.get('set-cookie')!.split(';')[0];
      expect(ok.headers.get('set-cookie')).toContain('; Path=/pass0qr;');
      const again = await get('/pass0qr/~', { headers: as({ cookie: pair }) });
      expect([again.status, again.headers.get('location')]).toEqual([302, 'https://secret.example/t']);

      await shard.insert(link('flag0qr', { moderation: 'flagged', moderationReason: 'homograph', targetUrl: 'https://examp1e.com/login' }));
      const warning = await get('/flag0qr/~?x=1', { headers: as() });
      expect(await warning.text()).toContain('href="/flag0qr/~/go?x=1"');
      const go = await get('/flag0qr/~/go?x=1', { headers: as() });
      expect([go.status, go.headers.get('location')]).toEqual([302, 'https://examp1e.com/login?x=1']);
      await flush();
      expect(clicks.map((c) => [c.code, c.source])).toEqual([
        ['pass0qr', 'qr'],
        ['pass0qr', 'qr'],
        ['flag0qr', 'qr'],
      ]);
    });
  });

  describe('link options (docs/design.md, "Link options")', () => {
    it("forwards the visitor's query string by default, after the target's own and the UTM parameters; UTM wins a clash", async () => {
      await shard.insert(link('query01', { targetUrl: 'https://example.com/q?lang=en' }));
      await shard.insert(link('utm0001', { targetUrl: 'https://example.com/u?utm_source=old', utm: { source: 'short link', campaign: 'spring' } }));
      await shard.insert(link('noquery', { forwardQuery: false }));
      const location = async (path: string) => (await get(path, { headers: as() })).headers.get('location');
      expect(await location('/query01?x=1&lang=de')).toBe('https://example.com/q?lang=en&x=1');
      expect(await location('/utm0001?utm_source=visitor&y=%C3%A9')).toBe('https://example.com/u?utm_source=short%20link&utm_campaign=spring&y=%C3%A9');
      expect(await location('/noquery?x=1')).toBe('https://example.com/noquery');
    });

    it('conversion tracking: every click gets its own click id in the chosen parameter, before the fragment, and its event carries it; HEAD records none', async () => {
      await shard.insert(link('conv001', { targetUrl: 'https://example.com/p?a=1#top', trackConversions: true }));
      await shard.insert(link('conv002', { trackConversions: true, conversionParam: 'ref' }));
      const first = (await get('/conv001?x=2', { headers: as() })).headers.get('location')!;
      const second = (await get('/conv001', { headers: as() })).headers.get('location')!;
      expect(first).toMatch(/^https:\/\/example\.com\/p\?a=1&x=2&sl_cid=[A-Za-z0-9_-]{22}#top$/);
      const idOf = (location: string, name: string) => new URL(location).searchParams.get(name)!;
      expect(idOf(second, 'sl_cid')).not.toBe(idOf(first, 'sl_cid'));
      const other = (await get('/conv002', { headers: as() })).headers.get('location')!;
      expect(other).toMatch(/^https:\/\/example\.com\/conv002\?ref=[A-Za-z0-9_-]{22}$/);
      await get('/conv002', { method: 'HEAD', headers: as() });
      await flush();
      expect(clicks.map((c) => [c.code, c.clickId])).toEqual([
        ['conv001', idOf(first, 'sl_cid')],
        ['conv001', idOf(second, 'sl_cid')],
        ['conv002', idOf(other, 'ref')],
      ]);
      const opened = new ClickIds('k'.repeat(40)).open(idOf(other, 'ref'));
      expect(opened?.linkId).toBe(clicks[2].linkId);
    });

    it('percent-encodes a raw query so that no header break or invalid character reaches the Location', async () => {
      await shard.insert(link('raw0001'));
      // Bytes no client library would send unencoded, written on the socket as they are (Node's parser
      // itself refuses bytes above 0x7e and controls in the request line).
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(base).port), '127.0.0.1');
        let text = '';
        socket.on('data', (d) => (text += d.toString('latin1')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
        socket.end(Buffer.from('GET /raw0001?q="<a%20b>"&r=%zz&s=\\#&t=`{|}^ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 'latin1'));
      });
      expect(answer).toMatch(/^HTTP\/1.1 302 /);
      const location = /\r\nlocation: ([^\r\n]*)\r\n/i.exec(answer)![1];
      expect(location).toBe('https://example.com/raw0001?q=%22%3Ca%20b%3E%22&r=%25zz&s=%5C%23&t=%60%7B%7C%7D%5E');
      expect(new URL(location).searchParams.get('q')).toBe('"<a b>"');
    });

    it('counts maxClicks on GET only: HEAD redirects without using one, then 410 LINK_EXHAUSTED', async () => {
      await shard.insert(link('max0003', { maxClicks: 3 }));
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await get('/max0003', { method: 'HEAD', headers: as() })).status);
      for (let i = 0; i < 5; i++) statuses.push((await get('/max0003', { headers: as() })).status);
      expect(statuses).toEqual([302, 302, 302, 302, 302, 302, 410, 410]);
      const gone = await get('/max0003', { headers: as() });
      expect(gone.headers.get('content-type')).toBe('application/problem+json');
      expect(await gone.json()).toMatchObject({ status: 410, code: 'LINK_EXHAUSTED' });
      await flush();
      expect(clicks.filter((c) => c.code === 'max0003')).toHaveLength(3);
      await quota.flush();
      expect(await shard.clickCount({ domain: 'sho.rt', code: 'max0003' }, String(nextId - 1))).toBe(3);
    });

    it('gives exactly maxClicks redirects to 200 concurrent requests', async () => {
      await shard.insert(link('max0050', { maxClicks: 50 }));
      const statuses = await Promise.all(Array.from({ length: 200 }, () => get('/max0050', { headers: as() }).then((r) => r.status)));
      expect(statuses.filter((s) => s === 302)).toHaveLength(50);
      expect(statuses.filter((s) => s === 410)).toHaveLength(150);
    });

    it('shows a password form that does not reveal the target, and redirects with 303 once the right password is posted', async () => {
      await shard.insert(link('pass001', { passwordHash, targetUrl: 'https://secret.example/hidden-target' }));
      const form = await get('/pass001', { headers: as({ accept: 'text/html' }) });
      expect(form.status).toBe(200);
      expectPageHeaders(form);
      const html = await form.text();
      expect(html).toContain('<form method="post">');
      expect(html).toContain('name="password"');
      expect(html).not.toContain('secret.example');
      expect(html).not.toMatch(/<script/i);
      expect(form.headers.get('content-security-policy')).toMatch(/form-action 'self' https: http:/);
      const head = await get('/pass001', { method: 'HEAD', headers: as() });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
      await flush();
      expect(clicks).toEqual([]); // the form is not a click

      const ok = await post('/pass001?ref=mail', 'password=open+sesame', as());
      expect(ok.status).toBe(303);
      expect(ok.headers.get('location')).toBe('https://secret.example/hidden-target?ref=mail');
      expect(ok.headers.get('cache-control')).toBe('private, no-store');
      await flush();
      expect(clicks.map((c) => c.code)).toEqual(['pass001']);
    });

    it('remembers a right password in a signed cookie of the link: HttpOnly, SameSite=Lax, Path=/{code}, 12 h, Secure behind an https proxy', async () => {
      const stored = link('pass007', { passwordHash, maxClicks: 4 });
      await shard.insert(stored);
      const me = as();
      const ok = await post('/pass007', 'password=open+sesame', me);
      expect(ok.status).toBe(303);
      const cookie = ok.headers.get('set-cookie')!;
      // Named by a keyed hash of domain and code: the link's id (which counts every tenant's links) is not in it.
      const name = new PasswordCookies('k'.repeat(40)).nameOf({ domain: 'sho.rt', code: 'pass007' });
      expect(name).not.toBe(`sl_pw_${stored.id}`);
      expect(cookie).toMatch(new RegExp(`^${name}=\\d+\\.[A-Za-z0-9_-]{43}; Path=/pass007; Max-Age=43200; HttpOnly; SameSite=Lax$`));
      const pair = cookie.split(';')[0];
      // Over https (X-Forwarded-Proto from the trusted proxy, loopback here) the cookie is Secure.
      const secure = await post('/pass007', 'password=open+sesame', { ...me, 'x-forwarded-proto': 'https' });
      expect(secure.headers.get('set-cookie')).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);

      // With the cookie: the redirect at once (the link's own type), counted, no-store; without it, or tampered: the form.
      // The cookie is the link's, not the address's: another address of the same browser is let through too.
      const again = await get('/pass007?x=1', { headers: as({ cookie: `theme=dark; ${pair}` }) });
      expect(again.status).toBe(302);
      expect(again.headers.get('location')).toBe('https://example.com/pass007?x=1');
      expect(again.headers.get('cache-control')).toBe('private, no-store');
      expect(again.headers.get('set-cookie')).toBeNull();
      expect((await get('/pass007', { headers: as({ accept: 'text/html' }) })).status).toBe(200);
      const tampered = await get('/pass007', { headers: { ...as(), accept: 'text/html', cookie: pair.replace(/\d\./, (d) => `${(Number(d[0]) + 1) % 10}.`) } });
      expect(tampered.status).toBe(200);
      expect(await tampered.text()).toContain('name="password"');
      await flush();
      expect(clicks.map((c) => c.code)).toEqual(['pass007', 'pass007', 'pass007']);
      // Still subject to maxClicks: the fourth click is the last.
      expect((await get('/pass007', { headers: as({ cookie: pair }) })).status).toBe(302);
      expect((await get('/pass007', { headers: as({ cookie: pair }) })).status).toBe(410);
    });

    it('sets no cookie when the owner wants the password at every visit (passwordRememberHours 0), and honours the hours it sets', async () => {
      await shard.insert(link('pass008', { passwordHash, passwordRememberHours: 0 }));
      await shard.insert(link('pass009', { passwordHash, passwordRememberHours: 2 }));
      const never = await post('/pass008', 'password=open+sesame', as());
      expect(never.status).toBe(303);
      expect(never.headers.get('set-cookie')).toBeNull();
      expect((await post('/pass009', 'password=open+sesame', as())).headers.get('set-cookie')).toMatch(/; Max-Age=7200;/);
    });

    it('gives unfurling bots the social card of a link that has one; people, and bots of a link without one, get the redirect', async () => {
      const social = { title: 'Spring <sale>', description: 'Half price', image: 'https://cdn.example/s.png' };
      await shard.insert(link('card001', { social, maxClicks: 1 }));
      await shard.insert(link('card002'));
      await shard.insert(link('card003', { social, passwordHash, targetUrl: 'https://secret.example/hidden' }));
      await shard.insert(link('card004', { social, moderation: 'flagged', moderationReason: 'test' }));
      for (const [name, agent] of Object.entries(LINK_PREVIEWER_AGENTS)) {
        const card = await get('/card001', { headers: as({ 'user-agent': agent }) });
        expect({ name, status: card.status }).toEqual({ name, status: 200 });
        expect(card.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(card.headers.get('content-security-policy')).toBe("default-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'");
        expect(card.headers.get('cache-control')).toBe('private, no-store');
        const html = await card.text();
        expect(html).toContain('<meta property="og:title" content="Spring &lt;sale&gt;">');
        expect(html).toContain('<meta http-equiv="refresh" content="0;url=https://example.com/card001">');
        expect(html).not.toMatch(/<script/i);
      }
      // maxClicks 1: the cards took no click; a person gets the one redirect, then 410.
      expect((await get('/card001', { headers: as({ 'user-agent': IPHONE }) })).status).toBe(302);
      expect((await get('/card001', { headers: as({ 'user-agent': IPHONE }) })).status).toBe(410);
      const plain = await get('/card002', { headers: as({ 'user-agent': LINK_PREVIEWER_AGENTS.Slackbot }) });
      expect(plain.status).toBe(302);
      // A password link's card never reveals the target; a flagged link's bots get its warning page.
      const hidden = await (await get('/card003', { headers: as({ 'user-agent': LINK_PREVIEWER_AGENTS.Twitterbot }) })).text();
      expect(hidden).toContain('og:title');
      expect(hidden).not.toContain('secret.example');
      expect(hidden).toContain('content="0;url=http://sho.rt/card003"');
      const flagged = await get('/card004', { headers: as({ 'user-agent': LINK_PREVIEWER_AGENTS.Slackbot, accept: 'text/html' }) });
      expect(await flagged.text()).not.toContain('og:title');
    });

    it('offers an app URL scheme to a browser on that device in a page (click counted once), a universal link as the 302; other clients get the fallback', async () => {
      const html = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
      const PIXEL = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
      const GOOGLEBOT_IPHONE =
        'Mozilla/5.0 (iPhone; CPU iPhone OS 14_7_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/14.1.2 Mobile/15E148 Safari/604.1 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
      await shard.insert(
        link('app0001', {
          appTargets: { ios: 'myapp://product/42?x="1"&y=<2>', android: 'https://shop.example/p/42' },
          redirectRules: rulesFromTargets(null, { ios: 'https://apps.example/app/id1' }),
          maxClicks: 4,
        }),
      );
      const page = await get('/app0001', { headers: as({ 'user-agent': IPHONE, accept: html }) });
      expect(page.status).toBe(200);
      expectPageHeaders(page);
      const body = await page.text();
      expect(body).toContain('<a class="button" href="myapp://product/42?x=&quot;1&quot;&amp;y=&lt;2&gt;" rel="nofollow noreferrer">Open in the app</a>');
      expect(body).toContain('<meta http-equiv="refresh" content="5;url=https://apps.example/app/id1">');
      expect(body).toContain('<a href="https://apps.example/app/id1" rel="nofollow noreferrer">Continue without the app</a>');
      expect(body).not.toMatch(/<script/i);
      // HEAD: the same page, no click.
      const head = await get('/app0001', { method: 'HEAD', headers: as({ 'user-agent': IPHONE, accept: html }) });
      expect([head.status, head.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
      const answer = async (headers: Record<string, string>) => {
        const res = await get('/app0001', { headers: as(headers) });
        return [res.status, res.headers.get('location')];
      };
      // An API client on the phone, a bot with an iPhone agent: the fallback's redirect.
      expect(await answer({ 'user-agent': IPHONE })).toEqual([302, 'https://apps.example/app/id1']);
      expect(await answer({ 'user-agent': GOOGLEBOT_IPHONE, accept: html })).toEqual([302, 'https://apps.example/app/id1']);
      // Android: the app link is the redirect; a desktop browser gets the target.
      expect(await answer({ 'user-agent': PIXEL, accept: html })).toEqual([302, 'https://shop.example/p/42']);
      // maxClicks 4: the page, the two 302s on the phone and Android's took one each; nothing is left.
      expect(await answer({ 'user-agent': 'desktop-agent', accept: html })).toEqual([410, null]);
      await flush();
      expect(clicks.map((c) => [c.code, c.userAgent])).toEqual([
        ['app0001', IPHONE],
        ['app0001', IPHONE],
        ['app0001', GOOGLEBOT_IPHONE],
        ['app0001', PIXEL],
      ]);
      await shard.insert(link('app0002', { appTargets: { ios: 'myapp://x' } }));
      expect((await get('/app0002', { headers: as({ 'user-agent': 'desktop-agent', accept: html }) })).headers.get('location')).toBe(
        'https://example.com/app0002',
      );
      const german = await get('/app0002', { headers: as({ 'user-agent': IPHONE, accept: html, 'accept-language': 'de' }) });
      expect(await german.text()).toContain('In der App öffnen');
    });

    it('answers a wrong password with 403 (the form again for a browser), and 429 with Retry-After after 3 wrong ones per visitor and link', async () => {
      await shard.insert(link('pass002', { passwordHash }));
      const me = as();
      const wrongPage = await post('/pass002', 'password=nope', { ...me, accept: 'text/html' });
      expect(wrongPage.status).toBe(403);
      expectPageHeaders(wrongPage);
      expect(await wrongPage.text()).toContain('not right');
      const wrongApi = await post('/pass002', 'password=nope', me);
      expect(wrongApi.status).toBe(403);
      expect(await wrongApi.json()).toMatchObject({ code: 'PASSWORD_INCORRECT' });
      expect((await post('/pass002', 'password=nope', me)).status).toBe(403);
      const limited = await post('/pass002', 'password=open+sesame', me);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await limited.json()).toMatchObject({ code: 'RATE_LIMITED' });
      // Another visitor is not held back.
      expect((await post('/pass002', 'password=open+sesame', as())).status).toBe(303);
      await flush();
      expect(clicks).toHaveLength(1);
    });

    describe('under load', () => {
      // Each of these runs a dozen or more Argon2 checks at the production cost (19 MiB, 2 passes) on purpose;
      // on a 2-core machine with a CPU hog that takes many seconds. The bound stops a hang, it measures nothing.
      const ARGON2_UNDER_LOAD_MS = 60_000;
      beforeAll(() => (perIpLimit = 10_000));
      afterAll(() => (perIpLimit = 5));
      // The visitor's budget of checks is a fixed window of the minute: a run that straddled two minutes (likely when a
      // CPU hog makes it take 20 s and more) gave the attacker two budgets. Only the date is held (10 s into a minute);
      // timers, sockets and the argon2 thread pool run.
      beforeEach(() =>
        jest.useFakeTimers({
          now: 1_800_000_010_000,
          doNotFake: [
            'hrtime',
            'nextTick',
            'performance',
            'queueMicrotask',
            'setImmediate',
            'clearImmediate',
            'setInterval',
            'clearInterval',
            'setTimeout',
            'clearTimeout',
          ],
        }),
      );
      afterEach(() => jest.useRealTimers());

      const openPost = (path: string, body: string, headers: Record<string, string>) => postLater(base, path, body, headers);
      const count = (statuses: number[]) => statuses.reduce<Record<number, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {});

      it(
        'evaluates at most the limit of wrong passwords of 30 connections that send their headers first and their bodies one at a time',
        async () => {
          await shard.insert(link('pass005', { passwordHash }));
          const me = as();
          const posts = Array.from({ length: 30 }, () => openPost('/pass005', 'password=wrong', me));
          await new Promise((r) => setTimeout(r, 200)); // every request is past its headers before the first body leaves
          const answers = [];
          for (const p of posts) answers.push(await p.send());
          expect(count(answers.map((a) => a.status))).toEqual({ 403: 3, 429: 27 });
          expect(answers.slice(3).every((a) => JSON.parse(a.body).code === 'RATE_LIMITED')).toBe(true);
          expect((await post('/pass005', 'password=open+sesame', me)).status).toBe(429);
        },
        ARGON2_UNDER_LOAD_MS,
      );

      it(
        'evaluates at most the limit of wrong passwords whose bodies all arrive at once',
        async () => {
          await shard.insert(link('pass006', { passwordHash }));
          const me = as();
          const posts = Array.from({ length: 30 }, () => openPost('/pass006', 'password=wrong', me));
          await new Promise((r) => setTimeout(r, 200));
          const answers = await Promise.all(posts.map((p) => p.send()));
          expect(count(answers.map((a) => a.status))).toEqual({ 403: 3, 429: 27 });
        },
        ARGON2_UNDER_LOAD_MS,
      );

      it(
        "does not let one client hammering its own link's right password make another tenant's visitor fail",
        async () => {
          // Four links of its own: a visitor's posts in flight on one link are capped by its attempts (3 here), not its checks.
          const own = ['mine001', 'mine002', 'mine003', 'mine004'];
          for (const code of own) await shard.insert(link(code, { passwordHash, tenantId: 't1' }));
          await shard.insert(link('their01', { passwordHash, tenantId: 't2' }));
          const attacker = as();
          const victim = as();
          let running = true;
          const attackerStatuses: number[] = [];
          const loop = async (_: unknown, i: number) => {
            while (running) attackerStatuses.push((await post(`/${own[i % own.length]}`, 'password=open+sesame', attacker)).status);
          };
          const loops = Array.from({ length: 8 }, loop);
          const victimStatuses: number[] = [];
          try {
            for (let i = 0; i < 8; i++) victimStatuses.push((await post('/their01', 'password=open+sesame', victim)).status);
          } finally {
            running = false;
            await Promise.all(loops);
          }
          expect(victimStatuses).toEqual(Array(8).fill(303));
          // A right password spends from the visitor's budget too (10 checks a minute here).
          expect(count(attackerStatuses)[303]).toBeLessThanOrEqual(10);
          expect(count(attackerStatuses)[429]).toBeGreaterThan(0);
        },
        ARGON2_UNDER_LOAD_MS,
      );
    });

    it('takes a click of a password link only once the password is accepted, and checks max clicks first', async () => {
      await shard.insert(link('pass003', { passwordHash, maxClicks: 1 }));
      expect((await get('/pass003', { headers: as() })).status).toBe(200);
      expect((await post('/pass003', 'password=nope', as())).status).toBe(403);
      expect((await post('/pass003', 'password=open+sesame', as())).status).toBe(303);
      expect((await post('/pass003', 'password=open+sesame', as())).status).toBe(410);
      expect((await post('/pass003', 'password=nope', as())).status).toBe(410); // no password is checked any more
      expect((await get('/pass003', { headers: as() })).status).toBe(410);
    });

    it('refuses other bodies of the password form: 415 not urlencoded, 413 over 1 KiB, 405 for a link without a password', async () => {
      await shard.insert(link('pass004', { passwordHash }));
      await shard.insert(link('plain01'));
      const json = await get('/pass004', { method: 'POST', body: '{"password":"x"}', headers: { 'content-type': 'application/json', ...as() } });
      expect(json.status).toBe(415);
      expect(await json.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
      const big = await post('/pass004', `password=${'a'.repeat(2000)}`, as());
      expect(big.status).toBe(413);
      expect(await big.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
      const plain = await post('/plain01', 'password=x', as());
      expect(plain.status).toBe(405);
      expect(plain.headers.get('allow')).toBe('GET, HEAD');
      expect(await plain.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
    });

    it('limits redirects per visitor and minute on a link with clicksPerIpPerMinute', async () => {
      await shard.insert(link('vlim001', { clicksPerIpPerMinute: 2 }));
      const me = as();
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await get('/vlim001', { headers: me })).status);
      expect(statuses).toEqual([302, 302, 429]);
      const limited = await get('/vlim001', { headers: me });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await get('/vlim001', { headers: as() })).status).toBe(302);
    });

    it('merges the visitor limit with the window every instance shares: redirects another instance counted leave fewer here', async () => {
      const l = link('vlim002', { clicksPerIpPerMinute: 3 });
      await shard.insert(l);
      const me = as();
      // Only the date is held (10 s into a minute), so that every request falls in one window; timers and sockets run.
      const timers = [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ] as const;
      jest.useFakeTimers({ now: 1_800_000_010_000, doNotFake: [...timers] });
      try {
        // Another instance sent this visitor twice this minute (counted in the shared window only).
        const window = Math.floor(Date.now() / 60_000);
        await visitorWindows.add([{ linkId: l.id, address: me['x-forwarded-for'], window, delta: 2 }], 60_000);
        const statuses = [(await get('/vlim002', { headers: me })).status];
        await visitors.merge(); // what a sync period does: this instance's 1 added, the total 3 read back
        for (let i = 0; i < 2; i++) statuses.push((await get('/vlim002', { headers: me })).status);
        expect(statuses).toEqual([302, 429, 429]);
      } finally {
        jest.useRealTimers();
      }
      expect((await get('/vlim002', { headers: as() })).status).toBe(302);
    });

    it('sends a visitor by country (from a trusted X-Forwarded-For), then by device, then to a sticky variant', async () => {
      await shard.insert(
        link('target1', {
          redirectRules: rulesFromTargets({ GB: 'https://example.co.uk/' }, { ios: 'https://apps.example/ios' }),
          variants: [
            { url: 'https://a.example/', weight: 1 },
            { url: 'https://b.example/', weight: 1 },
          ],
          redirectType: 301,
        }),
      );
      const location = async (headers: Record<string, string>) => {
        const res = await get('/target1', { headers });
        expect(res.status).toBe(301);
        expect(res.headers.get('cache-control')).toBe('private, no-store'); // depends on the visitor: nobody may cache it
        return res.headers.get('location');
      };
      expect(await location({ 'x-forwarded-for': '81.2.69.142' })).toBe('https://example.co.uk/');
      expect(await location({ 'x-forwarded-for': '8.8.8.8', 'user-agent': IPHONE })).toBe('https://apps.example/ios');
      const seen = new Set<string | null>();
      for (let i = 0; i < 40; i++) {
        const headers = { 'x-forwarded-for': `8.8.4.${i}`, 'user-agent': 'desktop-agent' };
        const first = await location(headers);
        expect(await location(headers)).toBe(first);
        seen.add(first);
      }
      expect([...seen].sort()).toEqual(['https://a.example/', 'https://b.example/']);
    });

    it('follows redirect rules on the language, the query, the address and the date; the first that holds wins, the query still forwarded', async () => {
      await shard.insert(
        link('rules01', {
          redirectRules: [
            {
              url: 'https://example.com/es-mail',
              conditions: [
                { type: 'language', value: 'es' },
                { type: 'query-param', name: 'ref', value: 'mail' },
              ],
            },
            { url: 'https://example.com/es', conditions: [{ type: 'language', value: 'es' }] },
            { url: 'https://example.com/office', conditions: [{ type: 'ip-address', value: '203.0.113.0/24' }] },
            { url: 'https://example.com/past', conditions: [{ type: 'before-date', value: '2000-01-01T00:00:00.000Z' }] },
          ],
        }),
      );
      const location = async (path: string, headers: Record<string, string>) => {
        const res = await get(path, { headers: as(headers) });
        expect(res.status).toBe(302);
        expect(res.headers.get('cache-control')).toBe('private, no-store');
        return res.headers.get('location');
      };
      expect(await location('/rules01?ref=mail', { 'accept-language': 'es-ES,es;q=0.9,en;q=0.8' })).toBe('https://example.com/es-mail?ref=mail');
      expect(await location('/rules01', { 'accept-language': 'es-ES' })).toBe('https://example.com/es');
      // Spanish only as a fallback (q < 0.9) is no Spanish visitor.
      expect(await location('/rules01', { 'accept-language': 'en-GB, es;q=0.5' })).toBe('https://example.com/rules01');
      expect(await location('/rules01', { 'x-forwarded-for': '203.0.113.9' })).toBe('https://example.com/office');
      await flush();
      expect(clicks.filter((c) => c.code === 'rules01')).toHaveLength(4);
    });

    it('shows a flagged link’s warning page with a continue link that carries the query, and follows it from there', async () => {
      await shard.insert(link('flag001', { moderation: 'flagged', moderationReason: 'homograph', targetUrl: 'https://examp1e.com/login' }));
      const warning = await get('/flag001?x=1&y=<b>', { headers: as() });
      expect(warning.status).toBe(200);
      expectPageHeaders(warning);
      const html = await warning.text();
      expect(html).toContain('https://examp1e.com/login');
      expect(html).toContain('href="/flag001/go?x=1&amp;y=%3Cb%3E"');
      const go = await get('/flag001/go?x=1', { headers: as() });
      expect(go.status).toBe(302);
      expect(go.headers.get('location')).toBe('https://examp1e.com/login?x=1');
      await flush();
      expect(clicks.map((c) => c.code)).toEqual(['flag001']);
    });

    it('shows a banned link’s blocked page with 451, also past the warning and on the preview', async () => {
      await shard.insert(link('ban0001', { moderation: 'banned', targetUrl: 'https://phish.example/' }));
      for (const path of ['/ban0001', '/ban0001/go', '/ban0001+']) {
        const res = await get(path, { headers: as() });
        expect(res.status).toBe(451);
        expectPageHeaders(res);
        expect(await res.text()).not.toContain('phish.example');
      }
    });

    it('sends visitors of a broken link where its tenant chose: the target, a page with the way on, or its URL (no click); a healthy link is not concerned', async () => {
      const health = (state: 'ok' | 'broken', url: string) => ({
        state,
        since: new Date(),
        brokenTargets: state === 'broken' ? [url] : [],
        lastStatus: state === 'broken' ? 404 : 200,
        lastError: null,
        checkedAt: new Date(),
      });
      await shard.insert(link('brk0001', { health: health('broken', 'https://example.com/brk0001') }));
      await shard.insert(link('brk0002', { tenantId: 't2', health: health('broken', 'https://example.com/brk0002') }));
      await shard.insert(link('brk0003', { health: health('ok', 'https://example.com/brk0003') }));
      await shard.insert(link('brk0004', { moderation: 'flagged', health: health('broken', 'https://example.com/brk0004') }));
      fallbacks.set('t1', { mode: 'page', url: null });
      fallbacks.set('t2', { mode: 'url', url: 'https://acme.example/sorry' });
      try {
        const page = await get('/brk0001', { headers: as({ accept: 'text/html' }) });
        expect(page.status).toBe(200);
        expectPageHeaders(page);
        const html = await page.text();
        expect(html).toContain('destination seems to be down');
        expect(html).toContain('href="https://example.com/brk0001"');
        const moved = await get('/brk0002', { headers: as() });
        expect({ status: moved.status, location: moved.headers.get('location'), cache: moved.headers.get('cache-control') }).toEqual({
          status: 302,
          location: 'https://acme.example/sorry',
          cache: 'private, no-store',
        });
        expect((await get('/brk0003', { headers: as() })).headers.get('location')).toBe('https://example.com/brk0003');
        // A flagged link warns first; past the warning, the fallback.
        expect(await (await get('/brk0004', { headers: as({ accept: 'text/html' }) })).text()).toContain('/brk0004/go');
        expect(await (await get('/brk0004/go', { headers: as({ accept: 'text/html' }) })).text()).toContain('destination seems to be down');
        fallbacks.set('t1', { mode: 'target', url: null });
        expect((await get('/brk0001', { headers: as() })).headers.get('location')).toBe('https://example.com/brk0001');
        await flush();
        expect(clicks.map((c) => c.code)).toEqual(['brk0003', 'brk0001']);
      } finally {
        fallbacks.clear();
      }
    });

    it('puts "Report this link" on the preview and warning pages: a form to /r/report on this origin, each reason a labelled choice, no script', async () => {
      await shard.insert(link('rep0001'));
      await shard.insert(link('rep0002', { moderation: 'flagged', moderationReason: 'homograph' }));
      for (const path of ['/rep0001+', '/rep0002']) {
        const res = await get(path, { headers: as() });
        expect(res.headers.get('content-security-policy')).toMatch(/form-action 'self'/);
        const html = await res.text();
        expect(html).toContain('<summary>Report this link</summary>');
        expect(html).toContain('<form method="post" action="/r/report"');
        expect(html).toContain(`name="code" value="${path.slice(1, 8)}"`);
        expect(html.match(/type="radio" name="reason"/g)).toHaveLength(6);
        expect(html).toContain('name="details" maxlength="1000"');
        expect(html).not.toContain('<script');
      }
    });

    it('previews a link at /{code}+ with its target, title and creation date, all escaped, without a click', async () => {
      await shard.insert(link('prev001', { title: '<script>alert(1)</script> & co', targetUrl: 'https://example.com/a?b=1&c="2"' }));
      await shard.insert(link('prev002', { passwordHash, targetUrl: 'https://secret.example/' }));
      const res = await get('/prev001+', { headers: as() });
      expect(res.status).toBe(200);
      expectPageHeaders(res);
      const html = await res.text();
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; co');
      expect(html).not.toContain('<script>');
      expect(html).toContain('https://example.com/a?b=1&amp;c=&quot;2&quot;');
      expect(html).toContain('2026-01-02T03:04:05.000Z');
      expect(html).toContain('href="/prev001"');
      const hidden = await (await get('/prev002+', { headers: as() })).text();
      expect(hidden).not.toContain('secret.example');
      await flush();
      expect(clicks).toEqual([]);
    });
  });

  describe('pages for browsers and domain settings (docs/design.md, "Pages", "Domain settings")', () => {
    const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const browser = (headers: Record<string, string> = {}) => as({ accept: BROWSER_ACCEPT, ...headers });
    /** Stores settings of `domain` as its owner's PATCH would, and tells this instance as the channel does. */
    const setSettings = async (domain: string, values: Partial<DomainSettingsValues>) => {
      const current = (await meta.domainSettings.find(domain)) ?? defaultSettingsOf(domain);
      const version = current.version + 1;
      expect(await meta.domainSettings.save({ ...current, ...values, version, updatedAt: new Date() }, current.version)).toBe(true);
      await files.changed(domainSettingsChange(domain, version));
    };
    /** fetch cannot set Host; node:http can. */
    const getOn = (host: string, path: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
        const { port } = new URL(base);
        request({ host: '127.0.0.1', port, path, headers: { host, ...as(), ...headers } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        })
          .on('error', reject)
          .end();
      });

    it('conversion tracking set on a domain: every link of it passes a click id (never cached), a link’s own parameter wins, other domains none (docs/analytics.md, "Conversions")', async () => {
      await shard.insert(link('dconv01', { domain: 'go.example', redirectType: 301 }));
      await shard.insert(link('dconv02', { domain: 'go.example', trackConversions: true, conversionParam: 'mine' }));
      await shard.insert(link('dconv03', { domain: 'sho.rt' }));
      const before = await getOn('go.example', '/dconv01');
      expect([before.status, before.headers.location, before.headers['cache-control']]).toEqual([301, 'https://example.com/dconv01', 'public, max-age=300']);
      await setSettings('go.example', { trackConversions: true, conversionParam: 'cid' });
      const tracked = await getOn('go.example', '/dconv01');
      expect(tracked.headers.location).toMatch(/^https:\/\/example\.com\/dconv01\?cid=[A-Za-z0-9_-]{22}$/);
      expect(tracked.headers['cache-control']).toBe('private, no-store');
      expect((await getOn('go.example', '/dconv02')).headers.location).toMatch(/\?mine=[A-Za-z0-9_-]{22}$/);
      expect((await getOn('sho.rt', '/dconv03')).headers.location).toBe('https://example.com/dconv03');
      const clickId = new URL(String(tracked.headers.location)).searchParams.get('cid');
      expect(new ClickIds('k'.repeat(40)).open(clickId)).not.toBeNull();
      await flush();
      expect(clicks.filter((c) => c.code === 'dconv01').map((c) => c.clickId)).toEqual([undefined, clickId]);
      await setSettings('go.example', { trackConversions: false });
      expect((await getOn('go.example', '/dconv01')).headers.location).toBe('https://example.com/dconv01');
    });

    it('gives a browser a page for every refusal: 404 (the same for unknown and disabled), 410 expired and exhausted, 429 with Retry-After', async () => {
      await shard.insert(link('pgoff01', { status: 'disabled' }));
      await shard.insert(link('pgold01', { expiresAt: new Date(Date.now() - 1000) }));
      await shard.insert(link('pgmax01', { maxClicks: 1 }));
      expect((await get('/pgmax01', { headers: as() })).status).toBe(302);
      const pages: Array<[string, number, string]> = [
        ['/pgnone1', 404, 'This link does not exist'],
        ['/pgoff01', 404, 'This link does not exist'],
        ['/pgold01', 410, 'This link has expired'],
        ['/pgmax01', 410, 'This link is no longer available'],
      ];
      const bodies: string[] = [];
      for (const [path, status, heading] of pages) {
        const res = await get(path, { headers: browser() });
        expect([path, res.status]).toEqual([path, status]);
        expectPageHeaders(res);
        expect(res.headers.get('vary')).toBe('Accept, Accept-Language');
        expect(res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
        const html = await res.text();
        expect(html).toContain(`<h1>${heading}</h1>`);
        expect(html).toContain('<meta name="robots" content="noindex,nofollow">');
        expect(html).not.toMatch(/<script|\son[a-z]+=/i);
        expect(html).not.toContain(path.slice(1));
        bodies.push(html);
      }
      // An unknown and a disabled code cannot be told apart.
      expect(bodies[1]).toBe(bodies[0]);
      perIpLimit = 5;
      const limited: Response[] = [];
      for (let i = 0; i < 6; i++) limited.push(await get('/pgnone1', { headers: { accept: BROWSER_ACCEPT } }));
      const last = limited[5];
      expect(last.status).toBe(429);
      expectPageHeaders(last);
      const retryAfter = Number(last.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(await last.text()).toContain(`Try again in ${retryAfter} second`);
    });

    it('shows a shard that cannot answer as a 503 page with Retry-After to a browser, problem+json to an API client', async () => {
      await shard.close();
      const page = await get('/pgdown1', { headers: browser() });
      expect(page.status).toBe(503);
      expectPageHeaders(page);
      const retryAfter = Number(page.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      const html = await page.text();
      expect(html).toContain('<h1>This link cannot be opened right now</h1>');
      expect(html).toContain(`Try again in ${retryAfter} second`);
      const problem = await get('/pgdown1', { headers: as({ accept: 'application/json' }) });
      expect([problem.status, problem.headers.get('content-type')]).toEqual([503, 'application/problem+json']);
      shard = new SqliteLinkShardStore('s0', ':memory:'); // afterEach closes it
    });

    it('keeps problem+json for JSON, no Accept, */* and curl-like clients, with Vary: Accept on the negotiated answers', async () => {
      await shard.insert(link('pgold02', { expiresAt: new Date(Date.now() - 1000) }));
      for (const accept of [undefined, '*/*', 'application/json', 'application/problem+json', 'text/html;q=0.5,application/json', 'text/html;q=0']) {
        const res = await get('/pgold02', { headers: as(accept === undefined ? {} : { accept }) });
        expect([accept, res.status, res.headers.get('content-type')]).toEqual([accept, 410, 'application/problem+json']);
        expect(res.headers.get('vary')).toBe('Accept, Accept-Language');
        expect(await res.json()).toMatchObject({ code: 'LINK_EXPIRED' });
      }
    });

    it('speaks the visitor’s language: German, French, Spanish and Italian by Accept-Language, English otherwise', async () => {
      const cases: Array<[string, string, string]> = [
        ['de-CH,de;q=0.9,en;q=0.5', 'de', 'Diesen Link gibt es nicht'],
        ['fr-FR,fr;q=0.9', 'fr', 'Ce lien n’existe pas'],
        ['es-MX,es;q=0.9,en;q=0.5', 'es', 'Este enlace no existe'],
        ['it-IT', 'it', 'Questo link non esiste'],
        ['pt-BR,es;q=0.8,de;q=0.4', 'es', 'Este enlace no existe'],
        ['ja', 'en', 'This link does not exist'],
        ['de;q=0,*', 'en', 'This link does not exist'],
      ];
      for (const [acceptLanguage, lang, heading] of cases) {
        const res = await get('/pglang1', { headers: browser({ 'accept-language': acceptLanguage }) });
        expect(res.headers.get('content-language')).toBe(lang);
        const html = await res.text();
        expect([acceptLanguage, html.includes(`<html lang="${lang}">`), html.includes(heading)]).toEqual([acceptLanguage, true, true]);
      }
    });

    it('shows the domain’s branding (name, logo carried by the page, accent) and the service’s on domains without any; the CSP allows that image only', async () => {
      const logo = `data:image/png;base64,${PNG_1PX}`;
      await setSettings('go.example', { branding: { name: 'Acme <Links>', logo, accentColor: '#ff6600' } });
      const branded = await getOn('go.example', '/pgbrand', { accept: BROWSER_ACCEPT });
      expect(branded.status).toBe(404);
      expect(branded.body).toContain('<title>Link not found – Acme &lt;Links&gt;</title>');
      // The name once: the logo beside it is decorative (a broken image does not repeat the name).
      expect(branded.body).toContain(`<header><img src="${logo}" alt="" height="36"><span>Acme &lt;Links&gt;</span></header>`);
      expect(branded.body).toContain('--accent:#ff6600');
      expect(branded.headers['content-security-policy']).toMatch(/img-src data:;/);
      // The default domain has no branding of its own yet: no header, no image allowed.
      const plain = await getOn('sho.rt', '/pgbrand', { accept: BROWSER_ACCEPT });
      expect(plain.body).not.toContain('Acme');
      expect(plain.headers['content-security-policy']).toMatch(/img-src 'none'/);
      // The service's branding (its default domain's) is every other domain's.
      await setSettings('sho.rt', { branding: { name: 'Sho.rt', logo: null, accentColor: null } });
      expect((await getOn('sho.rt', '/pgbrand', { accept: BROWSER_ACCEPT })).body).toContain('<header>Sho.rt</header>');
      expect((await getOn('go.example', '/pgbrand', { accept: BROWSER_ACCEPT })).body).toContain('Acme &lt;Links&gt;');
    });

    it('sends browsers to the domain’s notFound, expired and root redirects; API clients keep problem+json; no click is counted', async () => {
      await shard.insert(link('pgold03', { domain: 'go.example', expiresAt: new Date(Date.now() - 1000) }));
      await setSettings('go.example', {
        notFoundRedirect: 'https://acme.example/missing',
        expiredRedirect: 'https://acme.example/expired',
        rootRedirect: 'https://acme.example/',
      });
      const missing = await getOn('go.example', '/pgnone3', { accept: BROWSER_ACCEPT });
      expect([missing.status, missing.headers.location, missing.headers.vary]).toEqual([302, 'https://acme.example/missing', 'Accept']);
      expect((await getOn('go.example', '/pgold03', { accept: BROWSER_ACCEPT })).headers.location).toBe('https://acme.example/expired');
      const api = await getOn('go.example', '/pgnone3', { accept: 'application/json' });
      expect([api.status, api.headers['content-type']]).toEqual([404, 'application/problem+json']);
      // `/` goes to the root redirect for everyone; without one a browser gets the 404 page and anyone else the framework.
      expect((await getOn('go.example', '/')).headers.location).toBe('https://acme.example/');
      expect((await getOn('go.example', '/?utm=x', { accept: BROWSER_ACCEPT })).headers.location).toBe('https://acme.example/');
      const bare = await getOn('sho.rt', '/', { accept: BROWSER_ACCEPT });
      expect([bare.status, bare.headers['content-type']]).toEqual([404, 'text/html; charset=utf-8']);
      expect(passedOn).toEqual([]);
      await getOn('sho.rt', '/');
      expect(passedOn).toEqual(['GET /']);
      // Another domain's settings are not this one's.
      expect((await getOn('sho.rt', '/pgnone3', { accept: BROWSER_ACCEPT })).status).toBe(404);
      await flush();
      expect(clicks.filter((c) => c.kind !== 'orphan')).toEqual([]);
    });

    it('serves robots.txt: disallow with the crawlable links of the domain, allow when set; a new crawlable link is seen once told', async () => {
      await shard.insert(link('crawl01', { crawlable: true }));
      await shard.insert(link('crawl02'));
      await shard.insert(link('crawl03', { domain: 'go.example', crawlable: true }));
      const robots = await getOn('sho.rt', '/robots.txt');
      expect([robots.status, robots.headers['content-type']]).toEqual([200, 'text/plain; charset=utf-8']);
      expect(robots.body).toBe('User-agent: *\nAllow: /crawl01$\nDisallow: /\n');
      expect((await getOn('go.example', '/robots.txt')).body).toBe('User-agent: *\nAllow: /crawl03$\nDisallow: /\n');
      // A link made crawlable is told on the channel as an edit: robots.txt is made again.
      await shard.insert(link('crawl04', { crawlable: true }));
      await files.changed({ domain: 'sho.rt', code: 'crawl04', version: 1 });
      expect((await getOn('sho.rt', '/robots.txt')).body).toBe('User-agent: *\nAllow: /crawl01$\nAllow: /crawl04$\nDisallow: /\n');
      await setSettings('sho.rt', { robots: 'allow' });
      expect((await getOn('sho.rt', '/robots.txt')).body).toBe('User-agent: *\nAllow: /\n');
      expect((await getOn('go.example', '/robots.txt')).body).toBe('User-agent: *\nAllow: /crawl03$\nDisallow: /\n');
    });

    it('serves the well-known files of app links per domain, and leaves them to the framework (404) where none is set', async () => {
      const aasa = { applinks: { details: [{ appIDs: ['ABCDE12345.com.acme.app'], components: [{ '/': '/*' }] }] } };
      const assetlinks = [
        {
          relation: ['delegate_permission/common.handle_all_urls'],
          target: { namespace: 'android_app', package_name: 'com.acme.app', sha256_cert_fingerprints: [Array(32).fill('AB').join(':')] },
        },
      ];
      await setSettings('go.example', { appleAppSiteAssociation: aasa, androidAssetLinks: assetlinks });
      const apple = await getOn('go.example', '/.well-known/apple-app-site-association');
      expect([apple.status, apple.headers['content-type']]).toEqual([200, 'application/json']);
      expect(JSON.parse(apple.body)).toEqual(aasa);
      const android = await getOn('go.example', '/.well-known/assetlinks.json');
      expect(JSON.parse(android.body)).toEqual(assetlinks);
      await getOn('sho.rt', '/.well-known/assetlinks.json');
      expect(passedOn).toEqual(['GET /.well-known/assetlinks.json']);
      // Cleared: gone at once.
      await setSettings('go.example', { androidAssetLinks: null });
      await getOn('go.example', '/.well-known/assetlinks.json');
      expect(passedOn).toEqual(['GET /.well-known/assetlinks.json', 'GET /.well-known/assetlinks.json']);
    });
  });
});
