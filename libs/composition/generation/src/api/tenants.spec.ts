import { InProcessGeneration, startGenerationInProcess } from '../testing/in-process-generation';

/** Admin, keys, scopes and plans in process (Fastify's inject) on the embedded adapters of a temp dir. */
describe('tenant API: admin, keys, scopes, plans', () => {
  const OPERATOR = 'sl_tenant_api_spec_operator_0123456789';
  let generation: InProcessGeneration;

  beforeAll(async () => {
    generation = await startGenerationInProcess(OPERATOR, { PLAN_FREE_REQUESTS_PER_MINUTE: '5', PLAN_FREE_MAX_KEYS: '3', AUTH_FAILURES_PER_MINUTE: '3' });
  }, 60_000);

  afterAll(() => generation?.close());

  const call = (key: string | null, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, body?: unknown) =>
    generation.call(key, method, url, body);
  const newTenant = async (plan = 'paid') => (await call(OPERATOR, 'POST', '/api/v1/admin/tenants', { name: `t-${Math.random()}`, plan })).json();

  it('lets the operator create a tenant whose first key is shown once and works', async () => {
    const res = await call(OPERATOR, 'POST', '/api/v1/admin/tenants', { name: 'Acme', plan: 'paid' });
    expect(res.statusCode).toBe(201);
    const { tenant, apiKey, key } = res.json();
    expect(tenant).toMatchObject({ name: 'Acme', plan: 'paid', status: 'active' });
    expect(key).toMatchObject({
      prefix: apiKey.slice(0, 10),
      scopes: ['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write', 'keys:write', 'conversions:write'],
      revokedAt: null,
    });
    expect((await call(apiKey, 'POST', '/api/v1/links', { url: 'https://example.com/acme' })).statusCode).toBe(201);
    const listed = (await call(apiKey, 'GET', '/api/v1/keys')).json().keys;
    expect(listed).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(apiKey);
    expect((await call(OPERATOR, 'GET', `/api/v1/admin/tenants/${tenant.id}`)).json()).toEqual(tenant);
  });

  it('answers 403 INSUFFICIENT_SCOPE for a key without the route’s scope, 401 without a key', async () => {
    const { apiKey } = await newTenant();
    const forbidden = await call(apiKey, 'GET', '/api/v1/admin/tenants');
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE', scope: 'admin' });
    const readOnly = (await call(apiKey, 'POST', '/api/v1/keys', { name: 'reader', scopes: ['links:read'] })).json().apiKey;
    expect((await call(readOnly, 'GET', '/api/v1/links')).statusCode).toBe(200);
    expect((await call(readOnly, 'POST', '/api/v1/links', { url: 'https://example.com/' })).json().code).toBe('INSUFFICIENT_SCOPE');
    expect((await call(apiKey, 'POST', '/api/v1/keys', { name: 'escalate', scopes: ['admin'] })).json().code).toBe('INSUFFICIENT_SCOPE');
    expect((await call(null, 'GET', '/api/v1/keys')).statusCode).toBe(401);
  });

  it('rotates: a new key works, the revoked one gets 401, revoking twice is a 404', async () => {
    const { apiKey: old, key } = await newTenant();
    const fresh = (await call(old, 'POST', '/api/v1/keys', { name: 'rotated' })).json();
    expect((await call(fresh.apiKey, 'DELETE', `/api/v1/keys/${key.id}`)).statusCode).toBe(204);
    await new Promise((r) => setTimeout(r, 1100)); // the key cache's bound
    const refused = await call(old, 'GET', '/api/v1/links');
    expect(refused.statusCode).toBe(401);
    expect(refused.body).not.toContain(old);
    expect((await call(fresh.apiKey, 'GET', '/api/v1/links')).statusCode).toBe(200);
    expect((await call(fresh.apiKey, 'DELETE', `/api/v1/keys/${key.id}`)).json().code).toBe('KEY_NOT_FOUND');
    expect((await call(fresh.apiKey, 'GET', '/api/v1/keys')).json().keys.find((k: { id: string }) => k.id === key.id).revokedAt).not.toBeNull();
  });

  it('lets a key revoke only keys whose scopes it holds: a links:write and keys:write key cannot revoke the operator key', async () => {
    const operatorKeyId = (await call(OPERATOR, 'GET', '/api/v1/keys')).json().keys.find((k: { name: string }) => k.name === 'bootstrap').id;
    const writer = (await call(OPERATOR, 'POST', '/api/v1/keys', { name: 'writer', scopes: ['links:write', 'keys:write'] })).json();
    const refused = await call(writer.apiKey, 'DELETE', `/api/v1/keys/${operatorKeyId}`);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      scopes: ['links:read', 'analytics:read', 'audit:read', 'members:write', 'conversions:write', 'admin'],
    });
    // Without keys:write, no key management at all.
    const linksOnly = (await call(OPERATOR, 'POST', '/api/v1/keys', { name: 'links only', scopes: ['links:write'] })).json();
    expect((await call(linksOnly.apiKey, 'DELETE', `/api/v1/keys/${linksOnly.key.id}`)).json()).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      scope: 'keys:write',
    });
    await new Promise((r) => setTimeout(r, 1100)); // past the key cache: the operator key was not revoked
    expect((await call(OPERATOR, 'GET', '/api/v1/admin/tenants?limit=1')).statusCode).toBe(200);
    expect((await call(writer.apiKey, 'DELETE', `/api/v1/keys/${writer.key.id}`)).statusCode).toBe(204); // its own scopes: yes
  });

  it('caps active keys per tenant by plan with 403 KEY_LIMIT_REACHED; a revocation makes room', async () => {
    const { apiKey } = await newTenant('free');
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await call(apiKey, 'POST', '/api/v1/keys', { name: `k${i}` }));
    expect(made.map((r) => r.statusCode)).toEqual([201, 201, 403]);
    expect(made[2].json()).toMatchObject({ code: 'KEY_LIMIT_REACHED', limit: 3 });
    expect((await call(apiKey, 'DELETE', `/api/v1/keys/${made[0].json().key.id}`)).statusCode).toBe(204);
    expect((await call(made[1].json().apiKey, 'POST', '/api/v1/keys', { name: 'k3' })).statusCode).toBe(201);
  });

  it('throttles failed key checks per address, never a valid key from that address', async () => {
    const { apiKey } = await newTenant();
    const from = (key: string) => generation.app.inject({ method: 'GET', url: '/api/v1/keys', headers: { 'x-api-key': key }, remoteAddress: '192.0.2.77' });
    const guesses = [];
    for (let i = 0; i < 5; i++) guesses.push((await from(`sl_guess_${i}_0000000000000000`)).statusCode);
    expect(guesses).toEqual([401, 401, 401, 429, 429]);
    expect((await from(apiKey)).statusCode).toBe(200);
    const again = await from('sl_guess_again_000000000000');
    expect(again.statusCode).toBe(429);
    expect(again.json().code).toBe('RATE_LIMITED');
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('suspends a tenant (403 TENANT_SUSPENDED) and reactivates it', async () => {
    const { tenant, apiKey } = await newTenant();
    expect((await call(OPERATOR, 'PATCH', `/api/v1/admin/tenants/${tenant.id}`, { status: 'suspended' })).json().status).toBe('suspended');
    await new Promise((r) => setTimeout(r, 1100));
    expect((await call(apiKey, 'GET', '/api/v1/links')).json().code).toBe('TENANT_SUSPENDED');
    await call(OPERATOR, 'PATCH', `/api/v1/admin/tenants/${tenant.id}`, { status: 'active' });
    await new Promise((r) => setTimeout(r, 1100));
    expect((await call(apiKey, 'GET', '/api/v1/links')).statusCode).toBe(200);
    expect((await call(OPERATOR, 'PATCH', `/api/v1/admin/tenants/${tenant.id}`, { status: 'gone' })).json().code).toBe('VALIDATION_FAILED');
  });

  it('enforces the free plan per tenant, across its keys, with RateLimit headers and 429 Retry-After', async () => {
    const { apiKey } = await newTenant('free');
    const second = (await call(apiKey, 'POST', '/api/v1/keys', { name: 'second' })).json().apiKey; // the tenant's first request
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await call(i % 2 ? second : apiKey, 'GET', '/api/v1/links'));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 429]);
    expect(answers.map((a) => a.headers['ratelimit-remaining'])).toEqual(['3', '2', '1', '0', '0']);
    expect(answers[0].headers['ratelimit-limit']).toBe('5');
    const refused = answers[4];
    expect(refused.json()).toMatchObject({ code: 'RATE_LIMITED' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(58);
    expect(Number(refused.headers['ratelimit-reset'])).toBe(Number(refused.headers['retry-after']));
  });

  it('gives domains to tenants; a tenant creates links on its own domain only', async () => {
    const a = await newTenant();
    const b = await newTenant();
    const added = await call(OPERATOR, 'POST', `/api/v1/admin/tenants/${a.tenant.id}/domains`, { domain: 'Go.Acme-Spec.example' });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toEqual({ domain: 'go.acme-spec.example' });
    expect((await call(OPERATOR, 'POST', `/api/v1/admin/tenants/${b.tenant.id}/domains`, { domain: 'go.acme-spec.example' })).json().code).toBe('DOMAIN_TAKEN');
    expect((await call(OPERATOR, 'GET', `/api/v1/admin/tenants/${a.tenant.id}/domains`)).json()).toEqual({ domains: ['go.acme-spec.example'] });
    const onOwn = await call(a.apiKey, 'POST', '/api/v1/links', { url: 'https://example.com/x', domain: 'go.acme-spec.example', alias: 'same-code' });
    expect(onOwn.json()).toMatchObject({ domain: 'go.acme-spec.example', shortUrl: 'https://go.acme-spec.example/same-code' });
    expect((await call(b.apiKey, 'POST', '/api/v1/links', { url: 'https://example.com/x', domain: 'go.acme-spec.example' })).json().code).toBe(
      'DOMAIN_NOT_ALLOWED',
    );
    expect((await call(b.apiKey, 'POST', '/api/v1/links', { url: 'https://example.com/x', alias: 'same-code' })).statusCode).toBe(201);
    expect((await call(OPERATOR, 'DELETE', `/api/v1/admin/tenants/${a.tenant.id}/domains/go.acme-spec.example`)).statusCode).toBe(204);
    expect((await call(OPERATOR, 'DELETE', `/api/v1/admin/tenants/${a.tenant.id}/domains/go.acme-spec.example`)).json().code).toBe('DOMAIN_NOT_FOUND');
  });

  it('lets the operator ban and clear any tenant’s link, with a reason', async () => {
    const { apiKey } = await newTenant();
    const link = (await call(apiKey, 'POST', '/api/v1/links', { url: 'https://example.com/phish' })).json();
    expect((await call(OPERATOR, 'PUT', `/api/v1/admin/links/${link.code}/moderation`, { moderation: 'banned' })).json().code).toBe('VALIDATION_FAILED');
    const banned = await call(OPERATOR, 'PUT', `/api/v1/admin/links/${link.code}/moderation`, { moderation: 'banned', reason: 'phishing report #12' });
    expect(banned.json().moderation).toEqual({ state: 'banned', reason: 'phishing report #12', source: 'operator' });
    expect((await call(apiKey, 'GET', `/api/v1/links/${link.code}`)).json().moderation.state).toBe('banned');
    expect((await call(OPERATOR, 'PUT', `/api/v1/admin/links/${link.code}/moderation`, { moderation: 'clear' })).json().moderation).toEqual({
      state: 'clear',
      reason: null,
      source: 'operator',
    });
  });

  it('pages through tenants by id', async () => {
    await newTenant();
    await newTenant();
    const first = (await call(OPERATOR, 'GET', '/api/v1/admin/tenants?limit=2')).json();
    expect(first.tenants).toHaveLength(2);
    expect(first.nextCursor).toBe(first.tenants[1].id);
    const second = (await call(OPERATOR, 'GET', `/api/v1/admin/tenants?limit=2&cursor=${first.nextCursor}`)).json();
    expect(second.tenants[0].id > first.nextCursor).toBe(true);
  });
});
