import { Endpoints, eventually, parseMetrics } from '@shortlink/harness';
import { API_KEY, createLink, getStats, redirectOf } from './support';

/**
 * What every profile must do for a user: create, follow, see the click, get clear errors.
 * `otherTenantKey` gives the API key of a second tenant of the same installation.
 */
export function describeUserJourney(endpoints: () => Endpoints, otherTenantKey: () => Promise<string>) {
  it('creates a link, redirects with 302 to the exact URL and shows the click in per-minute stats', async () => {
    const url = `https://example.com/landing?campaign=e2e&n=${Date.now()}`;
    const created = await createLink(endpoints(), { url });
    expect(created.status).toBe(201);
    const code = created.body.code as string;
    expect(code).toMatch(/^[0-9A-Za-z]{7}$/);
    expect(created.body.url).toBe(url);
    expect(created.body.shortUrl).toMatch(new RegExp(`/${code}$`));

    const res = await redirectOf(endpoints(), code);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(url);
    // Fastify's 72 s keep-alive, not Node's 5 s: longer than a load balancer's idle timeout.
    expect(res.headers.get('keep-alive')).toBe('timeout=72');
    const second = await redirectOf(endpoints(), code);
    expect(second.status).toBe(302);

    const stats = await eventually(
      'two clicks in stats',
      async () => {
        const s = await getStats(endpoints(), code);
        return s.body.totals?.clicks === 2 ? s : null;
      },
      60_000,
      500,
    );
    expect(stats.status).toBe(200);
    // No conversions reported: leads, sales and revenue are zero (docs/analytics.md, "Conversions").
    expect(stats.body.totals).toEqual({ clicks: 2, visitors: 1, leads: 0, sales: 0, revenue: {} });
    // Two clicks a few ms apart: one minute bucket, unless they straddle a minute boundary.
    expect(stats.body.series.reduce((n, p) => n + p.clicks, 0)).toBe(2);
    expect(stats.body.series.length).toBeLessThanOrEqual(2);
  });

  it('serves a custom alias and refuses it a second time with 409 ALIAS_TAKEN', async () => {
    const alias = `e2e-${Date.now().toString(36)}`;
    const first = await createLink(endpoints(), { url: 'https://example.org/a', alias });
    expect(first.status).toBe(201);
    expect(first.body.code).toBe(alias);
    expect((await redirectOf(endpoints(), alias)).headers.get('location')).toBe('https://example.org/a');
    const again = await createLink(endpoints(), { url: 'https://example.org/b', alias });
    expect(again.status).toBe(409);
    expect(again.type).toContain('application/problem+json');
    expect(again.body.code).toBe('ALIAS_TAKEN');
    expect((await redirectOf(endpoints(), alias)).headers.get('location')).toBe('https://example.org/a');
  });

  it('redirects with 301 when the link asks for it, and answers 410 LINK_EXPIRED once the link expired', async () => {
    const permanent = await createLink(endpoints(), { url: 'https://example.com/moved-for-good', redirectType: 301 });
    expect(permanent.status).toBe(201);
    expect(permanent.body.redirectType).toBe(301);
    const moved = await redirectOf(endpoints(), permanent.body.code as string);
    expect(moved.status).toBe(301);
    expect(moved.headers.get('location')).toBe('https://example.com/moved-for-good');

    const expiresAt = new Date(Date.now() + 2500).toISOString();
    const shortLived = await createLink(endpoints(), { url: 'https://example.com/flash-sale', expiresAt });
    expect(shortLived.status).toBe(201);
    expect(shortLived.body.expiresAt).toBe(expiresAt);
    const code = shortLived.body.code as string;
    expect((await redirectOf(endpoints(), code)).status).toBe(302); // now cached in L1 and Redis
    await new Promise((r) => setTimeout(r, Date.parse(expiresAt) - Date.now() + 100));
    const gone = await redirectOf(endpoints(), code);
    expect(gone.status).toBe(410);
    expect(gone.headers.get('content-type')).toContain('application/problem+json');
    expect(((await gone.json()) as { code: string }).code).toBe('LINK_EXPIRED');

    const bad = await createLink(endpoints(), { url: 'https://example.com', redirectType: 307, expiresAt: 'tomorrow' });
    expect(bad.status).toBe(400);
    expect(bad.type).toContain('application/problem+json');
    expect(bad.body.code).toBe('VALIDATION_FAILED');
  });

  it('answers an unknown code with 404 problem+json, and keeps answering it from the null cache', async () => {
    const res = await redirectOf(endpoints(), 'zzzzzz9');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(((await res.json()) as { code: string }).code).toBe('LINK_NOT_FOUND');
    const before = parseMetrics(await (await fetch(`${endpoints().admin.redirect}/metrics`)).text());
    expect((await redirectOf(endpoints(), 'zzzzzz9')).status).toBe(404);
    const after = parseMetrics(await (await fetch(`${endpoints().admin.redirect}/metrics`)).text());
    const delta = (source: string) =>
      (after.get(`shortlink_redirect_lookup_total{source="${source}"}`) ?? 0) - (before.get(`shortlink_redirect_lookup_total{source="${source}"}`) ?? 0);
    // The second answer comes from a negative entry (in-process or Redis), not from the Bloom filter or a shard.
    expect(delta('l1_negative') + delta('redis_null')).toBe(1);
    expect(delta('bloom_reject') + delta('db_miss')).toBe(0);
    expect((after.get('shortlink_redirect_db_queries_total') ?? 0) - (before.get('shortlink_redirect_db_queries_total') ?? 0)).toBe(0);
  });

  it('rejects invalid input with 400 problem+json and a missing key with 401', async () => {
    const bad = await createLink(endpoints(), { url: 'javascript:alert(1)' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_URL');
    const notJson = await fetch(`${endpoints().generation}/api/v1/links`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: '{oops',
    });
    expect(notJson.status).toBe(400);
    expect(notJson.headers.get('content-type')).toContain('application/problem+json');
    const noKey = await createLink(endpoints(), { url: 'https://example.com' }, 'sl_wrong_key_123456');
    expect(noKey.status).toBe(401);
    expect(noKey.body.code).toBe('UNAUTHENTICATED');
  });

  it("reads a link back through the API, tenant-scoped: another tenant's link is a 404 both ways", async () => {
    const created = await createLink(endpoints(), { url: 'https://example.net/read-back' });
    const read = (key: string) => fetch(`${endpoints().generation}/api/v1/links/${created.body.code}`, { headers: { 'x-api-key': key } });
    const res = await read(API_KEY);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ code: created.body.code, url: 'https://example.net/read-back' });
    const otherKey = await otherTenantKey();
    const other = await read(otherKey);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { code: string }).code).toBe('LINK_NOT_FOUND');
    // Their own link is theirs, and the first tenant cannot see it either.
    const theirs = await createLink(endpoints(), { url: 'https://example.net/theirs' }, otherKey);
    expect(theirs.status).toBe(201);
    expect((await fetch(`${endpoints().generation}/api/v1/links/${theirs.body.code}`, { headers: { 'x-api-key': API_KEY } })).status).toBe(404);
  });

  it('answers /health publicly with its status only, and Prometheus metrics on each admin listener', async () => {
    const { admin, ...publicApps } = endpoints();
    for (const [app, base] of Object.entries(publicApps)) {
      const health = await fetch(`${base}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      expect((await fetch(`${base}/metrics`)).status).toBe(404);
      const metrics = await (await fetch(`${admin[app as keyof typeof admin]}/metrics`)).text();
      expect(metrics).toContain(`shortlink_process_process_cpu_user_seconds_total{app="${app}"}`);
      const details = (await (await fetch(`${admin[app as keyof typeof admin]}/health/details`)).json()) as {
        status: string;
        probes: Array<{ name: string; up: boolean }>;
      };
      expect(details.status).toBe('ok');
      expect(details.probes.length).toBeGreaterThan(0);
      expect(details.probes.every((p) => p.up)).toBe(true);
    }
    const redirectMetrics = await (await fetch(`${admin.redirect}/metrics`)).text();
    expect(redirectMetrics).toMatch(/shortlink_redirect_requests_total\{status="302",app="redirect"\} \d+/);
    expect(await (await fetch(`${admin.generation}/metrics`)).text()).toMatch(/shortlink_http_requests_total\{status="201",app="generation"\} \d+/);
  });
}
