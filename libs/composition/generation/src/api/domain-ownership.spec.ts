import { DnsResponder } from '@shortlink/testing';
import { InProcessGeneration, startGenerationInProcess } from '../testing/in-process-generation';

/**
 * A tenant's own domains over HTTP (docs/design.md, "Custom domains and TLS"), in process on the
 * embedded adapters, the DNS method against a name server of the test's own; the verifier's own runs
 * are off, so that every check here is one the test asks for.
 */
describe('domain API: POST /api/v1/domains, its ownership and its checks', () => {
  const OPERATOR = 'sl_domain_ownership_spec_operator_0123';
  let generation: InProcessGeneration;
  let dns: DnsResponder;

  beforeAll(async () => {
    dns = await DnsResponder.start();
    generation = await startGenerationInProcess(OPERATOR, {
      SHORTLINK_DOMAINS: 'go.sho.rt',
      DOMAIN_DNS_RESOLVER: dns.address,
      DOMAIN_VERIFICATION_METHODS: 'dns',
      DOMAIN_VERIFIER: 'off',
      PLAN_FREE_MAX_DOMAINS: '1',
    });
  }, 60_000);

  afterAll(async () => {
    await generation?.close();
    await dns?.close();
  });

  const call = (key: string | null, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) => generation.call(key, method, url, body);
  const newTenant = async (plan: 'free' | 'paid') =>
    (await call(OPERATOR, 'POST', '/api/v1/admin/tenants', { name: `t-${Math.random()}`, plan })).json().apiKey as string;

  it('adds a pending domain that carries no link until its TXT record proves it; then links go on it', async () => {
    const key = await newTenant('free');
    const added = await call(key, 'POST', '/api/v1/domains', { domain: 'Go.Acme.Test' });
    expect(added.statusCode).toBe(201);
    const body = added.json();
    expect(body).toMatchObject({
      domain: 'go.acme.test',
      status: 'pending',
      verifiedBy: null,
      failures: 0,
      records: { txt: { name: '_shortlink-challenge.go.acme.test', value: expect.stringMatching(/^shortlink-verification=[A-Za-z0-9_-]{32}$/) }, http: null },
      certificate: null,
    });
    expect((await call(key, 'GET', '/api/v1/domains/go.acme.test/ownership')).json()).toEqual(body);
    expect((await call(key, 'GET', '/api/v1/domains')).json().domains).toEqual([expect.objectContaining({ domain: 'go.acme.test', status: 'pending' })]);

    const refused = await call(key, 'POST', '/api/v1/links', { url: 'https://example.com/a', domain: 'go.acme.test' });
    expect(refused.statusCode).toBe(409);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.json()).toMatchObject({ code: 'DOMAIN_NOT_VERIFIED', domainStatus: 'pending', field: 'domain' });

    const stillPending = await call(key, 'POST', '/api/v1/domains/go.acme.test/ownership/check');
    expect(stillPending.statusCode).toBe(200);
    expect(stillPending.json()).toMatchObject({ status: 'pending', failures: 1, lastFailure: 'no TXT record _shortlink-challenge.go.acme.test' });

    dns.setTxt(body.records.txt.name, ['v=spf1 -all', body.records.txt.value]);
    const verified = (await call(key, 'POST', '/api/v1/domains/go.acme.test/ownership/check')).json();
    expect(verified).toMatchObject({ status: 'verified', verifiedBy: 'dns', failures: 0, lastFailure: null });
    expect(dns.asked.filter((q) => q === 'TXT _shortlink-challenge.go.acme.test')).toHaveLength(2);
    const made = await call(key, 'POST', '/api/v1/links', { url: 'https://example.com/a', domain: 'go.acme.test' });
    expect(made.statusCode).toBe(201);
    expect(made.json().shortUrl).toMatch(/^https?:\/\/go\.acme\.test\//);

    const actions = (await call(key, 'GET', '/api/v1/audit-log?action=domain')).json().entries.map((e: { action: string }) => e.action);
    expect(actions).toEqual(['domain.verified', 'domain.added']);
  });

  it('answers bad input and every refusal with a stable code', async () => {
    const key = await newTenant('free');
    const other = await newTenant('paid');
    const status = async (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, as = key) => {
      const res = await call(as, method, url, body);
      return `${res.statusCode} ${res.body ? (res.json().code ?? '') : ''}`.trim();
    };
    expect(await status('POST', '/api/v1/domains', {})).toBe('400 VALIDATION_FAILED');
    expect(await status('POST', '/api/v1/domains', { domain: 'go.bad.test', extra: 1 })).toBe('400 VALIDATION_FAILED');
    for (const domain of ['https://go.bad.test/', 'go.bad.test:8080', '127.0.0.1', 'user@go.bad.test', 'bad', 'go.bad.test.', 'x'.repeat(254)])
      expect({ domain, answer: await status('POST', '/api/v1/domains', { domain }) }).toEqual({ domain, answer: '400 VALIDATION_FAILED' });
    expect(await status('POST', '/api/v1/domains', { domain: 'go.sho.rt' })).toBe('409 DOMAIN_TAKEN');
    expect(await status('POST', '/api/v1/domains', { domain: 'links.go.sho.rt' })).toBe('409 DOMAIN_TAKEN');
    expect(await status('POST', '/api/v1/domains', { domain: 'mine.bad.test' })).toBe('201');
    expect(await status('POST', '/api/v1/domains', { domain: 'mine.bad.test' }, other)).toBe('409 DOMAIN_TAKEN');
    expect(await status('POST', '/api/v1/domains', { domain: 'second.bad.test' })).toBe('403 DOMAIN_LIMIT_REACHED');
    // Another tenant's domain is not found, whatever it asks.
    for (const [method, url] of [
      ['GET', '/api/v1/domains/mine.bad.test/ownership'],
      ['POST', '/api/v1/domains/mine.bad.test/ownership/check'],
      ['DELETE', '/api/v1/domains/mine.bad.test'],
      ['GET', '/api/v1/domains/mine.bad.test'],
    ] as const)
      expect({ url, answer: await status(method, url, undefined, other) }).toEqual({ url, answer: '404 DOMAIN_NOT_FOUND' });
    expect(await status('GET', '/api/v1/domains/not%20a%20domain/ownership')).toBe('400 VALIDATION_FAILED');
    expect(await status('POST', '/api/v1/domains', { domain: 'again.bad.test' }, null as unknown as string)).toBe('401 UNAUTHENTICATED');
    // Removed: its place under the cap is free again.
    expect(await status('DELETE', '/api/v1/domains/mine.bad.test')).toBe('204');
    expect(await status('DELETE', '/api/v1/domains/mine.bad.test')).toBe('404 DOMAIN_NOT_FOUND');
    expect(await status('POST', '/api/v1/domains', { domain: 'second.bad.test' })).toBe('201');
  });

  it('publishes the routes in the OpenAPI document', async () => {
    const doc = (await generation.app.inject({ method: 'GET', url: '/docs/openapi.json' })).json();
    expect(Object.keys(doc.paths['/api/v1/domains']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/v1/domains/{domain}/ownership'])).toEqual(['get']);
    expect(Object.keys(doc.paths['/api/v1/domains/{domain}/ownership/check'])).toEqual(['post']);
    expect(doc.components.schemas.DomainOwnership.properties).toHaveProperty('records');
    expect(doc.components.schemas.DomainSettingsEdit.properties).toHaveProperty('hsts');
  });
});
