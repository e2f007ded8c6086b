import { randomBytes, randomUUID } from 'crypto';
import { AuditEntry, auditEntry, AuditLogStore } from '@shortlink/audit-domain';
import { hashToken, Member, NewMember, PeopleStore, Role } from '@shortlink/people-domain';
import { hashApiKey, Tenant, TenantStore } from '@shortlink/tenants-domain';

const T0 = Date.UTC(2026, 0, 15, 10, 0, 0, 123);
const context = { actor: { type: 'key' as const, id: 'key-1', name: 'ci key' }, clientAddress: '203.0.113.7' };

export interface PeopleFixture {
  readonly people: PeopleStore;
  /** Creates a tenant the members belong to. */
  addTenant(tenant: Tenant): Promise<void>;
  /** The actions of a tenant's log, oldest first. */
  actionsOf(tenantId: string): Promise<string[]>;
  close(): Promise<void>;
}

/** The fixture of an SQL meta store: tenants through its tenant store, the log through its audit store. */
export function metaFixture(people: PeopleStore, tenants: TenantStore, audit: AuditLogStore, close: () => Promise<void>): PeopleFixture {
  return {
    people,
    addTenant: async (tenant) => {
      const key = `sl_${randomBytes(16).toString('hex')}`;
      await tenants.createWithApiKey(tenant, hashApiKey(key), {
        id: randomUUID(),
        name: 'first',
        prefix: key.slice(0, 10),
        scopes: ['links:read'],
        expiresAt: null,
        person: null,
      });
    },
    actionsOf: async (tenantId) => (await audit.list({ log: tenantId, after: null, limit: 100 })).map((e) => e.action).reverse(),
    close,
  };
}

const entry = (tenantId: string, action: AuditEntry['action'], memberId: string) =>
  auditEntry(context, { log: tenantId, action, target: { type: 'member', id: memberId, domain: null } }, new Date());

