import { randomUUID } from 'crypto';
import { Endpoints } from '@shortlink/harness';
import { API_KEY, createTenant } from './support';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

interface EntryView {
  action: string;
  actor: { type: string; id: string; name: string };
  target: { type: string; id: string | null; domain: string | null };
  clientAddress: string | null;
  changes: Record<string, { from?: unknown; to: unknown }> | null;
  details: Record<string, unknown> | null;
}

/**
 * The audit log on every profile (docs/design.md, "Audit log"), as a tenant uses it:
 * a named key creates, edits and deletes a link, the first key revokes a key and changes a domain's settings, and the log gives
 * back each change with the key's name as its actor and the client's address; a key without
 * `audit:read` is refused, and no entry holds a key or a link's password. The apps must trust
 * loopback as a proxy (TRUSTED_PROXIES), as both profiles' specs do.
 */
export function describeAuditJourney(endpoints: () => Endpoints) {
  const call = async (method: Method, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${endpoints().generation}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies of many shapes, each checked by the assertions that read it
    const parsed: Record<string, any> = text && type.includes('json') ? JSON.parse(text) : {};
    return { status: res.status, type, text, body: parsed };
  };

  describe('audit log', () => {
    it('records link changes and a key revocation by the key that made them, refuses a key without audit:read, and holds no secret', async () => {
      const { tenantId, apiKey: firstKey } = await createTenant(endpoints());
      const editorName = `editor-${randomUUID().slice(0, 8)}`;
      const editor = await call('POST', '/api/v1/keys', firstKey, { name: editorName, scopes: ['links:read', 'links:write'] });
      expect(editor.status).toBe(201);
      const spare = await call('POST', '/api/v1/keys', firstKey, { name: 'spare' });
      expect(spare.status).toBe(201);
      const secrets = [firstKey, editor.body.apiKey as string, spare.body.apiKey as string, API_KEY];

      // The editor's changes, from a client behind the (trusted) loopback proxy.
      const from = { 'x-forwarded-for': '203.0.113.50' };
      const password = `pw-${randomUUID()}`;
      const created = await call('POST', '/api/v1/links', editor.body.apiKey, { url: 'https://example.com/audited', title: 'Before' }, from);
      expect(created.status).toBe(201);
      const code = created.body.code as string;
      expect((await call('PATCH', `/api/v1/links/${code}`, editor.body.apiKey, { title: 'After', password }, from)).status).toBe(200);
      expect((await call('DELETE', `/api/v1/links/${code}`, editor.body.apiKey, undefined, from)).status).toBe(204);
      expect((await call('DELETE', `/api/v1/keys/${spare.body.key.id}`, firstKey)).status).toBe(204);

      const log = await call('GET', '/api/v1/audit-log', firstKey);
      expect(log.status).toBe(200);
      const entries = log.body.entries as EntryView[];
      expect(entries.map((e) => [e.action, e.actor.name])).toEqual([
        ['key.revoked', 'first key'],
        ['link.deleted', editorName],
        ['link.edited', editorName],
        ['link.created', editorName],
        ['key.created', 'first key'],
        ['key.created', 'first key'],
      ]);
      const [revoked, deleted, edited, made] = entries;
      expect(revoked).toMatchObject({ target: { type: 'key', id: spare.body.key.id }, details: { name: 'spare' } });
      for (const e of [deleted, edited, made]) {
        expect(e).toMatchObject({
          actor: { type: 'key', id: editor.body.key.id, name: editorName },
          target: { type: 'link', id: code },
          clientAddress: '203.0.113.50',
        });
      }
      expect(edited.changes).toEqual({ title: { from: 'Before', to: 'After' }, passwordProtected: { from: false, to: true } });
      expect(edited.details).toEqual({ passwordChanged: true });
      // Filters: by actor, by target.
      const byEditor = (await call('GET', `/api/v1/audit-log?actor=${editor.body.key.id}`, firstKey)).body.entries as EntryView[];
      expect(byEditor.map((e) => e.action)).toEqual(['link.deleted', 'link.edited', 'link.created']);
      expect(((await call('GET', `/api/v1/audit-log?target=${code}&action=link.created`, firstKey)).body.entries as EntryView[]).length).toBe(1);

      // No secret anywhere: not in the JSON, not in the CSV, not in the operator's log of this tenant.
      const csv = await call('GET', '/api/v1/audit-log?format=csv', firstKey);
      expect([csv.status, csv.type]).toEqual([200, expect.stringContaining('text/csv')]);
      expect(csv.text).toContain(editorName);
      const operatorLog = await call('GET', `/api/v1/admin/audit-log?target=${tenantId}`, API_KEY);
      expect((operatorLog.body.entries as EntryView[]).map((e) => [e.action, e.actor.type])).toEqual([['tenant.created', 'operator']]);
      for (const text of [log.text, csv.text, operatorLog.text]) {
        for (const secret of [...secrets, password]) expect(text).not.toContain(secret);
        expect(text).not.toContain('$argon2');
      }

      // A domain settings change, in the tenant's log with its diff (written with the change, in its transaction).
      const domain = `audit-${randomUUID().slice(0, 8)}.e2e.test`;
      expect((await call('POST', `/api/v1/admin/tenants/${tenantId}/domains`, API_KEY, { domain })).status).toBe(201);
      expect((await call('PATCH', `/api/v1/domains/${domain}`, firstKey, { robots: 'allow' })).status).toBe(200);
      const settings = (await call('GET', `/api/v1/audit-log?target=${domain}`, firstKey)).body.entries as EntryView[];
      expect(settings).toEqual([
        expect.objectContaining({
          action: 'domain.settings_changed',
          actor: expect.objectContaining({ name: 'first key' }),
          changes: { robots: { from: 'disallow', to: 'allow' } },
        }),
      ]);

      // The editor's key lacks audit:read; a bad filter is a problem with a stable code.
      const refused = await call('GET', '/api/v1/audit-log', editor.body.apiKey);
      expect([refused.status, refused.type, refused.body.code]).toEqual([403, expect.stringContaining('application/problem+json'), 'INSUFFICIENT_SCOPE']);
      const bad = await call('GET', '/api/v1/audit-log?from=last-tuesday', firstKey);
      expect([bad.status, bad.body.code]).toEqual([400, 'INVALID_TIME_RANGE']);
    });
  });
}
