import { randomUUID } from 'crypto';
import { auditEntry, AuditLogStore, SYSTEM_ACTOR } from '@shortlink/audit-domain';
import { DomainOwnershipStore, hashApiKey, operatorAssignedDomain, OwnershipState, Tenant, TenantDomain, TenantStore } from '@shortlink/tenants-domain';

const aDomain = () => `o${randomUUID().slice(0, 8)}.example.com`;
const aTenant = (): Tenant => ({ id: randomUUID(), name: 'acme', plan: 'free', status: 'active', createdAt: new Date(Math.floor(Date.now() / 1000) * 1000) });
/**
 * Each test's checks are due in a year drawn between 1100 and 1900: a shared meta database holds the
 * domains of apps running now, due now, which a test must never take. Each test removes its domains
 * at its end, and looks only at its own among those it takes.
 */
const anotherYear = () => Date.UTC(1100 + Math.floor(Math.random() * 800), 0, 1);
const ownOf = (taken: readonly TenantDomain[], ...mine: TenantDomain[]) => taken.map((d) => d.domain).filter((d) => mine.some((m) => m.domain === d));

function pending(tenantId: string, due: number, overrides: Partial<TenantDomain> = {}): TenantDomain {
  return {
    ...operatorAssignedDomain(aDomain(), tenantId, new Date(due - 60_000)),
    token: randomUUID().replace(/-/g, ''),
    status: 'pending',
    verifiedBy: null,
    verifiedAt: null,
    nextCheckAt: new Date(due),
    retryUntil: new Date(due + 86_400_000),
    ...overrides,
  };
}

/**
 * One behaviour, every backend (docs/design.md, "Custom domains and TLS"): SQLite and the in-memory
 * double in unit runs, the MySQL meta database in integration runs. `tenants` and `audit` are the
 * tenant store and the audit log of the same meta database.
 */
