import { InProcessGeneration, startGenerationInProcess } from '../testing/in-process-generation';

/**
 * What an import carries and an export gives (docs/design.md, "Import and export"), in process on
 * the embedded adapters: password hashes only through the export route, status and legacy codes
 * on create and batch.
 */
describe('export and import fields of the link API', () => {
  const OPERATOR = 'sl_export_spec_operator_0123456789';
  let g: InProcessGeneration;

  beforeAll(async () => {
    g = await startGenerationInProcess(OPERATOR);
  }, 60_000);

  afterAll(() => g?.close());

  const newKey = async (): Promise<string> =>
    (await g.call(OPERATOR, 'POST', '/api/v1/admin/tenants', { name: `t-${Math.random()}`, plan: 'paid' })).json().apiKey;
  const scopedKey = async (key: string, scopes: string[]): Promise<string> =>
    (await g.call(key, 'POST', '/api/v1/keys', { name: scopes.join('+'), scopes })).json().apiKey;
  const batch = (key: string, rows: object[]) =>
    g.app.inject({
      method: 'POST',
      url: '/api/v1/links/batch',
      headers: { 'x-api-key': key, 'content-type': 'application/x-ndjson' },
      payload: rows.map((r) => JSON.stringify(r)).join('\n'),
    });
  const lines = (body: string) =>
    body
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { status: number; link?: Record<string, unknown>; problem?: { code: string } });

  it('gives password hashes through GET /api/v1/export/links only, to a key with links:read and links:write; list and read show passwordProtected', async () => {
    const key = await newKey();
    const created = (await g.call(key, 'POST', '/api/v1/links', { url: 'https://example.com/pw', alias: 'export-pw', password: 'open sesame' })).json();
    expect(created).toMatchObject({ passwordProtected: true });
    expect(created).not.toHaveProperty('passwordHash');
    expect((await g.call(key, 'GET', '/api/v1/links/export-pw')).json()).not.toHaveProperty('passwordHash');
    expect((await g.call(key, 'GET', '/api/v1/links')).json().links[0]).not.toHaveProperty('passwordHash');

    const exported = await g.call(key, 'GET', '/api/v1/export/links?limit=10');
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['cache-control']).toBe('no-store');
    const [link] = exported.json().links;
    expect(link).toMatchObject({ code: 'export-pw', passwordProtected: true, passwordHash: expect.stringMatching(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/) });
    expect(JSON.stringify(exported.json())).not.toContain('open sesame');

    for (const scopes of [['links:read'], ['links:write']]) {
      const res = await g.call(await scopedKey(key, scopes), 'GET', '/api/v1/export/links');
      expect([scopes, res.statusCode, res.json().code]).toEqual([scopes, 403, 'INSUFFICIENT_SCOPE']);
    }

    // The hash imported by another tenant protects its link with the same password.
    const other = await newKey();
    const imported = await g.call(other, 'POST', '/api/v1/links', { url: 'https://example.com/pw', legacyCode: 'x', passwordHash: link.passwordHash });
    expect(imported.statusCode).toBe(201);
    expect(imported.json()).toMatchObject({ code: 'x', passwordProtected: true });
    expect((await g.call(other, 'GET', '/api/v1/export/links')).json().links[0].passwordHash).toBe(link.passwordHash);
  });

  it('refuses a password hash that is not a bounded argon2id PHC string with 400, never echoing it', async () => {
    const key = await newKey();
    for (const passwordHash of ['open sesame', '$argon2id$v=19$m=4194304,t=1,p=1$kPz9lTNFOj4fNxFC07jJVg$juGUykihyVcY60YaP3b2e9wTBBbO9TycP9ZVrYOreeI']) {
      const res = await g.call(key, 'POST', '/api/v1/links', { url: 'https://example.com/x', passwordHash });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', field: 'passwordHash' });
      expect(res.body).not.toContain(passwordHash.slice(-20));
    }
  });

  it('creates disabled links and legacy codes on the batch path, and reads a multi-segment code back by its escaped path', async () => {
    const key = await newKey();
    const res = await batch(key, [
      { url: 'https://example.com/one', legacyCode: '1' },
      { url: 'https://example.com/launch', legacyCode: 'blog/2024/launch', status: 'disabled' },
      { url: 'https://example.com/short', alias: 'zz' },
      { url: 'https://example.com/health', legacyCode: 'health/x' },
      { url: 'https://example.com/go', legacyCode: 'news/go' },
    ]);
    expect(lines(res.body).map((l) => [l.status, l.link?.code ?? l.problem?.code, l.link?.status])).toEqual([
      [201, '1', 'active'],
      [201, 'blog/2024/launch', 'disabled'],
      [400, 'INVALID_ALIAS', undefined],
      [400, 'ALIAS_RESERVED', undefined],
      [400, 'INVALID_ALIAS', undefined],
    ]);
    const read = await g.call(key, 'GET', `/api/v1/links/${encodeURIComponent('blog/2024/launch')}`);
    expect([read.statusCode, read.json().code, read.json().shortUrl]).toEqual([200, 'blog/2024/launch', 'https://sho.rt/blog/2024/launch']);
  });
});
