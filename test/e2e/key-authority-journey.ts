import { API_KEY } from './support';
import { asPerson, PASSWORD, Person, signIn, waitPastSessionCache } from './people-journey';
import { api } from './tenant-journey';

interface KeyView {
  id: string;
  name: string;
  scopes: string[];
  activeScopes: string[];
  actsFor: { id: string; email: string | null; role: string | null } | null;
  status: string;
}

interface EntryView {
  action: string;
  actor: { type: string; id: string; name: string; onBehalfOf: { id: string; name: string } | null };
  target: { type: string; id: string | null };
  changes: Record<string, { from?: unknown; to: unknown }> | null;
}

/** Settings an SSO change would carry: the guard decides before the body is read. */
const SSO_SETTINGS = {
  issuer: 'https://idp.example.com',
  clientId: 'shortlink',
  clientSecret: 'a-client-secret',
  allowedDomains: ['example.com'],
  defaultRole: 'admin',
};

/**
 * A key never outranks the person who made it (docs/design.md, "Security model"), as a tenant's
 * people meet it over HTTP: an admin's session makes a key, which cannot promote the admin, demote
 * the owner or change single sign-on; a demotion lowers the admin's key; the admin is removed and
 * the key is suspended until the owner hands it over; an admin's session cannot revoke the owner's
 * keys, nor an editor another's CI key; the first key manages people only until the tenant has an
 * owner; the audit log names the person behind each key. `bases` gives two generation instances
 * (the same one twice on the embedded profile): changes are made on one and tried on the other.
 */
