import { randomUUID } from 'crypto';
import { AuditEntry, auditEntry } from '@shortlink/audit-domain';
import { hashToken, Member, PeopleStore, SsoSettings, SsoStore } from '@shortlink/people-domain';
import { Tenant } from '@shortlink/tenants-domain';
import { PeopleFixture } from './people-store.contract';

const T0 = Date.UTC(2026, 0, 15, 10, 0, 0, 123);
const context = { actor: { type: 'person' as const, id: 'm-1', name: 'ana@example.com' }, clientAddress: '203.0.113.7' };

export interface SsoFixture extends PeopleFixture {
  readonly sso: SsoStore;
}

const changed = (tenantId: string): AuditEntry =>
  auditEntry(context, { log: tenantId, action: 'sso.settings_changed', target: { type: 'tenant', id: tenantId, domain: null } }, new Date(T0));
const joined = (member: Member): AuditEntry =>
  auditEntry(context, { log: member.tenantId, action: 'member.joined', target: { type: 'member', id: member.id, domain: null } }, new Date(T0));

/** One behaviour, every backend: SQLite in unit runs, the MySQL meta database in integration runs (docs/design.md, "Single sign-on"). */
export function describeSsoStoreContract(backend: string, open: () => Promise<SsoFixture>) {
  describe(`SSO store contract: ${backend}`, () => {
    let fx: SsoFixture;
    let sso: SsoStore;
    let people: PeopleStore;
    beforeAll(async () => {
      fx = await open();
      sso = fx.sso;
      people = fx.people;
    });
    afterAll(() => fx.close());

    const newTenant = async (): Promise<Tenant> => {
      const tenant: Tenant = { id: randomUUID(), name: 'acme', plan: 'free', status: 'active', createdAt: new Date(T0) };
      await fx.addTenant(tenant);
      return tenant;
    };
    const settings = (tenantId: string, over: Partial<SsoSettings> = {}): SsoSettings => ({
      tenantId,
      issuer: 'https://accounts.example.com',
      clientId: 'shortlink',
      sealedSecret: 'v1.sealed-secret',
      allowedDomains: ['example.com', 'example.org'],
      defaultRole: 'viewer',
      createdAt: new Date(T0),
      updatedAt: new Date(T0),
      ...over,
    });
    const newcomer = (tenantId: string, email: string) => ({ id: randomUUID(), tenantId, email, role: 'editor' as const, createdAt: new Date(T0 + 5) });

    it('keeps one provider per tenant: put creates, put again replaces, get reads it back exactly, each with its audit entry', async () => {
      const t = await newTenant();
      const other = await newTenant();
      expect(await sso.get(t.id)).toBeNull();
      await sso.put(settings(t.id), changed(t.id));
      expect(await sso.get(t.id)).toEqual(settings(t.id));
      const replaced = settings(t.id, {
        clientId: 'other',
        sealedSecret: 'v1.new',
        allowedDomains: ['example.net'],
        defaultRole: 'admin',
        updatedAt: new Date(T0 + 1000),
      });
      await sso.put(replaced, changed(t.id));
      expect(await sso.get(t.id)).toEqual(replaced);
      expect(await sso.get(other.id)).toBeNull();
      expect(await fx.actionsOf(t.id)).toEqual(['sso.settings_changed', 'sso.settings_changed']);
    });

    it('deletes a tenant’s provider (false when there was none), with its audit entry', async () => {
      const t = await newTenant();
      await sso.put(settings(t.id), changed(t.id));
      expect(await sso.delete(t.id, changed(t.id))).toBe(true);
      expect(await sso.get(t.id)).toBeNull();
      expect(await sso.delete(t.id, changed(t.id))).toBe(false);
      expect(await fx.actionsOf(t.id)).toEqual(['sso.settings_changed', 'sso.settings_changed']);
    });

    it('creates a person on a first sign-in, active without a password, with member.joined; the next sign-in finds the same member', async () => {
      const t = await newTenant();
      const first = await sso.memberForSignIn(newcomer(t.id, 'bo@example.com'), joined);
      expect(first.created).toBe(true);
      expect(first.member).toMatchObject({ tenantId: t.id, email: 'bo@example.com', role: 'editor', status: 'active', invitationExpiresAt: null });
      expect(await people.findMember(t.id, first.member.id)).toEqual(first.member);
      expect(await people.passwordHashOf(first.member.id)).toBeNull();
      // No password: a password sign-in never finds this member.
      expect(await people.signInCandidates('bo@example.com')).toEqual([]);
      const again = await sso.memberForSignIn(newcomer(t.id, 'bo@example.com'), joined);
      expect(again).toEqual({ member: first.member, created: false });
      expect(await fx.actionsOf(t.id)).toEqual(['member.joined']);
      // The same email in another tenant is another member.
      const elsewhere = await newTenant();
      expect((await sso.memberForSignIn(newcomer(elsewhere.id, 'bo@example.com'), joined)).member.id).not.toBe(first.member.id);
    });

    it('activates an invited member who signs in through the provider (the invitation is spent) and keeps its role', async () => {
      const t = await newTenant();
      const token = `inv_${randomUUID()}`;
      const invited = {
        id: randomUUID(),
        tenantId: t.id,
        email: 'cy@example.com',
        role: 'admin' as const,
        createdAt: new Date(T0),
        invitationHash: hashToken(token),
        invitationExpiresAt: new Date(T0 + 3_600_000),
      };
      expect(await people.invite(invited)).toBe(true);
      const signedIn = await sso.memberForSignIn(newcomer(t.id, 'cy@example.com'), joined);
      expect(signedIn).toEqual({
        member: expect.objectContaining({ id: invited.id, role: 'admin', status: 'active', invitationExpiresAt: null }),
        created: false,
      });
      expect(await people.findInvitation(hashToken(token), new Date(T0 + 1))).toBeNull();
      expect((await people.findMember(t.id, invited.id))?.status).toBe('active');
    });

    it('creates one member when two first sign-ins of the same person race', async () => {
      const t = await newTenant();
      const results = await Promise.all([0, 1, 2].map(() => sso.memberForSignIn(newcomer(t.id, 'dee@example.com'), joined)));
      expect(new Set(results.map((r) => r.member.id)).size).toBe(1);
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect((await people.listMembers(t.id)).map((m) => m.email)).toEqual(['dee@example.com']);
    });
  });
}
