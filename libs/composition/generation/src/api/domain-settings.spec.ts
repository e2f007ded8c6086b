import { LINK_CHANGE_FEED, LinkChange, LinkChangeFeed } from '@shortlink/links-domain';
import { InProcessGeneration, startGenerationInProcess } from '../testing/in-process-generation';

/** Domain settings over HTTP (docs/design.md, "Domain settings"), in process on the embedded adapters. */
/** A 1×1 PNG, base64. */
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('domain settings API: GET and PATCH /api/v1/domains/{domain}', () => {
  const OPERATOR = 'sl_domains_api_spec_operator_0123456789';
  let generation: InProcessGeneration;
  let told: LinkChange[];
  let unsubscribe: () => Promise<void>;

  beforeAll(async () => {
    generation = await startGenerationInProcess(OPERATOR, { SHORTLINK_DOMAINS: 'go.sho.rt' });
    told = [];
    const feed = generation.app.get<LinkChangeFeed>(LINK_CHANGE_FEED, { strict: false });
    unsubscribe = await feed.subscribe(
      (change) => told.push(change),
      () => undefined,
    );
  }, 60_000);

  afterAll(async () => {
    await unsubscribe?.();
    await generation?.close();
  });

  const call = (key: string | null, method: 'GET' | 'PATCH' | 'POST', url: string, body?: unknown, headers?: Record<string, string>) =>
    generation.call(key, method, url, body, headers);
  /** A tenant of its own with one domain of its own. */
  const tenantWithDomain = async () => {
    const { tenant, apiKey } = (await call(OPERATOR, 'POST', '/api/v1/admin/tenants', { name: `t-${Math.random()}`, plan: 'paid' })).json();
    const domain = `links-${tenant.id.slice(0, 8).toLowerCase()}.example`;
    expect((await call(OPERATOR, 'POST', `/api/v1/admin/tenants/${tenant.id}/domains`, { domain })).statusCode).toBe(201);
    return { apiKey: apiKey as string, domain };
  };

  it('reads the defaults, applies a PATCH (ETag = version), tells the redirect instances, and null puts a default back', async () => {
    const { apiKey, domain } = await tenantWithDomain();
    const initial = await call(apiKey, 'GET', `/api/v1/domains/${domain}`);
    expect(initial.statusCode).toBe(200);
    expect(initial.headers.etag).toBe('"0"');
    expect(initial.json()).toEqual({
      domain,
      shared: false,
      version: 0,
      updatedAt: null,
      notFoundRedirect: null,
      pathNotFoundRedirect: null,
      rootRedirect: null,
      expiredRedirect: null,
      branding: null,
      robots: 'disallow',
      appleAppSiteAssociation: null,
      androidAssetLinks: null,
      hsts: null,
      trackConversions: false,
      conversionParam: 'sl_cid',
      status: 'verified',
    });
    const patched = await call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, {
      notFoundRedirect: 'https://acme.example/missing',
      pathNotFoundRedirect: 'https://acme.example/no-such-page',
      branding: { name: 'Acme', accentColor: '#FF6600' },
      robots: 'allow',
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.headers.etag).toBe('"1"');
    expect(patched.json()).toMatchObject({
      version: 1,
      notFoundRedirect: 'https://acme.example/missing',
      pathNotFoundRedirect: 'https://acme.example/no-such-page',
      branding: { name: 'Acme', logo: null, accentColor: '#ff6600' },
      robots: 'allow',
    });
    expect(told).toContainEqual({ domain, code: '', version: 1 });
    expect((await call(apiKey, 'GET', `/api/v1/domains/${domain}`)).json()).toEqual(patched.json());
    const reset = (await call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, { notFoundRedirect: null, robots: null })).json();
    expect(reset).toMatchObject({ version: 2, notFoundRedirect: null, robots: 'disallow', branding: { name: 'Acme' } });
    // Conversion tracking for every link of the domain (docs/analytics.md, "Conversions").
    const tracking = await call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, { trackConversions: true, conversionParam: 'cid' });
    expect(tracking.json()).toMatchObject({ version: 3, trackConversions: true, conversionParam: 'cid' });
    expect(told).toContainEqual({ domain, code: '', version: 3 });
    const listed = (await call(apiKey, 'GET', '/api/v1/domains')).json().domains;
    expect(listed.map((d: { domain: string; version: number }) => [d.domain, d.version])).toEqual([[domain, 3]]);
  });

  it('keeps a logo as the image itself (a data: URI in canonical base64), shown in the settings and removed with null', async () => {
    const { apiKey, domain } = await tenantWithDomain();
    const patched = await call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, {
      branding: { name: 'Acme', logo: `data:image/png;base64,${PNG_1PX.slice(0, 40)}\n${PNG_1PX.slice(40)}` },
    });
    expect(patched.json()).toMatchObject({ branding: { name: 'Acme', logo: `data:image/png;base64,${PNG_1PX}`, accentColor: null } });
    const removed = await call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, { branding: { name: 'Acme', logo: null } });
    expect(removed.json().branding).toEqual({ name: 'Acme', logo: null, accentColor: null });
  });

  it('answers 412 to a stale If-Match and keeps the settings', async () => {
    const { apiKey, domain } = await tenantWithDomain();
    await call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, { robots: 'allow' });
    const stale = await call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, { robots: 'disallow' }, { 'if-match': '"0"' });
    expect(stale.statusCode).toBe(412);
    expect(stale.json()).toMatchObject({ code: 'PRECONDITION_FAILED', currentVersion: 1 });
    expect((await call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, { robots: 'disallow' }, { 'if-match': '"1"' })).json().version).toBe(2);
  });

  it('refuses bad input with problem+json and a stable code naming the field', async () => {
    const { apiKey, domain } = await tenantWithDomain();
    const refused = async (body: unknown) => {
      const res = await call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, body);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      return [res.statusCode, res.json().code, res.json().field ?? res.json().reason];
    };
    // The URL policy of links: its codes and reasons.
    expect(await refused({ notFoundRedirect: 'javascript:alert(1)' })).toEqual([400, 'INVALID_URL', 'notFoundRedirect']);
    expect(await refused({ pathNotFoundRedirect: 'javascript:alert(1)' })).toEqual([400, 'INVALID_URL', 'pathNotFoundRedirect']);
    expect(await refused({ rootRedirect: 'http://127.0.0.1/admin' })).toEqual([400, 'URL_NOT_ALLOWED', 'ip-literal']);
    expect(await refused({ branding: { accentColor: 'red;x:url(x)' } })).toEqual([400, 'VALIDATION_FAILED', 'branding.accentColor']);
    expect(await refused({ branding: { logoUrl: 'https://cdn.example/logo.png' } })).toEqual([400, 'VALIDATION_FAILED', 'branding.logoUrl']);
    // A logo is the image itself, a raster one, of the type it names, small.
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>').toString('base64');
    expect(await refused({ branding: { logo: `data:image/svg+xml;base64,${svg}` } })).toEqual([400, 'VALIDATION_FAILED', 'branding.logo']);
    expect(await refused({ branding: { logo: `data:image/jpeg;base64,${PNG_1PX}` } })).toEqual([400, 'VALIDATION_FAILED', 'branding.logo']);
    expect(await refused({ branding: { logo: 'https://cdn.example/logo.png' } })).toEqual([400, 'VALIDATION_FAILED', 'branding.logo']);
    const big = Buffer.concat([Buffer.from(PNG_1PX, 'base64'), Buffer.alloc(33 * 1024)]).toString('base64');
    expect(await refused({ branding: { logo: `data:image/png;base64,${big}` } })).toEqual([400, 'VALIDATION_FAILED', 'branding.logo']);
    expect(await refused({ appleAppSiteAssociation: { applinks: { details: [{ appID: 'nope', paths: ['*'] }] } } })).toEqual([
      400,
      'VALIDATION_FAILED',
      'appleAppSiteAssociation.applinks.details[0]',
    ]);
    expect(
      await refused({
        androidAssetLinks: [{ relation: ['x'], target: { namespace: 'android_app', package_name: 'com.acme', sha256_cert_fingerprints: ['AB'] } }],
      }),
    ).toEqual([400, 'VALIDATION_FAILED', 'androidAssetLinks[0].target.sha256_cert_fingerprints']);
    expect(await refused({ conversionParam: '1bad' })).toEqual([400, 'VALIDATION_FAILED', 'conversionParam']);
    const unknownField = await call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, { colour: 'red' });
    expect([unknownField.statusCode, unknownField.json().code]).toEqual([400, 'VALIDATION_FAILED']);
    expect((await call(apiKey, 'GET', `/api/v1/domains/${domain}`)).json().version).toBe(0);
  });

  it('hides other tenants’ domains (404 DOMAIN_NOT_FOUND) and keeps the service’s domains to operators', async () => {
    const a = await tenantWithDomain();
    const b = await tenantWithDomain();
    const foreign = await call(b.apiKey, 'GET', `/api/v1/domains/${a.domain}`);
    expect([foreign.statusCode, foreign.json().code]).toEqual([404, 'DOMAIN_NOT_FOUND']);
    expect((await call(b.apiKey, 'PATCH', `/api/v1/domains/${a.domain}`, { robots: 'allow' })).statusCode).toBe(404);
    const shared = await call(a.apiKey, 'PATCH', '/api/v1/domains/go.sho.rt', { robots: 'allow' });
    expect([shared.statusCode, shared.json().code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    const operator = await call(OPERATOR, 'PATCH', '/api/v1/domains/sho.rt', { branding: { name: 'Sho.rt' } });
    expect(operator.statusCode).toBe(200);
    expect(operator.json()).toMatchObject({ domain: 'sho.rt', shared: true, branding: { name: 'Sho.rt' } });
    // Every tenant's links are on a shared domain: tracking is each tenant's choice, on its links or its own domains.
    const everyone = await call(OPERATOR, 'PATCH', '/api/v1/domains/sho.rt', { trackConversions: true });
    expect([everyone.statusCode, everyone.json().code, everyone.json().field]).toEqual([400, 'VALIDATION_FAILED', 'trackConversions']);
    expect((await call(null, 'GET', '/api/v1/domains/sho.rt')).statusCode).toBe(401);
  });

  it('takes a link’s crawlable flag on create and edit, shows it, and tells the redirect instances of a new crawlable link', async () => {
    const created = await call(OPERATOR, 'POST', '/api/v1/links', { url: 'https://example.com/crawl', crawlable: true });
    expect(created.statusCode).toBe(201);
    const { code, crawlable } = created.json();
    expect(crawlable).toBe(true);
    expect(told).toContainEqual({ domain: 'sho.rt', code, version: 1 });
    const edited = await call(OPERATOR, 'PATCH', `/api/v1/links/${code}`, { crawlable: false });
    expect(edited.json().crawlable).toBe(false);
    expect((await call(OPERATOR, 'POST', '/api/v1/links', { url: 'https://example.com/c2', crawlable: 'yes' })).json().code).toBe('VALIDATION_FAILED');
  });

  it('publishes the routes in the OpenAPI document', async () => {
    const doc = (await generation.app.inject({ method: 'GET', url: '/docs/openapi.json' })).json();
    expect(Object.keys(doc.paths['/api/v1/domains/{domain}']).sort()).toEqual(['delete', 'get', 'patch']);
    expect(doc.components.schemas.DomainSettingsEdit.properties).toHaveProperty('appleAppSiteAssociation');
  });
});