export function describeDomainOwnershipStoreContract(
  backend: string,
  open: () => Promise<{ ownership: DomainOwnershipStore; tenants: TenantStore; audit: AuditLogStore; close(): Promise<void> }>,
) {
  describe(`domain ownership store contract: ${backend}`, () => {
    let store: DomainOwnershipStore;
    let tenants: TenantStore;
    let audit: AuditLogStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ ownership: store, tenants, audit, close } = await open());
    });
    afterAll(() => close());

    const newTenant = async () => {
      const tenant = aTenant();
      await tenants.createWithApiKey(tenant, hashApiKey(randomUUID()), {
        id: randomUUID(),
        name: 'k',
        prefix: 'sl_x',
        scopes: ['links:read'],
        expiresAt: null,
        person: null,
      });
      return tenant;
    };
    /** A test's domains go at its end: no later test takes them. */
    const removeAll = async (tenantId: string) => {
      for (const d of await store.listOf(tenantId)) await tenants.removeDomain(tenantId, d.domain);
    };
    const entry = (log: string, action: 'domain.added' | 'domain.verified', domain: string) =>
      auditEntry({ actor: SYSTEM_ACTOR, clientAddress: null }, { log, action, target: { type: 'domain', id: domain, domain } }, new Date());

    it('adds a pending domain with its entry, once, and the redirect’s table sees its status and token', async () => {
      const tenant = await newTenant();
      const other = await newTenant();
      const domain = pending(tenant.id, anotherYear());
      expect(await store.claim(domain, 5, entry(tenant.id, 'domain.added', domain.domain))).toBe('added');
      expect(await store.claim({ ...domain, tenantId: other.id }, 5)).toBe('taken');
      expect(await store.claim(domain, 5)).toBe('taken');
      expect(await store.find(domain.domain)).toEqual(domain);
      expect(await store.listOf(tenant.id)).toEqual([domain]);
      expect(await store.listOf(other.id)).toEqual([]);
      expect(await tenants.allDomains()).toContainEqual({ domain: domain.domain, tenantId: tenant.id, status: 'pending', token: domain.token });
      expect((await audit.list({ log: tenant.id, after: null, limit: 10 })).map((e) => `${e.action} ${e.target.id}`)).toEqual([
        `domain.added ${domain.domain}`,
      ]);
      expect(await store.find(aDomain())).toBeNull();
      await removeAll(tenant.id);
    });

    it('holds a tenant to its cap, also when it adds several at once; an operator’s domain counts', async () => {
      const tenant = await newTenant();
      await tenants.addDomain(tenant.id, aDomain());
      const due = anotherYear();
      const attempts = await Promise.all(Array.from({ length: 5 }, () => store.claim(pending(tenant.id, due), 3)));
      expect(attempts.filter((r) => r === 'added')).toHaveLength(2);
      expect(attempts.filter((r) => r === 'limit_reached')).toHaveLength(3);
      expect(await store.listOf(tenant.id)).toHaveLength(3);
      const operators = (await store.listOf(tenant.id)).find((d) => d.verifiedBy === 'operator');
      expect(operators).toMatchObject({ status: 'verified', token: null, nextCheckAt: null, failures: 0 });
      // Another tenant has its own count.
      const other = await newTenant();
      expect(await store.claim(pending(other.id, due), 3)).toBe('added');
      await removeAll(tenant.id);
      await removeAll(other.id);
    });

    it('gives each due check to one holder until its lease ends, then to another; only the holder stores the outcome', async () => {
      const tenant = await newTenant();
      const due = anotherYear();
      const [a, b, later] = [pending(tenant.id, due), pending(tenant.id, due + 1000), pending(tenant.id, due + 3_600_000)];
      for (const d of [a, b, later]) await store.claim(d, 10);
      const now = new Date(due + 5000);
      const lease = new Date(due + 65_000);
      const [first, second] = await Promise.all([store.takeDue(now, lease, 'one', 10), store.takeDue(now, lease, 'two', 10)]);
      expect(ownOf([...first, ...second], a, b, later).sort()).toEqual([a.domain, b.domain].sort());
      expect(ownOf(await store.takeDue(now, lease, 'three', 10), a, b, later)).toEqual([]);
      const holderOfA = first.some((d) => d.domain === a.domain) ? 'one' : 'two';
      const checked: OwnershipState = {
        ...a,
        status: 'verified',
        verifiedBy: 'dns',
        verifiedAt: now,
        checkedAt: now,
        nextCheckAt: new Date(due + 7_200_000),
        retryUntil: null,
      };
      expect(await store.saveCheck(a.domain, 'nobody', checked)).toBe(false);
      expect(await store.saveCheck(a.domain, holderOfA, checked, entry(tenant.id, 'domain.verified', a.domain))).toBe(true);
      expect(await store.saveCheck(a.domain, holderOfA, checked)).toBe(false); // let go: nothing more from it
      // After the lease, another holder takes b (a is scheduled later now); the first holder's outcome is no longer stored.
      const afterLease = new Date(due + 70_000);
      const retaken = await store.takeDue(afterLease, new Date(due + 130_000), 'three', 100);
      expect(ownOf(retaken, a, b, later)).toEqual([b.domain]);
      const holderOfB = first.some((d) => d.domain === b.domain) ? 'one' : 'two';
      expect(await store.saveCheck(b.domain, holderOfB, { ...b, failures: 1 })).toBe(false);
      expect(await store.saveCheck(b.domain, 'three', { ...b, failures: 1, nextCheckAt: new Date(due + 200_000) })).toBe(true);
      expect(await store.find(a.domain)).toMatchObject({ status: 'verified', verifiedBy: 'dns', nextCheckAt: new Date(due + 7_200_000), retryUntil: null });
      expect(await store.find(b.domain)).toMatchObject({ status: 'pending', failures: 1, nextCheckAt: new Date(due + 200_000) });
      expect((await tenants.allDomains()).find((d) => d.domain === a.domain)?.status).toBe('verified');
      expect((await audit.list({ log: tenant.id, after: null, limit: 10 })).map((e) => e.action)).toEqual(['domain.verified']);
      // Not due yet: `later` stays.
      expect(ownOf(await store.takeDue(new Date(due + 200_000), new Date(due + 260_000), 'four', 100), a, b, later)).toEqual([b.domain]);
      await removeAll(tenant.id);
    });

    it('takes a check asked for now unless another holder’s lease runs, and only for the tenant’s own domain', async () => {
      const tenant = await newTenant();
      const due = anotherYear();
      const d = pending(tenant.id, due + 86_400_000);
      await store.claim(d, 10);
      const now = new Date(due);
      expect(await store.takeNow((await newTenant()).id, d.domain, now, new Date(due + 60_000), 'x')).toBeNull();
      expect(await store.takeNow(tenant.id, d.domain, now, new Date(due + 60_000), 'x')).toMatchObject({ domain: d.domain, status: 'pending' });
      expect(await store.takeNow(tenant.id, d.domain, new Date(due + 1000), new Date(due + 61_000), 'y')).toBeNull();
      expect(await store.takeNow(tenant.id, d.domain, new Date(due + 60_001), new Date(due + 120_000), 'y')).not.toBeNull();
      expect(await store.saveCheck(d.domain, 'x', d)).toBe(false);
      expect(await store.saveCheck(d.domain, 'y', { ...d, nextCheckAt: null })).toBe(true);
      // Let go and not scheduled: taken again at once.
      expect(await store.takeNow(tenant.id, d.domain, new Date(due + 60_002), new Date(due + 120_000), 'z')).not.toBeNull();
      await removeAll(tenant.id);
    });

    it('undoes a change of status whose entry cannot be stored', async () => {
      const tenant = await newTenant();
      const due = anotherYear();
      const d = pending(tenant.id, due);
      const taken = entry(tenant.id, 'domain.added', d.domain);
      await store.claim(d, 10, taken);
      await expect(store.claim(pending(tenant.id, due), 10, taken)).rejects.toBeTruthy();
      expect(await store.listOf(tenant.id)).toHaveLength(1);
      expect(await store.takeNow(tenant.id, d.domain, new Date(due), new Date(due + 60_000), 'h')).not.toBeNull();
      await expect(store.saveCheck(d.domain, 'h', { ...d, status: 'verified', verifiedBy: 'http' }, taken)).rejects.toBeTruthy();
      expect((await store.find(d.domain))?.status).toBe('pending');
      expect(await store.saveCheck(d.domain, 'h', { ...d, status: 'verified', verifiedBy: 'http', nextCheckAt: null })).toBe(true);
      await removeAll(tenant.id);
    });

    it('keeps the certificate read from the front; lists verified domains with theirs', async () => {
      const tenant = await newTenant();
      const due = anotherYear();
      const verified = pending(tenant.id, due, { status: 'verified', verifiedBy: 'dns', verifiedAt: new Date(due) });
      const waiting = pending(tenant.id, due);
      await store.claim(verified, 10);
      await store.claim(waiting, 10);
      const certificate = { expiresAt: new Date(due + 90 * 86_400_000), fingerprint: 'ab'.repeat(32), checkedAt: new Date(due + 1000), error: null };
      await store.saveCertificate(verified.domain, certificate);
      expect((await store.find(verified.domain))?.certificate).toEqual(certificate);
      const failed = { ...certificate, checkedAt: new Date(due + 2000), error: 'no certificate served' };
      await store.saveCertificate(verified.domain, failed);
      const listed = (await store.certificates()).filter((c) => [verified.domain, waiting.domain].includes(c.domain));
      expect(listed).toEqual([{ domain: verified.domain, certificate: failed }]);
      // Removed, its certificate goes with it.
      expect(await tenants.removeDomain(tenant.id, verified.domain)).toBe(true);
      expect(await store.find(verified.domain)).toBeNull();
      expect((await store.certificates()).some((c) => c.domain === verified.domain)).toBe(false);
      await removeAll(tenant.id);
    });
  });
}
