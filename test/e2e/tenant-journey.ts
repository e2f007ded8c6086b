import { request } from 'http';
import { Endpoints, eventually } from '@shortlink/harness';
import { API_KEY, createLink, createTenant } from './support';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One API call with a key: status, parsed body and the headers the plans add. */
export async function api(base: string, method: Method, path: string, key: string | null, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(key ? { 'x-api-key': key } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies of many shapes, each checked by the assertions that read it
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {}, headers: res.headers, text };
}

/** A visit of the redirect as a browser on `host` would make it (fetch cannot set Host; node:http can). */
function visit(redirect: string, path: string, host?: string): Promise<{ status: number; location?: string; body: string }> {
  const { hostname, port } = new URL(redirect);
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, path, headers: { accept: 'text/html', ...(host ? { host } : {}) } }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (c) => (body += c))
        .on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body }));
    })
      .on('error', reject)
      .end();
  });
}

const waitPastKeyCache = () => new Promise((r) => setTimeout(r, 1200)); // each instance trusts a checked key for 1 s

/**
 * Tenants, keys and plans on every profile, as an operator and tenants use it: the admin and key APIs, scopes,
 * suspension, the free plan's limit, tenant domains, and keys that never reach the logs.
 * `logs` returns everything the apps printed so far.
 */
