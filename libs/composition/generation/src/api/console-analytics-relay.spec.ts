import { createServer, IncomingHttpHeaders, Server } from 'http';
import type { AddressInfo } from 'net';
import { relayedRoute } from '@shortlink/console-feature';
import { InProcessGeneration, startGenerationInProcess } from '../testing/in-process-generation';

const KEY = 'sl_relay_spec_operator_0123456789';

describe('relayedRoute: the analytics read routes the console may reach, and only those', () => {
  it.each([
    ['/api/analytics/v1/links/abc_1-Z/stats', '/api/v1/links/abc_1-Z/stats'],
    ['/api/analytics/v1/links/abc/breakdown/countries', '/api/v1/links/abc/breakdown/countries'],
    ['/api/analytics/v1/links/abc/visits', '/api/v1/links/abc/visits'],
    ['/api/analytics/v1/stats/overview', '/api/v1/stats/overview'],
    ['/api/analytics/v1/stats/top-links', '/api/v1/stats/top-links'],
    ['/api/analytics/v1/stats/orphans', '/api/v1/stats/orphans'],
    ['/api/analytics/v1/stats/conversions', '/api/v1/stats/conversions'],
    ['/api/analytics/v1/stats/conversions/series', '/api/v1/stats/conversions/series'],
    ['/api/analytics/v1/stats/conversions/breakdown/variants', '/api/v1/stats/conversions/breakdown/variants'],
    ['/api/analytics/v1/events/stream', '/api/v1/events/stream'],
  ])('%s → %s', (path, route) => expect(relayedRoute(path)).toBe(route));

  it.each([
    '/api/analytics/v1/auth/login',
    '/api/analytics/v1/me',
    '/api/analytics/v1/links/abc',
    '/api/analytics/v1/links/../../admin/stats',
    '/api/analytics/v1/links/a%2F..%2Fb/stats',
    '/api/analytics/v1/links/abc/stats/',
    '/api/analytics/v1/webhooks',
    '/api/analytics/v1/stats/conversions/breakdown/../../../me',
    '/api/analytics/v1/stats/conversions/other',
    '/api/v1/links/abc/stats',
  ])('%s is not relayed', (path) => expect(relayedRoute(path)).toBeNull());
});

describe('GET /api/analytics/v1/… relayed to the analytics app with the session', () => {
  let generation: InProcessGeneration;
  let upstream: Server;
  const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  let cookie: string;

  beforeAll(async () => {
    // The analytics app's side of the wire: what it was sent, and an answer of each kind.
    upstream = createServer((req, res) => {
      seen.push({ url: req.url!, headers: req.headers });
      if (req.url!.startsWith('/api/v1/events/stream')) {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-internal': 'no' });
        res.write('retry: 2000\n\n');
        setTimeout(() => res.end('id: a.1\nevent: click\ndata: {}\n\n'), 50);
      } else if (req.url!.includes('/missing/')) {
        res
          .writeHead(400, { 'content-type': 'application/problem+json' })
          .end(JSON.stringify({ status: 400, code: 'INVALID_TIME_RANGE', detail: 'from must be before to' }));
      } else {
        res
          .writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'ratelimit-remaining': '99', 'set-cookie': 'other=1' })
          .end('{"totals":{"clicks":3}}');
      }
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    generation = await startGenerationInProcess(KEY, { SHORTLINK_ANALYTICS_API_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` });
    const invited = await generation.call(KEY, 'POST', '/api/v1/members', { email: 'relay@example.com', role: 'viewer' });
    expect(invited.statusCode).toBe(201);
    const password = 'correct horse battery staple';
    expect((await generation.call(null, 'POST', '/api/v1/auth/accept', { token: invited.json().invitation.token, password })).statusCode).toBeLessThan(300);
    const login = await generation.call(null, 'POST', '/api/v1/auth/login', { email: 'relay@example.com', password });
    cookie = String(login.headers['set-cookie']).split(';')[0];
  }, 60_000);

  afterAll(async () => {
    await generation?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('relays a query with the session cookie only, and its answer with the headers the console needs', async () => {
    seen.length = 0;
    const res = await generation.call(null, 'GET', '/api/analytics/v1/stats/overview?from=1&to=2', undefined, {
      cookie: `${cookie}; tracking=abc`,
      'x-api-key': 'sl_not_forwarded',
      authorization: 'Bearer nope',
      accept: 'application/json',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ totals: { clicks: 3 } });
    expect(res.headers['ratelimit-remaining']).toBe('99');
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(seen).toHaveLength(1);
    expect(seen[0].url).toBe('/api/v1/stats/overview?from=1&to=2');
    expect(seen[0].headers.cookie).toBe(cookie);
    expect(seen[0].headers['x-api-key']).toBeUndefined();
    expect(seen[0].headers.authorization).toBeUndefined();
  });

  it("passes the analytics app's problem+json on as it is", async () => {
    const res = await generation.call(null, 'GET', '/api/analytics/v1/links/missing/stats?from=2&to=1', undefined, { cookie });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json().code).toBe('INVALID_TIME_RANGE');
  });

  it('streams the live click stream with its Last-Event-ID', async () => {
    seen.length = 0;
    const res = await generation.call(null, 'GET', '/api/analytics/v1/events/stream?bots=exclude', undefined, { cookie, 'last-event-id': 'a.0' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['x-internal']).toBeUndefined();
    expect(res.body).toBe('retry: 2000\n\nid: a.1\nevent: click\ndata: {}\n\n');
    expect(seen[0].headers['last-event-id']).toBe('a.0');
  });

  it('refuses without a session (401 problem+json, nothing sent on) and answers 404 for a route it does not relay', async () => {
    seen.length = 0;
    const anonymous = await generation.call(null, 'GET', '/api/analytics/v1/stats/overview');
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['content-type']).toContain('application/problem+json');
    expect(anonymous.json().code).toBe('UNAUTHENTICATED');
    const forged = await generation.call(null, 'GET', '/api/analytics/v1/stats/overview', undefined, { cookie: 'sl_session=sess_forged' });
    expect(forged.statusCode).toBe(401);
    expect((await generation.call(null, 'GET', '/api/analytics/v1/me', undefined, { cookie })).statusCode).toBe(404);
    expect(seen).toEqual([]);
  });

  it('answers 503 DEPENDENCY_UNAVAILABLE when the analytics app does not answer', async () => {
    const down = await startGenerationInProcess(KEY, { SHORTLINK_ANALYTICS_API_URL: 'http://127.0.0.1:1' });
    try {
      const invited = await down.call(KEY, 'POST', '/api/v1/members', { email: 'down@example.com', role: 'viewer' });
      const password = 'correct horse battery staple';
      await down.call(null, 'POST', '/api/v1/auth/accept', { token: invited.json().invitation.token, password });
      const login = await down.call(null, 'POST', '/api/v1/auth/login', { email: 'down@example.com', password });
      const res = await down.call(null, 'GET', '/api/analytics/v1/stats/overview', undefined, { cookie: String(login.headers['set-cookie']).split(';')[0] });
      expect(res.statusCode).toBe(503);
      expect(res.json().code).toBe('DEPENDENCY_UNAVAILABLE');
    } finally {
      await down.close();
    }
  }, 60_000);
});