export function describeKeyAuthorityJourney(bases: () => readonly [string, string]) {
  describe('a key never outranks the person who made it', () => {
    const a = () => bases()[0];
    const b = () => bases()[1];
    const stamp = Date.now();
    const email = (who: string) => `${who}-${stamp}@keys.example.com`;
    let tenantId: string;
    let firstKey: { id: string; secret: string };
    const ids: Record<string, string> = {};
    const people: Record<string, Person> = {};
    let adminKey: { id: string; secret: string };

    /** Invites `who` with `role` as `by` (the token is in the answer: no SMTP here), accepts, and signs in. */
    const join = async (who: string, role: string, by: Person) => {
      const invited = await asPerson(a(), 'POST', '/api/v1/members', by, { email: email(who), role });
      expect(invited.status).toBe(201);
      ids[who] = invited.body.member.id;
      expect((await api(b(), 'POST', '/api/v1/auth/accept', null, { token: invited.body.invitation.token, password: PASSWORD })).status).toBe(200);
      people[who] = (await signIn(b(), email(who), PASSWORD)).person;
    };
    const keys = async (): Promise<KeyView[]> => (await asPerson(b(), 'GET', '/api/v1/keys', people.owner)).body.keys;

    beforeAll(async () => {
      const created = await api(a(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: `Keys ${stamp}`, plan: 'paid' });
      expect(created.status).toBe(201);
      tenantId = created.body.tenant.id;
      firstKey = { id: created.body.key.id, secret: created.body.apiKey };
    });

    it('lets the first key, made by the operator before any person exists, invite the first owner; then it keeps links, analytics and the audit log only', async () => {
      expect(tenantId).toBeTruthy();
      const before = await api(b(), 'GET', '/api/v1/me', firstKey.secret);
      expect(before.body.scopes).toEqual(['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write', 'keys:write', 'conversions:write']);
      const invited = await api(a(), 'POST', '/api/v1/members', firstKey.secret, { email: email('owner'), role: 'owner' });
      expect(invited.status).toBe(201);
      ids.owner = invited.body.member.id;
      expect((await api(b(), 'POST', '/api/v1/auth/accept', null, { token: invited.body.invitation.token, password: PASSWORD })).status).toBe(200);
      people.owner = (await signIn(a(), email('owner'), PASSWORD)).person;
      await waitPastSessionCache();
      expect((await api(b(), 'GET', '/api/v1/me', firstKey.secret)).body.scopes).toEqual([
        'links:read',
        'links:write',
        'analytics:read',
        'audit:read',
        'conversions:write',
      ]);
      for (const [method, path, body] of [
        ['POST', '/api/v1/members', { email: email('intruder'), role: 'owner' }],
        ['PATCH', `/api/v1/members/${ids.owner}`, { role: 'viewer' }],
        ['PUT', '/api/v1/sso', SSO_SETTINGS],
        ['POST', '/api/v1/keys', { name: 'more' }],
      ] as const) {
        const refused = await api(b(), method, path, firstKey.secret, body);
        expect([method, path, refused.status, refused.body.code]).toEqual([method, path, 403, 'INSUFFICIENT_SCOPE']);
      }
      expect((await api(b(), 'GET', '/api/v1/links?limit=1', firstKey.secret)).status).toBe(200);
      await join('admin', 'admin', people.owner);
      await join('editor', 'editor', people.owner);
      await join('ci-editor', 'editor', people.owner);
    });

    it("gives an admin's session a key without members:write, and refuses members:write on it", async () => {
      const made = await asPerson(a(), 'POST', '/api/v1/keys', people.admin, { name: 'x' });
      expect(made.status).toBe(201);
      adminKey = { id: made.body.key.id, secret: made.body.apiKey };
      expect(made.body.key.scopes).not.toContain('members:write');
      expect(made.body.key).toMatchObject({ actsFor: { id: ids.admin, email: email('admin'), role: 'admin' }, status: 'active' });
      const asked = await asPerson(a(), 'POST', '/api/v1/keys', people.admin, { name: 'y', scopes: ['links:read', 'members:write'] });
      expect([asked.status, asked.body.code, asked.body.scopes]).toEqual([403, 'INSUFFICIENT_SCOPE', ['members:write']]);
    });

    it("refuses the admin's key promoting the admin, demoting the owner, inviting an owner and changing single sign-on", async () => {
      for (const [method, path, body] of [
        ['PATCH', `/api/v1/members/${ids.admin}`, { role: 'owner' }],
        ['PATCH', `/api/v1/members/${ids.owner}`, { role: 'viewer' }],
        ['POST', '/api/v1/members', { email: email('new-owner'), role: 'owner' }],
        ['PUT', '/api/v1/sso', SSO_SETTINGS],
        ['DELETE', `/api/v1/members/${ids.owner}`, undefined],
      ] as const) {
        const refused = await api(b(), method, path, adminKey.secret, body);
        expect([method, path, refused.status, refused.body.code, refused.body.scope]).toEqual([method, path, 403, 'INSUFFICIENT_SCOPE', 'members:write']);
      }
      const members = (await asPerson(b(), 'GET', '/api/v1/members', people.owner)).body.members as Array<{ id: string; role: string }>;
      expect(members.find((m) => m.id === ids.owner)?.role).toBe('owner');
      expect(members.find((m) => m.id === ids.admin)?.role).toBe('admin');
      // The owner's own key, made in a session, manages people as the owner.
      const ownerKey = await asPerson(a(), 'POST', '/api/v1/keys', people.owner, { name: 'owner ops', scopes: ['members:write', 'keys:write', 'links:read'] });
      expect(ownerKey.status).toBe(201);
      const invited = await api(b(), 'POST', '/api/v1/members', ownerKey.body.apiKey, { email: email('invited-by-owner-key'), role: 'viewer' });
      expect(invited.status).toBe(201);
    });

    it("lowers the admin's key with the admin's demotion, on the other instance within a second", async () => {
      expect((await api(b(), 'GET', '/api/v1/audit-log?limit=1', adminKey.secret)).status).toBe(200);
      expect((await asPerson(a(), 'PATCH', `/api/v1/members/${ids.admin}`, people.owner, { role: 'editor' })).status).toBe(200);
      await waitPastSessionCache();
      const refused = await api(b(), 'GET', '/api/v1/audit-log?limit=1', adminKey.secret);
      expect([refused.status, refused.body.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
      expect((await api(b(), 'GET', '/api/v1/links?limit=1', adminKey.secret)).status).toBe(200);
      const listed = (await keys()).find((k) => k.id === adminKey.id)!;
      expect(listed).toMatchObject({
        actsFor: { role: 'editor' },
        activeScopes: ['links:read', 'links:write', 'analytics:read', 'keys:write', 'conversions:write'],
      });
      expect(listed.scopes).toContain('audit:read');
      expect((await asPerson(a(), 'PATCH', `/api/v1/members/${ids.admin}`, people.owner, { role: 'admin' })).status).toBe(200);
    });

    it('names the person behind a key in the audit log', async () => {
      const made = await api(a(), 'POST', '/api/v1/links', adminKey.secret, { url: 'https://example.com/by-the-admins-key' });
      expect(made.status).toBe(201);
      const log = await asPerson(b(), 'GET', `/api/v1/audit-log?actor=${adminKey.id}&limit=10`, people.owner);
      const entry = (log.body.entries as EntryView[]).find((e) => e.action === 'link.created' && e.target.id === made.body.code);
      expect(entry?.actor).toEqual({ type: 'key', id: adminKey.id, name: 'x', onBehalfOf: { id: ids.admin, name: email('admin') } });
      const csv = await fetch(`${b()}/api/v1/audit-log?actor=${adminKey.id}&format=csv`, { headers: { cookie: people.owner.cookie } });
      const text = await csv.text();
      expect(text.split('\n')[0]).toContain('actor_name,on_behalf_of_id,on_behalf_of_name');
      expect(text).toContain(`x,${ids.admin},${email('admin')}`);
      expect(text).not.toContain(adminKey.secret);
    });

    it('suspends the keys of a removed person everywhere within a second, until the owner hands them over', async () => {
      const ci = await asPerson(a(), 'POST', '/api/v1/keys', people.editor, { name: 'editor ci' });
      expect(ci.status).toBe(201);
      expect((await asPerson(a(), 'DELETE', `/api/v1/members/${ids.admin}`, people.owner)).status).toBe(204);
      expect((await asPerson(a(), 'DELETE', `/api/v1/members/${ids.editor}`, people.owner)).status).toBe(204);
      await waitPastSessionCache();
      for (const [method, path, body] of [
        ['POST', '/api/v1/members', { email: email('late-owner'), role: 'owner' }],
        ['PATCH', `/api/v1/members/${ids.owner}`, { role: 'viewer' }],
        ['DELETE', `/api/v1/keys/${firstKey.id}`, undefined],
        ['GET', '/api/v1/links?limit=1', undefined],
      ] as const) {
        const refused = await api(b(), method, path, adminKey.secret, body);
        expect([method, path, refused.status, refused.body.code]).toEqual([method, path, 403, 'KEY_SUSPENDED']);
      }
      for (const [method, path] of [
        ['GET', '/api/v1/links?limit=1'],
        ['POST', '/api/v1/links'],
      ] as const) {
        const refused = await api(b(), method, path, ci.body.apiKey, method === 'POST' ? { url: 'https://example.com/after-removal' } : undefined);
        expect([method, refused.status, refused.body.code]).toEqual([method, 403, 'KEY_SUSPENDED']);
      }
      // The removed admin's key did not revoke the first key.
      expect((await keys()).find((k) => k.id === firstKey.id)).toMatchObject({ status: 'active' });
      expect((await keys()).find((k) => k.id === ci.body.key.id)).toMatchObject({
        status: 'suspended',
        activeScopes: [],
        actsFor: { id: ids.editor, email: null },
      });

      // Only an owner hands a key over, to an active member; the key then acts for them.
      const byOther = await asPerson(a(), 'POST', `/api/v1/keys/${ci.body.key.id}/transfer`, people['ci-editor'], { memberId: ids['ci-editor'] });
      expect([byOther.status, byOther.body.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
      const toGone = await asPerson(a(), 'POST', `/api/v1/keys/${ci.body.key.id}/transfer`, people.owner, { memberId: ids.admin });
      expect([toGone.status, toGone.body.code]).toEqual([404, 'MEMBER_NOT_FOUND']);
      const moved = await asPerson(a(), 'POST', `/api/v1/keys/${ci.body.key.id}/transfer`, people.owner, { memberId: ids['ci-editor'] });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({ status: 'active', actsFor: { id: ids['ci-editor'], role: 'editor' } });
      await waitPastSessionCache();
      expect((await api(b(), 'GET', '/api/v1/links?limit=1', ci.body.apiKey)).status).toBe(200);
      const log = (await asPerson(b(), 'GET', `/api/v1/audit-log?action=key.transferred&target=${ci.body.key.id}`, people.owner)).body.entries as EntryView[];
      expect(log).toHaveLength(1);
      expect(log[0]).toMatchObject({
        actor: { type: 'person', id: ids.owner },
        changes: { actsFor: { from: { id: ids.editor, email: null }, to: { id: ids['ci-editor'], email: email('ci-editor') } } },
      });
    });

    it("refuses an admin's session revoking the owner's keys and the first key (owner-level); the owner may", async () => {
      await join('admin2', 'admin', people.owner);
      const ownerKey = await asPerson(a(), 'POST', '/api/v1/keys', people.owner, { name: 'owner everything' });
      expect(ownerKey.status).toBe(201);
      for (const id of [ownerKey.body.key.id, firstKey.id]) {
        const refused = await asPerson(b(), 'DELETE', `/api/v1/keys/${id}`, people.admin2);
        expect([refused.status, refused.body.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
      }
      expect((await keys()).filter((k) => [ownerKey.body.key.id, firstKey.id].includes(k.id)).map((k) => k.status)).toEqual(['active', 'active']);
      for (const id of [ownerKey.body.key.id, firstKey.id]) expect((await asPerson(b(), 'DELETE', `/api/v1/keys/${id}`, people.owner)).status).toBe(204);
    });

    it("refuses an editor's session revoking a CI key another editor made; its own keys it may, and an admin may end the CI key", async () => {
      await join('editor2', 'editor', people.owner);
      const ci = await asPerson(a(), 'POST', '/api/v1/keys', people['ci-editor'], { name: 'deploy ci' });
      expect(ci.status).toBe(201);
      const byEditor = await asPerson(b(), 'DELETE', `/api/v1/keys/${ci.body.key.id}`, people.editor2);
      expect([byEditor.status, byEditor.body.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
      expect((await keys()).find((k) => k.id === ci.body.key.id)?.status).toBe('active');
      const own = await asPerson(b(), 'POST', '/api/v1/keys', people.editor2, { name: 'editor2 own' });
      expect((await asPerson(b(), 'DELETE', `/api/v1/keys/${own.body.key.id}`, people.editor2)).status).toBe(204);
      expect((await asPerson(b(), 'DELETE', `/api/v1/keys/${ci.body.key.id}`, people.admin2)).status).toBe(204);
    });
  });
}
