import { createServer, IncomingMessage, request, Server, ServerResponse } from 'http';
import { AddressInfo } from 'net';
import { Registry } from 'prom-client';
import { loadConfig } from '@shortlink/config';
import { KeyedWindowLimiter } from '@shortlink/core';
import { ConsistentHashRing } from '@shortlink/shard-router';
import { CachePolicy, GlobalRateLimiter, HotKeyDetector, HotLinkSnapshotKeeper, L1Cache, Link, NO_OPTIONS, NULL_TTL_MS, RedirectPipeline, ShardedLinkRepository } from '@shortlink/links-domain';
import { SqliteLinkShardStore } from '@shortlink/link-store';
import { MemoryCacheStore } from '@shortlink/cache';
import { ClickEvent } from '@shortlink/clicks-domain';
import { MmdbGeoLookup } from '@shortlink/geo';
import { ClientAddressResolver } from '@shortlink/nest-platform';
import { ClickRecorder } from './click-recorder';
import { RedirectHttpHandler } from './redirect-http.handler';
import { RedirectMetrics } from './redirect.metrics';

describe('RedirectHttpHandler', () => {
  const config = loadConfig({ SHORTLINK_PUBLIC_BASE_URL: 'http://sho.rt', SHORTLINK_DOMAINS: 'go.example' });
  let server: Server;
  let base: string;
  let shard: SqliteLinkShardStore;
  let nextId = 1;
  let clicks: ClickEvent[];
  let registry: Registry;
  let passedOn: string[];
  const geo = new MmdbGeoLookup();

  const link = (code: string, over: Partial<Link> = {}): Link => ({
    ...NO_OPTIONS, id: String(nextId++), domain: 'sho.rt', code, targetUrl: `https://example.com/${code}`, tenantId: 't1',
    createdAt: new Date(), updatedAt: new Date(), expiresAt: null, status: 'active', redirectType: 302, version: 1, moderation: 'clear', moderationReason: null, ...over,
  });

  beforeEach(async () => {
    // The embedded adapters: an in-memory SQLite shard and the in-process cache.
    shard = new SqliteLinkShardStore('s0', ':memory:');
    const repository = new ShardedLinkRepository(new ConsistentHashRing([{ name: 's0' }]), [shard]);
    const cache = new MemoryCacheStore(1000);
    registry = new Registry();
    const metrics = new RedirectMetrics(registry);
    const pipeline = new RedirectPipeline(
      cache, repository, new L1Cache({ maxEntries: 100, maxBytes: 1 << 20, ttlMs: 60_000, negativeTtlMs: 5000 }), new HotKeyDetector(), new CachePolicy('lru'), null,
      new HotLinkSnapshotKeeper({ load: async () => [], save: async () => undefined }),
      { l1Enabled: true, sharedCacheEnabled: true, bloomEnabled: false, lockTtlMs: 1000, lockWaitMs: 1000, lockPollMs: 5, dbConcurrency: 4, breakerFailures: 5, breakerHalfOpenAfterMs: 1000, nullTtlMs: NULL_TTL_MS },
      metrics,
    );
    clicks = [];
    const recorder = new ClickRecorder({ send: async (events) => void clicks.push(...events), close: async () => undefined }, geo, 'v'.repeat(40), { capacity: 100, batchSize: 100, flushIntervalMs: 1000 });
    const handler = new RedirectHttpHandler(pipeline, recorder, metrics, new KeyedWindowLimiter({ limit: 5, windowMs: 60_000 }), new GlobalRateLimiter(cache, 0, 0), new ClientAddressResolver([]), config);
    passedOn = [];
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (handler.tryHandle(req, res)) return;
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
  });

  const get = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, { redirect: 'manual', ...init });
  /** fetch cannot set Host; node:http can. */
  const locationFor = (path: string, host: string) =>
    new Promise<string | undefined>((resolve, reject) => {
      const { port } = new URL(base);
      request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
        res.resume();
        resolve(res.headers.location);
      }).on('error', reject).end();
    });

  it('redirects GET with the link type, Location and no-store, and records one click; HEAD redirects without a click', async () => {
    await shard.insert(link('abc1234'));
    const res = await get('/abc1234', { headers: { 'user-agent': 'ua/1', referer: 'https://ref.example/x' } });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.com/abc1234');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect((await get('/abc1234', { method: 'HEAD' })).status).toBe(302);
    await flush();
    expect(clicks).toHaveLength(1);
    expect(clicks[0]).toMatchObject({ kind: 'click', code: 'abc1234', domain: 'sho.rt', tenantId: 't1', userAgent: 'ua/1', refererHost: 'ref.example', country: null, variant: null, seq: 0 });
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

  it('answers unknown, disabled and expired links with problem+json 404, 404 and 410', async () => {
    await shard.insert(link('off0001', { status: 'disabled' }));
    await shard.insert(link('old0001', { expiresAt: new Date(Date.now() - 1000) }));
    for (const [path, status, code] of [['/nope123', 404, 'LINK_NOT_FOUND'], ['/off0001', 404, 'LINK_DISABLED'], ['/old0001', 410, 'LINK_EXPIRED']] as const) {
      const res = await get(path);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toMatchObject({ status, code, instance: path });
    }
    await flush();
    // Only the code that does not exist is an orphan visit; a disabled or expired link is not.
    expect(clicks.map((c) => [c.kind, c.code, c.tenantId])).toEqual([['orphan', 'nope123', '']]);
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
    await get('/abc1234', { method: 'POST' });
    await get('/health');
    await get('/metrics');
    await get('/api/v1/links');
    await get('/a');
    expect(passedOn).toEqual(['POST /abc1234', 'GET /health', 'GET /metrics', 'GET /api/v1/links', 'GET /a']);
  });
});