/** One behaviour, every backend: SQLite and the in-memory double in unit runs, the MySQL meta database in integration runs (docs/design.md, "People and sessions"). */
export function describePeopleStoreContract(backend: string, open: () => Promise<PeopleFixture>) {
  describe(`people store contract: ${backend}`, () => {
    let fx: PeopleFixture;
    let store: PeopleStore;
    beforeAll(async () => {
      fx = await open();
      store = fx.people;
    });
    afterAll(() => fx.close());

    const newTenant = async (): Promise<Tenant> => {
      const tenant: Tenant = { id: randomUUID(), name: 'acme', plan: 'free', status: 'active', createdAt: new Date(T0) };
      await fx.addTenant(tenant);
      return tenant;
    };
    const invited = (tenantId: string, email: string, role: Role, token = `inv_${randomUUID()}`, ttlMs = 3_600_000): NewMember & { token: string } => ({
      id: randomUUID(),
      tenantId,
      email,
      role,
      createdAt: new Date(T0),
      invitationHash: hashToken(token),
      invitationExpiresAt: new Date(T0 + ttlMs),
      token,
    });
    const join = async (tenantId: string, email: string, role: Role): Promise<Member> => {
      const m = invited(tenantId, email, role);
      expect(await store.invite(m)).toBe(true);
      return (await store.acceptInvitation(hashToken(m.token), `hash-of-${email}`, new Date(T0 + 1), (x) => entry(tenantId, 'member.joined', x.id)))!;
    };

    it('invites once per tenant and email, with the entry in the same transaction; lists and finds members', async () => {
      const tenant = await newTenant();
      const other = await newTenant();
      const m = invited(tenant.id, 'ana@example.com', 'editor');
      expect(await store.invite(m, entry(tenant.id, 'member.invited', m.id))).toBe(true);
      expect(await store.invite(invited(tenant.id, 'ana@example.com', 'viewer'), entry(tenant.id, 'member.invited', 'x'))).toBe(false);
      expect(await store.invite(invited(other.id, 'ana@example.com', 'viewer'))).toBe(true);
      expect(await store.listMembers(tenant.id)).toEqual([
        {
          id: m.id,
          tenantId: tenant.id,
          email: 'ana@example.com',
          role: 'editor',
          status: 'invited',
          createdAt: new Date(T0),
          invitationExpiresAt: new Date(T0 + 3_600_000),
        },
      ]);
      expect(await store.findMember(tenant.id, m.id)).toMatchObject({ email: 'ana@example.com' });
      expect(await store.findMember(other.id, m.id)).toBeNull();
      expect(await fx.actionsOf(tenant.id)).toEqual(['member.invited']);
    });

    it('accepts an unexpired invitation once; the member may then sign in with the stored hash', async () => {
      const tenant = await newTenant();
      const bo = `bo-${randomUUID()}@example.com`; // the meta database outlives a run: emails of their own
      const m = invited(tenant.id, bo, 'viewer');
      const late = invited(tenant.id, 'late@example.com', 'viewer', undefined, 10);
      await store.invite(m);
      await store.invite(late);
      expect(await store.findInvitation(hashToken(late.token), new Date(T0 + 11))).toBeNull();
      expect(await store.acceptInvitation(hashToken(late.token), 'h', new Date(T0 + 11), (x) => entry(tenant.id, 'member.joined', x.id))).toBeNull();
      expect(await store.signInCandidates(bo)).toEqual([]);
      expect(await store.findInvitation(hashToken(m.token), new Date(T0 + 1))).toMatchObject({ id: m.id });
      const joined = await store.acceptInvitation(hashToken(m.token), 'argon-hash', new Date(T0 + 1), (x) => entry(tenant.id, 'member.joined', x.id));
      expect(joined).toMatchObject({ id: m.id, status: 'active', invitationExpiresAt: null });
      expect(await store.acceptInvitation(hashToken(m.token), 'again', new Date(T0 + 2), (x) => entry(tenant.id, 'member.joined', x.id))).toBeNull();
      const candidates = await store.signInCandidates(bo);
      expect(candidates).toEqual([{ member: joined, passwordHash: 'argon-hash', tenant }]);
      expect(await fx.actionsOf(tenant.id)).toEqual(['member.joined']);
    });

    it('keeps one active owner under concurrent changes, and removes a member with its sessions', async () => {
      const tenant = await newTenant();
      const a = await join(tenant.id, 'a@example.com', 'owner');
      const b = await join(tenant.id, 'b@example.com', 'owner');
      const keep = () => ({ audit: null });
      // Both demotions at once: one passes, the other finds the last owner.
      const outcomes = await Promise.all([store.changeRole(tenant.id, a.id, 'admin', keep), store.changeRole(tenant.id, b.id, 'admin', keep)]);
      expect(outcomes.map((o) => o.outcome).sort()).toEqual(['changed', 'last_owner']);
      const owner = (await store.listMembers(tenant.id)).find((m) => m.role === 'owner')!;
      expect(await store.removeMember(tenant.id, owner.id, keep)).toEqual({ outcome: 'last_owner' });
      expect(await store.removeMember(tenant.id, owner.id, () => ({ refuse: true }))).toEqual({ outcome: 'refused' });
      expect(await store.changeRole(tenant.id, 'nobody', 'viewer', keep)).toEqual({ outcome: 'not_found' });
      const other = owner.id === a.id ? b : a;
      const session = {
        idHash: hashToken(`ses_${randomUUID()}`),
        memberId: other.id,
        tenantId: tenant.id,
        createdAt: new Date(T0),
        lastSeenAt: new Date(T0),
        expiresAt: new Date(T0 + 60_000),
      };
      await store.createSession(session);
      expect(await store.findSession(session.idHash)).toEqual({ session: { ...session, client: null }, member: { ...other, role: 'admin' }, tenant });
      const removed = await store.removeMember(tenant.id, other.id, () => ({ audit: entry(tenant.id, 'member.removed', other.id) }));
      expect(removed).toMatchObject({ outcome: 'changed', member: { id: other.id } });
      expect(await store.findSession(session.idHash)).toBeNull();
      expect(await store.findMember(tenant.id, other.id)).toBeNull();
      expect((await fx.actionsOf(tenant.id)).slice(-1)).toEqual(['member.removed']);
    });

    it('keeps sessions by hash: touched, deleted, and purged past their absolute end or idle', async () => {
      const tenant = await newTenant();
      const m = await join(tenant.id, `s-${randomUUID()}@example.com`, 'viewer');
      const at = (ms: number) => new Date(T0 + ms);
      const mk = (lastSeen: number, expires: number) => ({
        idHash: hashToken(randomUUID()),
        memberId: m.id,
        tenantId: tenant.id,
        createdAt: at(0),
        lastSeenAt: at(lastSeen),
        expiresAt: at(expires),
      });
      const live = mk(0, 100_000);
      const ended = mk(0, 10);
      const idle = mk(0, 100_000);
      for (const s of [live, ended, idle]) await store.createSession(s);
      await store.touchSession(live.idHash, at(50_000));
      expect((await store.findSession(live.idHash))!.session.lastSeenAt).toEqual(at(50_000));
      expect(await store.purgeSessions(at(60_000), at(40_000), 100)).toBeGreaterThanOrEqual(2);
      expect(await store.findSession(ended.idHash)).toBeNull();
      expect(await store.findSession(idle.idHash)).toBeNull();
      expect(await store.findSession(live.idHash)).not.toBeNull();
      const later = { ...mk(0, 100_000), createdAt: at(5) };
      await store.createSession(later);
      expect((await store.listSessions(m.id)).map((x) => x.idHash)).toEqual([later.idHash, live.idHash]);
      expect(await store.deleteSession(live.idHash, randomUUID())).toBe(false); // another member's id: not theirs to end
      expect(await store.deleteSession(live.idHash, m.id)).toBe(true);
      expect(await store.deleteSession(later.idHash)).toBe(true);
      expect(await store.findSession(live.idHash)).toBeNull();
      expect(await store.deleteSession(later.idHash)).toBe(false);
      expect(await store.listSessions(m.id)).toEqual([]);
    });

    it('keeps what a session was opened from (device, browser, OS, place) for its list; none for a session without it', async () => {
      const tenant = await newTenant();
      const m = await join(tenant.id, `c-${randomUUID()}@example.com`, 'viewer');
      const base = { memberId: m.id, tenantId: tenant.id, lastSeenAt: new Date(T0), expiresAt: new Date(T0 + 100_000) };
      const client = { device: 'mobile', browser: 'Mobile Safari', os: 'iOS', country: 'BR', region: 'São Paulo', city: 'São Paulo' };
      const phone = { ...base, idHash: hashToken(randomUUID()), createdAt: new Date(T0 + 2), client };
      const unknown = { ...base, idHash: hashToken(randomUUID()), createdAt: new Date(T0 + 1) };
      await store.createSession(phone);
      await store.createSession(unknown);
      expect((await store.listSessions(m.id)).map((s) => s.client)).toEqual([client, null]);
      expect((await store.findSession(phone.idHash))!.session.client).toEqual(client);
      // A part longer than any real name is cut, not refused: a sign-in never fails on its user agent.
      const long = { ...base, idHash: hashToken(randomUUID()), createdAt: new Date(T0 + 3), client: { ...client, browser: 'B'.repeat(500) } };
      await store.createSession(long);
      expect((await store.findSession(long.idHash))!.session.client!.browser).toBe('B'.repeat(100));
    });

    it('keeps a second factor: pending until enabled with its secret, each time step and recovery code used once, gone with the member', async () => {
      const tenant = await newTenant();
      const m = await join(tenant.id, `tf-${randomUUID()}@example.com`, 'owner');
      const other = await join(tenant.id, `tf2-${randomUUID()}@example.com`, 'viewer');
      expect(await store.secondFactorOf(m.id)).toBeNull();
      await store.setPendingSecondFactor(m.id, 'v1.first');
      await store.setPendingSecondFactor(m.id, 'v1.second');
      expect(await store.secondFactorOf(m.id)).toEqual({ secret: null, pending: 'v1.second', lastStep: null });
      expect(await store.useSecondFactorStep(m.id, 5)).toBe(false); // not enabled yet
      expect(await store.enableSecondFactor(m.id, 'v1.first', 100, ['h1'])).toBe(false); // replaced meanwhile
      expect(await store.enableSecondFactor(m.id, 'v1.second', 100, ['h1', 'h2'])).toBe(true);
      expect(await store.secondFactorOf(m.id)).toEqual({ secret: 'v1.second', pending: null, lastStep: 100 });
      expect(await store.useSecondFactorStep(m.id, 100)).toBe(false);
      const steps = await Promise.all([store.useSecondFactorStep(m.id, 101), store.useSecondFactorStep(m.id, 101)]);
      expect(steps.filter(Boolean)).toHaveLength(1);
      expect(await store.useRecoveryCode(other.id, 'h1')).toBe(false);
      const spent = await Promise.all([store.useRecoveryCode(m.id, 'h1'), store.useRecoveryCode(m.id, 'h1')]);
      expect(spent.filter(Boolean)).toHaveLength(1);
      await store.setPendingSecondFactor(m.id, 'v1.third'); // a new enrolment leaves the enabled one in place until confirmed
      expect(await store.secondFactorOf(m.id)).toMatchObject({ secret: 'v1.second', pending: 'v1.third' });
      await store.disableSecondFactor(m.id);
      expect(await store.secondFactorOf(m.id)).toBeNull();
      expect(await store.useRecoveryCode(m.id, 'h2')).toBe(false);
      await store.setPendingSecondFactor(other.id, 'v1.x');
      await store.enableSecondFactor(other.id, 'v1.x', 1, ['o1']);
      await store.changeRole(tenant.id, other.id, 'viewer', () => ({ audit: null }));
      await store.removeMember(tenant.id, other.id, () => ({ audit: null }));
      expect(await store.secondFactorOf(other.id)).toBeNull();
      expect(await store.useRecoveryCode(other.id, 'o1')).toBe(false);
    });
    it('changes a password and ends every other session of the member, with the entry, in one transaction', async () => {
      const tenant = await newTenant();
      const m = await join(tenant.id, `pw-${randomUUID()}@example.com`, 'editor');
      const other = await join(tenant.id, `pw2-${randomUUID()}@example.com`, 'editor');
      const sessionOf = (memberId: string) => ({
        idHash: hashToken(randomUUID()),
        memberId,
        tenantId: tenant.id,
        createdAt: new Date(T0),
        lastSeenAt: new Date(T0),
        expiresAt: new Date(T0 + 60_000),
      });
      const [kept, ended1, ended2, theirs] = [sessionOf(m.id), sessionOf(m.id), sessionOf(m.id), sessionOf(other.id)];
      for (const s of [kept, ended1, ended2, theirs]) await store.createSession(s);
      expect(await store.passwordHashOf(m.id)).toBe(`hash-of-${m.email}`);
      expect(await store.changePassword(m.id, 'new-hash', kept.idHash, entry(tenant.id, 'member.password_changed', m.id))).toBe(2);
      expect(await store.passwordHashOf(m.id)).toBe('new-hash');
      expect(await store.findSession(kept.idHash)).not.toBeNull();
      expect(await store.findSession(ended1.idHash)).toBeNull();
      expect(await store.findSession(ended2.idHash)).toBeNull();
      expect(await store.findSession(theirs.idHash)).not.toBeNull();
      expect((await fx.actionsOf(tenant.id)).slice(-1)).toEqual(['member.password_changed']);
      expect(await store.passwordHashOf('nobody')).toBeNull();
    });
  });
}