export function describeTenantJourney(endpoints: () => Endpoints, logs: () => string) {
  const issued: string[] = [];
  const generation = () => endpoints().generation;
  const analytics = () => endpoints().analytics;
  const newTenant = async (plan: 'free' | 'paid' = 'paid') => {
    const t = await createTenant(endpoints(), plan);
    issued.push(t.apiKey);
    return t;
  };

  describe('tenants, keys and plans', () => {
    it('lets the operator create a tenant whose first key works on both APIs and is never shown again', async () => {
      const { tenantId, apiKey } = await newTenant();
      expect(apiKey).toMatch(/^sl_[0-9A-Za-z]{32}$/);
      const link = await createLink(endpoints(), { url: 'https://example.com/tenant' }, apiKey);
      expect(link.status).toBe(201);
      expect((await api(analytics(), 'GET', `/api/v1/links/${link.body.code}/stats`, apiKey)).status).toBe(200);
      const keys = await api(generation(), 'GET', '/api/v1/keys', apiKey);
      expect(keys.body.keys).toEqual([
        expect.objectContaining({
          prefix: apiKey.slice(0, 10),
          scopes: ['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write', 'keys:write', 'conversions:write'],
          actsFor: null,
          status: 'active',
          revokedAt: null,
        }),
      ]);
      expect(keys.text).not.toContain(apiKey);
      expect((await api(generation(), 'GET', `/api/v1/admin/tenants/${tenantId}`, API_KEY)).body).toMatchObject({
        id: tenantId,
        plan: 'paid',
        status: 'active',
      });
    });

    it('answers 403 INSUFFICIENT_SCOPE for a key without the route’s scope, on both APIs', async () => {
      const { apiKey } = await newTenant();
      const reader = (await api(generation(), 'POST', '/api/v1/keys', apiKey, { name: 'reader', scopes: ['links:read'] })).body.apiKey as string;
      const analyst = (await api(generation(), 'POST', '/api/v1/keys', apiKey, { name: 'analyst', scopes: ['analytics:read'] })).body.apiKey as string;
      issued.push(reader, analyst);
      expect((await api(generation(), 'GET', '/api/v1/links', reader)).status).toBe(200);
      const refused = await api(generation(), 'POST', '/api/v1/links', reader, { url: 'https://example.com/' });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', scope: 'links:write' });
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await api(analytics(), 'GET', '/api/v1/stats/top-links', reader)).body.code).toBe('INSUFFICIENT_SCOPE');
      expect((await api(analytics(), 'GET', '/api/v1/stats/top-links', analyst)).status).toBe(200);
      expect((await api(generation(), 'GET', '/api/v1/links', analyst)).body.code).toBe('INSUFFICIENT_SCOPE');
      expect((await api(generation(), 'GET', '/api/v1/admin/tenants', apiKey)).body.code).toBe('INSUFFICIENT_SCOPE');
      expect((await api(generation(), 'POST', '/api/v1/keys', apiKey, { name: 'escalate', scopes: ['admin'] })).body.code).toBe('INSUFFICIENT_SCOPE');
    });

    it('rotates a key: the new one works, the revoked one is refused within a second on every app', async () => {
      const { apiKey: old } = await newTenant();
      const rotated = await api(generation(), 'POST', '/api/v1/keys', old, { name: 'rotated' });
      expect(rotated.status).toBe(201);
      const fresh = rotated.body.apiKey as string;
      issued.push(fresh);
      const oldId = (await api(generation(), 'GET', '/api/v1/keys', fresh)).body.keys.find((k: { name: string }) => k.name === 'first key').id;
      expect((await api(analytics(), 'GET', '/api/v1/stats/top-links', old)).status).toBe(200); // cached as valid on analytics
      expect((await api(generation(), 'DELETE', `/api/v1/keys/${oldId}`, fresh)).status).toBe(204);
      await waitPastKeyCache();
      for (const base of [generation(), analytics()]) {
        const refused = await api(base, 'GET', base === generation() ? '/api/v1/links' : '/api/v1/stats/top-links', old);
        expect(refused.status).toBe(401);
        expect(refused.body.code).toBe('UNAUTHENTICATED');
        expect(refused.headers.get('www-authenticate')).toBe('ApiKey realm="shortlink", header="x-api-key"');
        expect(refused.text).not.toContain(old);
      }
      expect((await api(generation(), 'GET', '/api/v1/links', fresh)).status).toBe(200);
      expect((await api(generation(), 'DELETE', `/api/v1/keys/${oldId}`, fresh)).body.code).toBe('KEY_NOT_FOUND');
    });

    it('refuses an expired key like an unknown one', async () => {
      const { apiKey } = await newTenant();
      const soon = new Date(Date.now() + 1500).toISOString();
      const shortLived = (await api(generation(), 'POST', '/api/v1/keys', apiKey, { name: 'short-lived', expiresAt: soon })).body.apiKey as string;
      issued.push(shortLived);
      expect((await api(generation(), 'GET', '/api/v1/links', shortLived)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1700));
      expect((await api(generation(), 'GET', '/api/v1/links', shortLived)).body.code).toBe('UNAUTHENTICATED');
    });

    it('suspends a tenant (403 TENANT_SUSPENDED on both APIs, a suspended page for its links) and reactivates it', async () => {
      const { tenantId, apiKey } = await newTenant();
      const link = await createLink(endpoints(), { url: 'https://example.com/suspended-target' }, apiKey);
      expect(link.status).toBe(201);
      const code = link.body.code as string;
      expect((await visit(endpoints().redirect, `/${code}`)).status).toBe(302);
      expect((await api(generation(), 'PATCH', `/api/v1/admin/tenants/${tenantId}`, API_KEY, { status: 'suspended' })).body.status).toBe('suspended');
      await waitPastKeyCache();
      expect((await api(generation(), 'GET', '/api/v1/links', apiKey)).body.code).toBe('TENANT_SUSPENDED');
      expect((await api(analytics(), 'GET', '/api/v1/stats/top-links', apiKey)).body.code).toBe('TENANT_SUSPENDED');
      // The redirect reads suspensions every second (REDIRECT_TENANT_REFRESH_MS); the cached link itself is unchanged.
      const suspended = await eventually(
        'the suspended page',
        async () => {
          const page = await visit(endpoints().redirect, `/${code}`);
          return page.status === 403 && page;
        },
        5000,
      );
      expect(suspended.location).toBeUndefined();
      expect(suspended.body).toContain('This link is unavailable');
      expect(suspended.body).not.toContain('suspended-target');
      await api(generation(), 'PATCH', `/api/v1/admin/tenants/${tenantId}`, API_KEY, { status: 'active' });
      await waitPastKeyCache();
      expect((await api(generation(), 'GET', '/api/v1/links', apiKey)).status).toBe(200);
      await eventually('the redirect again', async () => (await visit(endpoints().redirect, `/${code}`)).status === 302, 5000);
    });

    it('holds a free key to 100 requests a minute across both APIs, with RateLimit headers and 429 Retry-After', async () => {
      const { apiKey } = await newTenant('free');
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 101; i++) {
        last = await api(i % 2 ? analytics() : generation(), 'GET', i % 2 ? '/api/v1/stats/top-links' : '/api/v1/links', apiKey);
        statuses.push(last.status);
        if (i === 0) expect([last.headers.get('ratelimit-limit'), last.headers.get('ratelimit-remaining')]).toEqual(['100', '99']);
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(100);
      expect(statuses[100]).toBe(429);
      expect(last!.body.code).toBe('RATE_LIMITED');
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(last!.headers.get('ratelimit-remaining')).toBe('0');
      // Another key of the same plan has its own window.
      expect((await api(generation(), 'GET', '/api/v1/links', (await newTenant('free')).apiKey)).status).toBe(200);
    });

    it('gives a tenant its own domain; the same code may live on two domains; others may not use it', async () => {
      const a = await newTenant();
      const b = await newTenant();
      const domain = `go-${Date.now().toString(36)}.tenant.example`;
      expect((await api(generation(), 'POST', `/api/v1/admin/tenants/${a.tenantId}/domains`, API_KEY, { domain })).status).toBe(201);
      expect((await api(generation(), 'POST', `/api/v1/admin/tenants/${b.tenantId}/domains`, API_KEY, { domain })).body.code).toBe('DOMAIN_TAKEN');
      const alias = `dual-${Date.now().toString(36)}`;
      const own = await createLink(endpoints(), { url: 'https://example.com/own', alias, domain }, a.apiKey);
      expect(own.status).toBe(201);
      expect(own.body).toMatchObject({ domain, shortUrl: `https://${domain}/${alias}` });
      expect((await createLink(endpoints(), { url: 'https://example.com/shared', alias }, b.apiKey)).status).toBe(201);
      // The redirect resolves by Host: the tenant's domain (once it has read it, within a second) and the default one.
      await eventually(
        `${domain}/${alias} resolved on its domain`,
        async () => (await visit(endpoints().redirect, `/${alias}`, domain)).location === 'https://example.com/own',
        5000,
      );
      expect((await visit(endpoints().redirect, `/${alias}`, domain.toUpperCase())).location).toBe('https://example.com/own');
      expect((await visit(endpoints().redirect, `/${alias}`)).location).toBe('https://example.com/shared');
      const foreign = await createLink(endpoints(), { url: 'https://example.com/x', domain }, b.apiKey);
      expect(foreign.status).toBe(403);
      expect(foreign.body.code).toBe('DOMAIN_NOT_ALLOWED');
    });

    it('never writes an API key to the logs', () => {
      expect(issued.length).toBeGreaterThan(5);
      const printed = logs();
      for (const key of [API_KEY, ...issued]) expect(printed).not.toContain(key);
      for (const key of issued) expect(printed).not.toContain(key.slice(10)); // not even the secret part alone
    });
  });
}
