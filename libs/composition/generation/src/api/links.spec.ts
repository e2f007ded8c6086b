import QRCode from 'qrcode';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { InProcessGeneration, startGenerationInProcess } from '../testing/in-process-generation';

/** The link API in process (Fastify's inject, no socket) on the embedded adapters of a temp dir. */
describe('LinksController', () => {
  const KEY = 'sl_controller_spec_key_0123456789';
  let generation: InProcessGeneration;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    generation = await startGenerationInProcess(KEY);
    app = generation.app;
  }, 60_000);

  afterAll(() => generation?.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, headers: Record<string, string> = {}) =>
    generation.call(KEY, method, url, body, headers);

  it('creates with 201, an ETag and a Location, and shows every option', async () => {
    const res = await call('POST', '/api/v1/links', { url: 'https://example.com/a', title: 'A', tags: ['x'], password: 'secret-1', utm: { source: 'news' } });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      url: 'https://example.com/a',
      shortUrl: `https://sho.rt/${body.code}`,
      title: 'A',
      tags: ['x'],
      passwordProtected: true,
      utm: { source: 'news' },
      version: 1,
      moderation: { state: 'clear', reason: null },
    });
    expect(body).not.toHaveProperty('password');
    expect(res.headers.etag).toBe('"1"');
    expect(res.headers.location).toBe(`/api/v1/links/${body.code}`);
  });

  it('refuses unknown fields, wrong types and wrong content types with problem+json, and stores nothing', async () => {
    const before = (await call('GET', '/api/v1/links?limit=100')).json().links.length;
    for (const [body, code] of [
      [{ url: 'https://example.com', color: 'red' }, 'VALIDATION_FAILED'],
      [{ url: 42 }, 'VALIDATION_FAILED'],
      [{}, 'VALIDATION_FAILED'],
      [{ url: 'ftp://x.example' }, 'INVALID_URL'],
    ] as const) {
      const res = await call('POST', '/api/v1/links', body);
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().code).toBe(code);
    }
    const text = await app.inject({
      method: 'POST',
      url: '/api/v1/links',
      headers: { 'x-api-key': KEY, 'content-type': 'text/plain' },
      payload: 'https://example.com',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const deep = await app.inject({
      method: 'POST',
      url: '/api/v1/links',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      payload: '{"url":' + '['.repeat(40) + ']'.repeat(40) + '}',
    });
    expect(deep.statusCode).toBe(400);
    expect(deep.json().code).toBe('JSON_TOO_DEEP');
    expect((await call('GET', '/api/v1/links?limit=100')).json().links.length).toBe(before);
  });

  it('edits with If-Match, answers 412 on a stale one, and deletes', async () => {
    const code = (await call('POST', '/api/v1/links', { url: 'https://example.com/e' })).json().code;
    const edited = await call('PATCH', `/api/v1/links/${code}`, { url: 'https://example.com/f', title: null, maxClicks: 3 }, { 'if-match': '"1"' });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toMatchObject({ url: 'https://example.com/f', maxClicks: 3, version: 2 });
    expect(edited.headers.etag).toBe('"2"');
    const stale = await call('PATCH', `/api/v1/links/${code}`, { title: 'late' }, { 'if-match': '"1"' });
    expect(stale.statusCode).toBe(412);
    expect(stale.json()).toMatchObject({ code: 'PRECONDITION_FAILED', currentVersion: 2 });
    expect((await call('PATCH', `/api/v1/links/${code}`, { code: 'other' })).statusCode).toBe(400);
    expect((await call('DELETE', `/api/v1/links/${code}`, undefined, { 'if-match': '"1"' })).statusCode).toBe(412);
    expect((await call('DELETE', `/api/v1/links/${code}`, undefined, { 'if-match': '"2"' })).statusCode).toBe(204);
    expect((await call('GET', `/api/v1/links/${code}`)).statusCode).toBe(404);
  });

  it('draws the short URL marked as a scan (`/~`) as a QR code, SVG or PNG', async () => {
    const created = (await call('POST', '/api/v1/links', { url: 'https://example.com/qr' })).json();
    const code = created.code;
    const svg = await call('GET', `/api/v1/links/${code}/qr`);
    expect(svg.statusCode).toBe(200);
    expect(svg.headers['content-type']).toContain('image/svg+xml');
    expect(svg.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="256"/);
    // The drawing is a function of the text: the same options draw the marked URL, not the bare one.
    const options = { width: 256, margin: 2, errorCorrectionLevel: 'M' as const, type: 'svg' as const };
    expect(svg.body).toBe(await QRCode.toString(`${created.shortUrl}/~`, options));
    expect(svg.body).not.toBe(await QRCode.toString(created.shortUrl, options));
    const png = await call('GET', `/api/v1/links/${code}/qr?format=png&size=128`);
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.rawPayload.subarray(1, 4).toString()).toBe('PNG');
    expect((await call('GET', `/api/v1/links/${code}/qr?format=gif`)).statusCode).toBe(400);
  });

  it("lists the tenant's tags once each, in order, and only its own", async () => {
    await call('POST', '/api/v1/links', { url: 'https://example.com/t1', tags: ['zebra', 'apple'] });
    await call('POST', '/api/v1/links', { url: 'https://example.com/t2', tags: ['apple', 'mango'] });
    const other = (await call('POST', '/api/v1/admin/tenants', { name: 'other', plan: 'free' })).json().apiKey as string;
    await generation.call(other, 'POST', '/api/v1/links', { url: 'https://example.com/t3', tags: ['theirs'] });
    const res = await call('GET', '/api/v1/tags');
    expect(res.statusCode).toBe(200);
    expect(res.json().tags).toEqual(expect.arrayContaining(['apple', 'mango', 'zebra']));
    expect(res.json().tags).not.toContain('theirs');
    expect([...res.json().tags].sort()).toEqual(res.json().tags);
    expect((await generation.call(other, 'GET', '/api/v1/tags')).json()).toEqual({ tags: ['theirs'] });
  });

  it('switches conversion tracking for a tag named with any of its characters (URL-encoded), with links:write', async () => {
    const made = await call('POST', '/api/v1/links', { url: 'https://example.com/q1', tags: ['q1/2027: ads'] });
    expect(made.statusCode).toBe(201);
    const path = `/api/v1/tags/${encodeURIComponent('q1/2027: ads')}`;
    expect((await call('GET', path)).json()).toEqual({ tag: 'q1/2027: ads', trackConversions: false, conversionParam: 'sl_cid' });
    const on = await call('PATCH', path, { trackConversions: true, conversionParam: 'cid' });
    expect(on.statusCode).toBe(200);
    expect(on.json()).toEqual({ tag: 'q1/2027: ads', trackConversions: true, conversionParam: 'cid', linksUpdated: 1 });
    expect((await call('GET', path)).json()).toMatchObject({ trackConversions: true, conversionParam: 'cid' });
    const readOnly = (await call('POST', '/api/v1/keys', { name: 'reader', scopes: ['links:read'] })).json().apiKey as string;
    const refused = await generation.call(readOnly, 'PATCH', path, { trackConversions: false });
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    expect((await generation.call(readOnly, 'GET', path)).statusCode).toBe(200);
  });

  it('publishes every route in its OpenAPI document', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(
      Object.keys(doc.paths)
        .filter((p) => p.startsWith('/api/v1/links'))
        .sort(),
    ).toEqual(['/api/v1/links', '/api/v1/links/batch', '/api/v1/links/bulk', '/api/v1/links/{code}', '/api/v1/links/{code}/qr']);
    expect(doc.paths['/api/v1/links'].post.description).toContain('`links:write` scope');
    expect(doc.paths['/api/v1/links'].post.responses['201'].headers['RateLimit-Remaining']).toBeDefined();
    expect(Object.keys(doc.paths['/api/v1/links/{code}']).sort()).toEqual(['delete', 'get', 'patch']);
    expect(doc.paths['/api/v1/links'].post.responses['400'].content['application/problem+json']).toBeDefined();
    expect(doc.components.schemas.LinkCreation.additionalProperties).toBe(false);
    // App targets (deep links) in every shape a link is written and read in.
    expect(doc.components.schemas.AppTargets.properties).toHaveProperty('ios');
    for (const schema of ['LinkCreation', 'LinkEdit', 'Link'])
      expect({ schema, fields: Object.keys(doc.components.schemas[schema].properties) }).toEqual({ schema, fields: expect.arrayContaining(['appTargets']) });
  });
});
