import { InProcessGeneration, startGenerationInProcess } from '../testing/in-process-generation';

interface EntryView {
  id: string;
  at: string;
  action: string;
  actor: { type: string; id: string; name: string };
  target: { type: string; id: string | null; domain: string | null };
  clientAddress: string | null;
  changes: Record<string, { from?: unknown; to: unknown }> | null;
  details: Record<string, unknown> | null;
}

/** The audit log over HTTP in process (Fastify's inject) on the embedded adapters of a temp dir (docs/design.md, "Audit log"). */
describe('audit log API', () => {
  const OPERATOR = 'sl_audit_log_spec_operator_0123456789';
  let g: InProcessGeneration;

  beforeAll(async () => {
    g = await startGenerationInProcess(OPERATOR);
  }, 60_000);

  afterAll(() => g?.close());

  const newTenant = async () => (await g.call(OPERATOR, 'POST', '/api/v1/admin/tenants', { name: `t-${Math.random()}`, plan: 'paid' })).json();
  const entriesOf = async (key: string, query = ''): Promise<EntryView[]> => {
    const res = await g.call(key, 'GET', `/api/v1/audit-log${query}`);
    expect(res.statusCode).toBe(200);
    return res.json().entries;
  };
  const ndjson = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n');

  it('records each link change by the key that made it, one entry per batch or bulk request with its count, and never a secret', async () => {
    const { apiKey, key, tenant } = await newTenant();
    const created = await g.call(apiKey, 'POST', '/api/v1/links', { url: 'https://example.com/a', title: 'A' }, { 'x-forwarded-for': '198.51.100.9' });
    const code = created.json().code as string;
    const password = 'correct horse battery staple';
    expect((await g.call(apiKey, 'PATCH', `/api/v1/links/${code}`, { title: 'B', password, social: { title: 'Card' } })).statusCode).toBe(200);
    expect((await g.call(apiKey, 'PATCH', `/api/v1/links/${code}`, { status: 'disabled' })).statusCode).toBe(200);
    expect((await g.call(apiKey, 'DELETE', `/api/v1/links/${code}`)).statusCode).toBe(204);
    const batch = await g.app.inject({
      method: 'POST',
      url: '/api/v1/links/batch',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/x-ndjson' },
      payload: ndjson([{ url: 'https://example.com/b1', tags: ['promo'] }, { url: 'https://example.com/b2', tags: ['promo'] }, { url: 'ftp://bad' }]),
    });
    expect(batch.statusCode).toBe(200);
    expect((await g.call(apiKey, 'PATCH', '/api/v1/links/bulk', { tag: 'promo', edit: { status: 'disabled', password } })).statusCode).toBe(200);
    expect((await g.call(apiKey, 'DELETE', '/api/v1/links/bulk', { tag: 'promo' })).statusCode).toBe(200);

    const entries = await entriesOf(apiKey);
    expect(entries.map((e) => e.action)).toEqual([
      'link.bulk_deleted',
      'link.bulk_disabled',
      'link.batch_created',
      'link.deleted',
      'link.disabled',
      'link.edited',
      'link.created',
    ]);
    for (const e of entries) expect(e.actor).toEqual({ type: 'key', id: key.id, name: 'first key', onBehalfOf: null });
    const [bulkDeleted, bulkDisabled, batchCreated, deleted, disabled, edited, made] = entries;
    expect(made).toMatchObject({ target: { type: 'link', id: code }, clientAddress: '127.0.0.1', details: { url: 'https://example.com/a' } });
    expect(edited.changes).toEqual({
      title: { from: 'A', to: 'B' },
      passwordProtected: { from: false, to: true },
      social: { from: null, to: { title: 'Card', description: null, image: null } },
    });
    expect(edited.details).toEqual({ passwordChanged: true });
    expect(disabled.changes).toEqual({ status: { from: 'active', to: 'disabled' } });
    expect(deleted.target).toMatchObject({ type: 'link', id: code });
    expect(batchCreated).toMatchObject({ target: { type: 'links', id: null }, details: { count: 2, failed: 1 } });
    expect(bulkDisabled).toMatchObject({
      changes: { status: { to: 'disabled' }, passwordProtected: { to: true } },
      details: { count: 2, failed: 0, tag: 'promo' },
    });
    expect(bulkDeleted.details).toMatchObject({ count: 2, failed: 0, tag: 'promo' });
    const text = JSON.stringify(entries);
    expect(text).not.toContain(password);
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain('$argon2');
    // The tenant's log is its own: the operator's creation of it is in the operator log.
    expect(entries.some((e) => e.action.startsWith('tenant.'))).toBe(false);
    const operatorLog = (await g.call(OPERATOR, 'GET', `/api/v1/admin/audit-log?target=${tenant.id}`)).json().entries as EntryView[];
    expect(operatorLog.map((e) => [e.action, e.actor.type])).toEqual([['tenant.created', 'operator']]);
  });

  it('records keys created and revoked, and tenant changes in the operator log with their diff', async () => {
    const { apiKey, tenant } = await newTenant();
    const made = (await g.call(apiKey, 'POST', '/api/v1/keys', { name: 'deploy', scopes: ['links:write'] })).json();
    expect((await g.call(apiKey, 'DELETE', `/api/v1/keys/${made.key.id}`)).statusCode).toBe(204);
    const keys = await entriesOf(apiKey, '?action=key');
    expect(keys.map((e) => [e.action, e.target.id])).toEqual([
      ['key.revoked', made.key.id],
      ['key.created', made.key.id],
    ]);
    expect(keys[1].details).toMatchObject({ name: 'deploy', prefix: made.apiKey.slice(0, 10), scopes: ['links:write'] });
    expect(JSON.stringify(keys)).not.toContain(made.apiKey);
    expect((await g.call(OPERATOR, 'PATCH', `/api/v1/admin/tenants/${tenant.id}`, { plan: 'free' })).statusCode).toBe(200);
    const changed = (await g.call(OPERATOR, 'GET', `/api/v1/admin/audit-log?target=${tenant.id}&action=tenant.plan_changed`)).json().entries as EntryView[];
    expect(changed).toEqual([
      expect.objectContaining({ changes: { plan: { from: 'paid', to: 'free' } }, actor: expect.objectContaining({ type: 'operator' }) }),
    ]);
    const domain = `go-${Math.random().toString(36).slice(2, 8)}.audit.test`;
    expect((await g.call(OPERATOR, 'POST', `/api/v1/admin/tenants/${tenant.id}/domains`, { domain })).statusCode).toBe(201);
    expect((await g.call(OPERATOR, 'DELETE', `/api/v1/admin/tenants/${tenant.id}/domains/${domain}`)).statusCode).toBe(204);
    const code = (await g.call(apiKey, 'POST', '/api/v1/links', { url: 'https://example.com/reported' })).json().code;
    const banned = await g.call(OPERATOR, 'PUT', `/api/v1/admin/links/${code}/moderation`, { moderation: 'banned', reason: 'phishing report #7' });
    expect(banned.statusCode).toBe(200);
    const operatorLog = (await g.call(OPERATOR, 'GET', '/api/v1/admin/audit-log?limit=3')).json().entries as EntryView[];
    expect(operatorLog.map((e) => [e.action, e.target.id, e.target.domain])).toEqual([
      ['link.moderated', code, expect.any(String)],
      ['tenant.domain_removed', tenant.id, domain],
      ['tenant.domain_added', tenant.id, domain],
    ]);
    expect(operatorLog[0]).toMatchObject({
      changes: { moderation: { from: 'clear', to: 'banned' }, reason: { from: null, to: 'phishing report #7' } },
      details: { tenantId: tenant.id },
    });
    // Moderation is the operators' business: the tenant's own log does not show it.
    expect((await entriesOf(apiKey, '?action=link.moderated')).length).toBe(0);
  });

  it('records domain settings changes with their diff: a tenant’s in its log, the service’s in the operators’', async () => {
    const { apiKey, tenant } = await newTenant();
    const domain = `go-${Math.random().toString(36).slice(2, 8)}.settings.test`;
    expect((await g.call(OPERATOR, 'POST', `/api/v1/admin/tenants/${tenant.id}/domains`, { domain })).statusCode).toBe(201);
    expect((await g.call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, { robots: 'allow', rootRedirect: 'https://example.com/home' })).statusCode).toBe(200);
    expect((await g.call(apiKey, 'PATCH', `/api/v1/domains/${domain}`, { robots: 'allow' })).statusCode).toBe(200); // no change: no entry
    expect(await entriesOf(apiKey, '?action=domain')).toEqual([
      expect.objectContaining({
        action: 'domain.settings_changed',
        target: { type: 'domain', id: domain, domain },
        changes: { rootRedirect: { from: null, to: 'https://example.com/home' }, robots: { from: 'disallow', to: 'allow' } },
      }),
    ]);
    expect((await g.call(OPERATOR, 'PATCH', '/api/v1/domains/sho.rt', { expiredRedirect: 'https://example.com/expired' })).statusCode).toBe(200);
    const shared = (await g.call(OPERATOR, 'GET', '/api/v1/admin/audit-log?action=shared_domain')).json().entries as EntryView[];
    expect(shared.map((e) => [e.target.id, e.changes])).toEqual([['sho.rt', { expiredRedirect: { from: null, to: 'https://example.com/expired' } }]]);
  });

  it('filters, pages with a cursor bound to the filters, answers CSV, and refuses bad queries with stable codes', async () => {
    const { apiKey } = await newTenant();
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) codes.push((await g.call(apiKey, 'POST', '/api/v1/links', { url: `https://example.com/p${i}` })).json().code);
    const first = (await g.call(apiKey, 'GET', '/api/v1/audit-log?action=link.created&limit=2')).json();
    expect(first.entries.map((e: EntryView) => e.target.id)).toEqual([codes[4], codes[3]]);
    const seen = [...first.entries];
    let cursor = first.nextCursor as string | null;
    while (cursor) {
      const page = (await g.call(apiKey, 'GET', `/api/v1/audit-log?action=link.created&limit=2&cursor=${cursor}`)).json();
      seen.push(...page.entries);
      cursor = page.nextCursor;
    }
    expect(seen.map((e: EntryView) => e.target.id)).toEqual([...codes].reverse());
    expect((await entriesOf(apiKey, `?target=${codes[2]}`)).map((e) => e.target.id)).toEqual([codes[2]]);
    expect(await entriesOf(apiKey, '?from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z')).toEqual([]);

    const csv = await g.call(apiKey, 'GET', '/api/v1/audit-log?format=csv&action=link');
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const rows = csv.body.trim().split('\n');
    expect(rows[0]).toBe(
      'at,action,actor_type,actor_id,actor_name,on_behalf_of_id,on_behalf_of_name,target_type,target_id,target_domain,client_address,changes,details,id',
    );
    expect(rows).toHaveLength(6);
    expect(rows[1]).toContain(`,link.created,key,`);

    const problem = async (query: string) => {
      const res = await g.call(apiKey, 'GET', `/api/v1/audit-log${query}`);
      expect([res.statusCode, res.headers['content-type']]).toEqual([400, expect.stringContaining('application/problem+json')]);
      return res.json().code;
    };
    expect(await problem('?from=yesterday')).toBe('INVALID_TIME_RANGE');
    expect(await problem('?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z')).toBe('INVALID_TIME_RANGE');
    expect(await problem('?action=DROP%20TABLE')).toBe('VALIDATION_FAILED');
    expect(await problem('?limit=0')).toBe('VALIDATION_FAILED');
    expect(await problem('?colour=red')).toBe('VALIDATION_FAILED');
    expect(await problem(`?action=key&cursor=${first.nextCursor}`)).toBe('INVALID_CURSOR');
    expect(await problem('?format=csv&cursor=forged')).toBe('INVALID_CURSOR');
  });

  it('needs audit:read for a tenant’s log and admin for the operators’, and shows a tenant only its own', async () => {
    const { apiKey } = await newTenant();
    const other = await newTenant();
    await g.call(other.apiKey, 'POST', '/api/v1/links', { url: 'https://example.com/theirs' });
    const writer = (await g.call(apiKey, 'POST', '/api/v1/keys', { name: 'writer', scopes: ['links:read', 'links:write'] })).json().apiKey;
    const refused = await g.call(writer, 'GET', '/api/v1/audit-log');
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    expect((await g.call(apiKey, 'GET', '/api/v1/admin/audit-log')).statusCode).toBe(403);
    expect((await g.call(null, 'GET', '/api/v1/audit-log')).statusCode).toBe(401);
    expect((await entriesOf(apiKey)).map((e) => e.action)).toEqual(['key.created']);
  });

  it('publishes both logs in the OpenAPI document, with their scope, filters, CSV and problem answers', async () => {
    const doc = (await g.app.inject({ method: 'GET', url: '/docs/openapi.json' })).json();
    for (const [path, scope] of [
      ['/api/v1/audit-log', 'audit:read'],
      ['/api/v1/admin/audit-log', 'admin'],
    ]) {
      const get = doc.paths[path].get;
      expect(get.description).toContain(`\`${scope}\` scope`);
      expect(get.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['action', 'actor', 'cursor', 'format', 'from', 'limit', 'target', 'to']);
      expect(Object.keys(get.responses['200'].content).sort()).toEqual(['application/json', 'text/csv']);
      expect(get.responses['400'].content['application/problem+json']).toBeDefined();
    }
    const resolved = (schema: { $ref?: string }) => (schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema);
    expect(resolved(doc.components.schemas.AuditActor.properties.type).enum).toEqual(['key', 'person', 'operator', 'system']);
  });
});
