import { randomUUID } from 'crypto';
import { auditEntry } from '@shortlink/audit-domain';
import { hashToken, PeopleStore } from '@shortlink/people-domain';
import { hashApiKey, KeyPerson, NewApiKey, Role, Tenant, TenantStore } from '@shortlink/tenants-domain';

const second = () => new Date(Math.floor(Date.now() / 1000) * 1000);
const aTenant = (overrides: Partial<Tenant> = {}): Tenant => ({
  id: randomUUID(),
  name: 'acme',
  plan: 'free',
  status: 'active',
  createdAt: second(),
  ...overrides,
});
const aKey = (overrides: Partial<NewApiKey> = {}): NewApiKey => ({
  id: randomUUID(),
  name: 'ci',
  prefix: 'sl_abcdefg',
  scopes: ['links:read', 'links:write'],
  expiresAt: null,
  person: null,
  ...overrides,
});
const aDomain = () => `t${randomUUID().slice(0, 8)}.example.com`;

const joined = { actor: { type: 'system' as const, id: 'system', name: 'system' }, clientAddress: null };

/**
 * One behaviour, every backend: SQLite in unit runs, the MySQL meta database in integration runs.
 * `people` is the same meta database's members (a key's person is read from them).
 */
export function describeTenantStoreContract(backend: string, open: () => Promise<{ tenants: TenantStore; people: PeopleStore; close(): Promise<void> }>) {
  describe(`tenant store contract: ${backend}`, () => {
    let store: TenantStore;
    let people: PeopleStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ tenants: store, people, close } = await open());
    });
    afterAll(() => close());

    /** A member of the tenant: invited, and active unless told otherwise. */
    const member = async (tenantId: string, role: Role, active = true): Promise<KeyPerson> => {
      const id = randomUUID();
      const email = `${role}-${id.slice(0, 8)}@example.com`;
      const token = `inv_${randomUUID()}`;
      const expires = new Date(Date.now() + 3_600_000);
      await people.invite({ id, tenantId, email, role, createdAt: second(), invitationHash: hashToken(token), invitationExpiresAt: expires });
      if (active) {
        const entry = (m: { id: string }) =>
          auditEntry(joined, { log: tenantId, action: 'member.joined', target: { type: 'member', id: m.id, domain: null } }, new Date());
        expect(await people.acceptInvitation(hashToken(token), '$argon2id$not-checked-here', new Date(), entry)).not.toBeNull();
      }
      return { id, email, role };
    };

    it('answers a key with the person it acts for as that member is now: a new role, none once removed; knows whether the tenant has an owner', async () => {
      const tenant = aTenant();
      const firstHash = hashApiKey(randomUUID());
      await store.createWithApiKey(tenant, firstHash, aKey({ name: 'first' }));
      expect(await store.findByKeyHash(firstHash)).toMatchObject({ key: { memberId: null, person: null }, tenantHasOwner: false });
      expect(await store.hasActiveOwner(tenant.id)).toBe(false);
      await member(tenant.id, 'owner', false); // invited only: not an owner yet
      expect(await store.hasActiveOwner(tenant.id)).toBe(false);
      const owner = await member(tenant.id, 'owner');
      expect(await store.hasActiveOwner(tenant.id)).toBe(true);
      expect((await store.findByKeyHash(firstHash))?.tenantHasOwner).toBe(true);

      const admin = await member(tenant.id, 'admin');
      const hash = hashApiKey(randomUUID());
      const added = (await store.addKey(tenant.id, hash, aKey({ name: 'admin ci', person: admin })))!;
      expect(added).toMatchObject({ name: 'admin ci', memberId: admin.id, person: admin });
      expect(await store.findByKeyHash(hash)).toMatchObject({
        key: { id: added.id, memberId: admin.id, person: admin },
        tenant: { id: tenant.id },
        tenantHasOwner: true,
      });
      expect(await store.findKey(tenant.id, added.id)).toMatchObject({ key: { id: added.id, person: admin }, tenantHasOwner: true });
      expect(await store.findKey(aTenant().id, added.id)).toBeNull();
      expect((await store.listKeys(tenant.id)).map((k) => [k.name, k.person?.email ?? null])).toEqual([
        ['first', null],
        ['admin ci', admin.email],
      ]);

      expect((await people.changeRole(tenant.id, admin.id, 'editor', () => ({}))).outcome).toBe('changed');
      expect((await store.findByKeyHash(hash))?.key.person).toEqual({ ...admin, role: 'editor' });
      expect((await people.removeMember(tenant.id, admin.id, () => ({}))).outcome).toBe('changed');
      expect((await store.findByKeyHash(hash))?.key).toMatchObject({ memberId: admin.id, person: null });
      expect((await store.findKey(tenant.id, added.id))?.key).toMatchObject({ memberId: admin.id, person: null });
      expect((await store.listKeys(tenant.id)).find((k) => k.id === added.id)).toMatchObject({ memberId: admin.id, person: null });

      // A member of another tenant, or one still invited, is no person for this tenant's key.
      const other = aTenant();
      await store.createWithApiKey(other, hashApiKey(randomUUID()), aKey());
      const stranger = await member(other.id, 'owner');
      const invited = await member(tenant.id, 'editor', false);
      for (const person of [stranger, invited]) {
        const h = hashApiKey(randomUUID());
        await store.addKey(tenant.id, h, aKey({ person }));
        expect((await store.findByKeyHash(h))?.key).toMatchObject({ memberId: person.id, person: null });
      }
      expect((await store.findByKeyHash(firstHash))?.key.person).toBeNull();
      expect(owner.role).toBe('owner');
    });

    it('hands a key over to an active member under the tenant’s lock as decided; refuses unknown and revoked keys, and members not active here', async () => {
      const tenant = aTenant();
      await store.createWithApiKey(tenant, hashApiKey(randomUUID()), aKey({ name: 'first' }));
      const editor = await member(tenant.id, 'editor');
      const owner = await member(tenant.id, 'owner');
      const hash = hashApiKey(randomUUID());
      const key = (await store.addKey(tenant.id, hash, aKey({ name: 'ci', person: editor })))!;
      await people.removeMember(tenant.id, editor.id, () => ({}));
      const seen: Array<[string | null, string | null, string]> = [];
      const refuse = () => ({ refuse: true as const });
      expect(await store.transferKey(tenant.id, key.id, owner.id, refuse)).toEqual({ outcome: 'refused' });
      expect((await store.findByKeyHash(hash))?.key.memberId).toBe(editor.id);
      const entry = auditEntry(joined, { log: tenant.id, action: 'key.transferred', target: { type: 'key', id: key.id, domain: null } }, new Date());
      const moved = await store.transferKey(tenant.id, key.id, owner.id, (before, to) => {
        seen.push([before.memberId, before.person?.email ?? null, to.email]);
        return { audit: entry };
      });
      expect(seen).toEqual([[editor.id, null, owner.email]]);
      expect(moved).toEqual({ outcome: 'transferred', key: expect.objectContaining({ id: key.id, memberId: owner.id, person: owner, scopes: key.scopes }) });
      expect(await store.findByKeyHash(hash)).toMatchObject({ key: { memberId: owner.id, person: owner } });
      // Not to a member who is removed, invited, of another tenant or unknown; not a revoked or unknown key.
      const gone = await member(tenant.id, 'viewer');
      await people.removeMember(tenant.id, gone.id, () => ({}));
      const invited = await member(tenant.id, 'viewer', false);
      const other = aTenant();
      await store.createWithApiKey(other, hashApiKey(randomUUID()), aKey());
      const stranger = await member(other.id, 'owner');
      for (const to of [gone.id, invited.id, stranger.id, randomUUID()])
        expect(await store.transferKey(tenant.id, key.id, to, () => ({}))).toEqual({ outcome: 'member_not_found' });
      expect(await store.transferKey(other.id, key.id, stranger.id, () => ({}))).toEqual({ outcome: 'key_not_found' });
      await store.revokeKey(tenant.id, key.id, second());
      expect(await store.transferKey(tenant.id, key.id, owner.id, () => ({}))).toEqual({ outcome: 'key_not_found' });
      expect(await store.transferKey(tenant.id, randomUUID(), owner.id, () => ({}))).toEqual({ outcome: 'key_not_found' });
      expect((await store.findByKeyHash(hash))?.key.memberId).toBe(owner.id);
    });

    it('creates a tenant with its first key once and finds both by the key hash', async () => {
      const tenant = aTenant();
      const key = aKey({ expiresAt: new Date(Date.now() + 86_400_000) });
      const hash = hashApiKey('sl_' + randomUUID());
      const before = await store.countTenants();
      expect(await store.createWithApiKey(tenant, hash, key)).toBe(true);
      expect(await store.createWithApiKey(aTenant(), hash, aKey())).toBe(false);
      const found = await store.findByKeyHash(hash);
      expect(found?.tenant).toEqual(tenant);
      expect(found?.key).toMatchObject({
        id: key.id,
        tenantId: tenant.id,
        name: 'ci',
        prefix: 'sl_abcdefg',
        scopes: ['links:read', 'links:write'],
        revokedAt: null,
      });
      expect(found?.key.expiresAt?.getTime()).toBe(key.expiresAt!.getTime());
      expect(found?.key.createdAt.getTime()).toBe(tenant.createdAt.getTime()); // the first key is as old as its tenant
      expect(await store.findByKeyHash(hashApiKey('unknown'))).toBeNull();
      expect(await store.countTenants()).toBe(before + 1);
    });

    it('adds, lists and revokes keys; a revoked key stays listed with its time', async () => {
      const tenant = aTenant();
      await store.createWithApiKey(tenant, hashApiKey(randomUUID()), aKey({ name: 'first' }));
      const secondHash = hashApiKey(randomUUID());
      const added = (await store.addKey(tenant.id, secondHash, aKey({ name: 'second', scopes: ['analytics:read'] })))!;
      expect(added).toMatchObject({ tenantId: tenant.id, name: 'second', scopes: ['analytics:read'], revokedAt: null });
      expect((await store.listKeys(tenant.id)).map((k) => k.name).sort()).toEqual(['first', 'second']);
      const at = second();
      expect(await store.revokeKey(tenant.id, added.id, at)).toBe(true);
      expect(await store.revokeKey(tenant.id, added.id, at)).toBe(false);
      expect(await store.revokeKey(randomUUID(), (await store.listKeys(tenant.id))[0].id, at)).toBe(false);
      expect((await store.findByKeyHash(secondHash))?.key.revokedAt?.getTime()).toBe(at.getTime());
      expect((await store.listKeys(tenant.id)).find((k) => k.id === added.id)?.revokedAt?.getTime()).toBe(at.getTime());
    });

    it('restores a key (the bootstrap key at boot): its scopes, unrevoked, without expiry, its tenant active', async () => {
      const tenant = aTenant();
      const hash = hashApiKey(randomUUID());
      await store.createWithApiKey(tenant, hash, aKey({ scopes: ['links:write'], expiresAt: new Date(Date.now() + 60_000) }));
      const other = aTenant();
      const otherHash = hashApiKey(randomUUID());
      await store.createWithApiKey(other, otherHash, aKey({ scopes: ['links:read'] }));
      await store.updateTenant(other.id, { status: 'suspended' });
      await store.revokeKey(tenant.id, (await store.findByKeyHash(hash))!.key.id, second());
      await store.updateTenant(tenant.id, { status: 'suspended' });
      await store.restoreKey(hash, ['links:read', 'admin']);
      expect(await store.findByKeyHash(hash)).toMatchObject({
        key: { scopes: ['links:read', 'admin'], revokedAt: null, expiresAt: null, memberId: null, person: null },
        tenant: { id: tenant.id, status: 'active' },
      });
      // Nobody else is touched, and an unknown key restores nothing.
      expect(await store.findByKeyHash(otherHash)).toMatchObject({ key: { scopes: ['links:read'] }, tenant: { status: 'suspended' } });
      await store.restoreKey(hashApiKey(randomUUID()), ['admin']);
      expect(await store.suspendedTenantIds()).toContain(other.id);
    });

    it('adds a key under a cap only while the tenant has fewer active keys, also when asked at once', async () => {
      const tenant = aTenant();
      await store.createWithApiKey(tenant, hashApiKey(randomUUID()), aKey({ name: 'first' }));
      const now = new Date();
      const cap = { maxActive: 3, now };
      // An expired key and a revoked one do not count.
      await store.addKey(tenant.id, hashApiKey(randomUUID()), aKey({ name: 'expired', expiresAt: new Date(now.getTime() - 1000) }));
      const revoked = (await store.addKey(tenant.id, hashApiKey(randomUUID()), aKey({ name: 'revoked' })))!;
      await store.revokeKey(tenant.id, revoked.id, second());
      const attempts = await Promise.all(Array.from({ length: 5 }, (_, i) => store.addKey(tenant.id, hashApiKey(randomUUID()), aKey({ name: `k${i}` }), cap)));
      expect(attempts.filter((k) => k !== null)).toHaveLength(2);
      expect(await store.addKey(tenant.id, hashApiKey(randomUUID()), aKey({ name: 'one more' }), cap)).toBeNull();
      expect((await store.listKeys(tenant.id)).filter((k) => k.revokedAt === null && (k.expiresAt === null || k.expiresAt > now))).toHaveLength(3);
      // Another tenant has its own count; without a cap nothing is counted.
      const other = aTenant();
      await store.createWithApiKey(other, hashApiKey(randomUUID()), aKey());
      expect(await store.addKey(other.id, hashApiKey(randomUUID()), aKey(), cap)).not.toBeNull();
      expect(await store.addKey(tenant.id, hashApiKey(randomUUID()), aKey({ name: 'uncapped' }))).not.toBeNull();
    });

    it('updates plan, status and name; lists tenants after a cursor; knows the suspended ones', async () => {
      // Two ids next to each other: nothing another test or run stored can sort between them.
      const tenant = aTenant({ id: randomUUID().slice(0, -1) + '0' });
      const next = aTenant({ id: tenant.id.slice(0, -1) + '1' });
      await store.createWithApiKey(tenant, hashApiKey(randomUUID()), aKey());
      await store.createWithApiKey(next, hashApiKey(randomUUID()), aKey());
      expect(await store.updateTenant(tenant.id, { plan: 'paid', status: 'suspended', name: 'Acme Ltd' })).toEqual({
        ...tenant,
        plan: 'paid',
        status: 'suspended',
        name: 'Acme Ltd',
      });
      expect(await store.updateTenant(randomUUID(), { plan: 'paid' })).toBeNull();
      expect(await store.suspendedTenantIds()).toContain(tenant.id);
      await store.updateTenant(tenant.id, { status: 'active' });
      expect(await store.suspendedTenantIds()).not.toContain(tenant.id);
      const page = await store.listTenants(null, 1000);
      expect(page.length).toBeGreaterThan(1);
      expect(page.map((t) => t.id)).toEqual([...page.map((t) => t.id)].sort());
      expect((await store.listTenants(tenant.id.slice(0, -1), 2)).map((t) => t.id)).toEqual([tenant.id, next.id]);
      expect((await store.listTenants(tenant.id, 1)).map((t) => t.id)).toEqual([next.id]);
      expect(await store.findTenant(tenant.id)).toMatchObject({ name: 'Acme Ltd', plan: 'paid', status: 'active' });
    });

    it('gives a domain to one tenant only and forgets it on removal', async () => {
      const owner = aTenant();
      const other = aTenant();
      await store.createWithApiKey(owner, hashApiKey(randomUUID()), aKey());
      await store.createWithApiKey(other, hashApiKey(randomUUID()), aKey());
      const domain = aDomain();
      expect(await store.addDomain(owner.id, domain)).toBe(true);
      expect(await store.addDomain(other.id, domain)).toBe(false);
      // An operator's domain: verified by the operator, with no token (nothing to prove).
      expect(await store.allDomains()).toContainEqual({ domain, tenantId: owner.id, status: 'verified', token: null });
      expect(await store.removeDomain(other.id, domain)).toBe(false);
      expect(await store.removeDomain(owner.id, domain)).toBe(true);
      expect((await store.allDomains()).map((d) => d.domain)).not.toContain(domain);
    });

    it('keeps the operators’ block list with reasons', async () => {
      const domain = aDomain();
      expect(await store.blockDomain(domain, 'phishing reports')).toBe(true);
      expect(await store.blockDomain(domain, 'again')).toBe(false);
      expect((await store.blockedDomains()).find((d) => d.domain === domain)).toMatchObject({ domain, reason: 'phishing reports' });
      expect(await store.unblockDomain(domain)).toBe(true);
      expect(await store.unblockDomain(domain)).toBe(false);
      expect((await store.blockedDomains()).map((d) => d.domain)).not.toContain(domain);
    });
  });
}
