import { randomUUID } from 'crypto';
import { AuditAction, AuditEntry, auditEntry, AuditLogStore, StoredAuditEntry } from '@shortlink/audit-domain';
import { defaultSettingsOf, DomainSettingsStore, hashApiKey, NewApiKey, Tenant, TenantStore } from '@shortlink/tenants-domain';

const T0 = Date.UTC(2026, 0, 15, 10, 0, 0, 123);
const context = { actor: { type: 'key' as const, id: 'key-1', name: 'ci key' }, clientAddress: '203.0.113.7' };

/** An entry of `log` at T0 + `offsetMs`, with overridable facts. */
function anEntry(log: string, offsetMs: number, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    ...auditEntry(context, { log, action: 'link.created', target: { type: 'link', id: 'abc', domain: 'sho.rt' } }, new Date(T0 + offsetMs)),
    ...overrides,
  };
}

const ids = (entries: StoredAuditEntry[]) => entries.map((e) => e.id);

/** One behaviour, every backend: SQLite in unit runs, the MySQL meta database in integration runs (docs/design.md, "Audit log"). */
export function describeAuditLogStoreContract(backend: string, open: () => Promise<{ audit: AuditLogStore; close(): Promise<void> }>) {
  describe(`audit log store contract: ${backend}`, () => {
    let store: AuditLogStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ audit: store, close } = await open());
    });
    afterAll(() => close());

    it('stores every field of an entry and gives a log back newest first, by time then by append order, other logs apart', async () => {
      const log = randomUUID();
      const full = anEntry(log, 5, {
        actor: { type: 'person', id: 'p-1', name: 'ana@example.com' },
        action: 'link.edited',
        target: { type: 'link', id: 'Promo-1', domain: 'go.acme.test' },
        clientAddress: '2001:db8::7',
        changes: { title: { from: 'a', to: 'b' }, tags: { from: [], to: ['x'] }, maxClicks: { from: null, to: 5 } },
        details: { passwordChanged: true, count: 3 },
      });
      const bare = anEntry(log, 5, { target: { type: 'links', id: null, domain: null }, clientAddress: null, changes: null, details: null });
      const older = anEntry(log, 0);
      const newer = anEntry(log, 1000, { actor: { type: 'key', id: 'key-2', name: 'deploy', onBehalfOf: { id: 'p-1', name: 'ana@example.com' } } });
      await store.append([older, full]);
      await store.append([bare, newer, anEntry(randomUUID(), 2000)]);
      const listed = await store.list({ log, after: null, limit: 10 });
      expect(ids(listed)).toEqual([newer.id, bare.id, full.id, older.id]); // full and bare share a millisecond: the later append first
      const { seq, ...stored } = listed.find((e) => e.id === full.id)!;
      expect(stored).toEqual(full);
      expect(seq).toMatch(/^\d+$/);
      // A key's entry names the person behind it.
      expect(listed[0].actor).toEqual({ type: 'key', id: 'key-2', name: 'deploy', onBehalfOf: { id: 'p-1', name: 'ana@example.com' } });
      expect(listed.find((e) => e.id === bare.id)).toMatchObject({
        target: { type: 'links', id: null, domain: null },
        clientAddress: null,
        changes: null,
        details: null,
      });
    });

    it('pages after a position, through entries of the same millisecond, without skipping or repeating', async () => {
      const log = randomUUID();
      const entries = Array.from({ length: 7 }, (_, i) => anEntry(log, i < 5 ? 0 : i));
      await store.append(entries);
      const seen: string[] = [];
      let after: { at: Date; seq: string } | null = null;
      for (let page = 0; page < 5; page++) {
        const got: StoredAuditEntry[] = await store.list({ log, after, limit: 2 });
        seen.push(...ids(got));
        if (got.length < 2) break;
        after = { at: got[got.length - 1].at, seq: got[got.length - 1].seq };
      }
      expect(seen).toEqual([entries[6], entries[5], entries[4], entries[3], entries[2], entries[1], entries[0]].map((e) => e.id));
    });

    it('filters by actor, target, action or action family, and a time range (from inclusive, to exclusive)', async () => {
      const log = randomUUID();
      const made = (offset: number, action: AuditAction, actorId: string, targetId: string | null) =>
        anEntry(log, offset, { action, actor: { type: 'key', id: actorId, name: actorId }, target: { type: 'link', id: targetId, domain: 'sho.rt' } });
      const a = made(0, 'link.created', 'k1', 'abc');
      const b = made(10, 'link.edited', 'k2', 'abc');
      const c = made(20, 'key.created', 'k1', 'key-9');
      const d = made(30, 'link.bulk_deleted', 'k1', null);
      // A family is the part before the dot, exactly: `link` is neither `links` nor `link_x`.
      const e = made(40, 'shared_domain.settings_changed', 'k1', 'sho.rt');
      await store.append([a, b, c, d, e]);
      const list = async (filters: object) => ids(await store.list({ log, after: null, limit: 10, ...filters }));
      expect(await list({ actorId: 'k1' })).toEqual([e.id, d.id, c.id, a.id]);
      expect(await list({ targetId: 'abc' })).toEqual([b.id, a.id]);
      expect(await list({ action: 'link.edited' })).toEqual([b.id]);
      expect(await list({ actionFamily: 'link' })).toEqual([d.id, b.id, a.id]);
      expect(await list({ actionFamily: 'shared_domain' })).toEqual([e.id]);
      expect(await list({ actionFamily: 'key', actorId: 'k1' })).toEqual([c.id]);
      expect(await list({ from: new Date(T0 + 10), to: new Date(T0 + 30) })).toEqual([c.id, b.id]);
      expect(await list({ actorId: 'nobody' })).toEqual([]);
    });

    it('stores every entry of appends made at once, each append whole (docs/design.md, "Group commit")', async () => {
      const log = randomUUID();
      const appends = Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? [anEntry(log, i * 10), anEntry(log, i * 10 + 1)] : [anEntry(log, i * 10)]));
      await Promise.all(appends.map((entries) => store.append(entries)));
      const stored = await store.list({ log, after: null, limit: 100 });
      expect(new Set(ids(stored))).toEqual(new Set(appends.flat().map((e) => e.id)));
    });

    it('stores an entry appended twice once (a retried append)', async () => {
      const log = randomUUID();
      const entry = anEntry(log, 0);
      await store.append([entry]);
      await store.append([entry, anEntry(log, 1)]);
      expect(await store.list({ log, after: null, limit: 10 })).toHaveLength(2);
    });

    it('deletes entries older than a time, oldest first, at most a batch at a time', async () => {
      const log = randomUUID();
      // Far in the past, so entries of other tests and runs are not older than the cut-off.
      const old = (offset: number) => anEntry(log, offset - 40 * 365 * 86_400_000);
      const entries = [old(0), old(1), old(2), old(3)];
      await store.append(entries);
      const cutoff = new Date(entries[3].at.getTime());
      expect(await store.purgeBefore(cutoff, 2)).toBe(2);
      expect(ids(await store.list({ log, after: null, limit: 10 }))).toEqual([entries[3].id, entries[2].id]);
      expect(await store.purgeBefore(cutoff, 2)).toBe(1);
      expect(ids(await store.list({ log, after: null, limit: 10 }))).toEqual([entries[3].id]);
    });
  });
}

const aTenant = (): Tenant => ({ id: randomUUID(), name: 'acme', plan: 'free', status: 'active', createdAt: new Date(Math.floor(Date.now() / 1000) * 1000) });
const aKey = (): NewApiKey => ({ id: randomUUID(), name: 'ci', prefix: 'sl_abcdefg', scopes: ['links:read'], expiresAt: null, person: null });

/**
 * The tenant store writes a change's entry in the change's transaction (docs/design.md, "Audit
 * log"): the entry exists exactly when the change does, and an entry that cannot be stored undoes the change.
 */
export function describeTransactionalAuditContract(
  backend: string,
  open: () => Promise<{ tenants: TenantStore; settings: DomainSettingsStore; audit: AuditLogStore; close(): Promise<void> }>,
) {
  describe(`tenant changes and their audit entries, one transaction: ${backend}`, () => {
    let tenants: TenantStore;
    let settings: DomainSettingsStore;
    let audit: AuditLogStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ tenants, settings, audit, close } = await open());
    });
    afterAll(() => close());

    const entryOf = (log: string, action: AuditAction, id: string) =>
      auditEntry(context, { log, action, target: { type: 'key', id, domain: null } }, new Date());
    const logOf = async (log: string) => (await audit.list({ log, after: null, limit: 50 })).map((e) => `${e.action} ${e.target.id}`);

    it('writes the entry of a change that happens, and none for one that does not', async () => {
      const tenant = aTenant();
      const log = tenant.id;
      expect(await tenants.createWithApiKey(tenant, hashApiKey(randomUUID()), aKey(), entryOf(log, 'tenant.created', tenant.id))).toBe(true);
      const key = aKey();
      await tenants.addKey(tenant.id, hashApiKey(randomUUID()), key, { maxActive: 2, now: new Date() }, entryOf(log, 'key.created', key.id));
      const refused = aKey();
      expect(
        await tenants.addKey(tenant.id, hashApiKey(randomUUID()), refused, { maxActive: 2, now: new Date() }, entryOf(log, 'key.created', refused.id)),
      ).toBeNull();
      expect(await tenants.revokeKey(tenant.id, key.id, new Date(), entryOf(log, 'key.revoked', key.id))).toBe(true);
      expect(await tenants.revokeKey(tenant.id, key.id, new Date(), entryOf(log, 'key.revoked', 'again'))).toBe(false);
      const domain = `a${randomUUID().slice(0, 8)}.example.com`;
      expect(await tenants.addDomain(tenant.id, domain, entryOf(log, 'tenant.domain_added', domain))).toBe(true);
      expect(await tenants.addDomain(tenant.id, domain, entryOf(log, 'tenant.domain_added', 'twice'))).toBe(false);
      expect(await tenants.removeDomain(tenant.id, domain, entryOf(log, 'tenant.domain_removed', domain))).toBe(true);
      expect(await tenants.removeDomain(tenant.id, domain, entryOf(log, 'tenant.domain_removed', 'twice'))).toBe(false);
      expect(await logOf(log)).toEqual([
        `tenant.domain_removed ${domain}`,
        `tenant.domain_added ${domain}`,
        `key.revoked ${key.id}`,
        `key.created ${key.id}`,
        `tenant.created ${tenant.id}`,
      ]);
    });

    it('asks for a tenant change’s entry with the tenant as it was and as it is, under the change’s lock', async () => {
      const tenant = aTenant();
      await tenants.createWithApiKey(tenant, hashApiKey(randomUUID()), aKey());
      const seen: Array<[string, string]> = [];
      const updated = await tenants.updateTenant(tenant.id, { plan: 'paid' }, (before, after) => {
        seen.push([before.plan, after.plan]);
        return auditEntry(context, { log: tenant.id, action: 'tenant.plan_changed', target: { type: 'tenant', id: tenant.id, domain: null } }, new Date());
      });
      expect(updated?.plan).toBe('paid');
      expect(seen).toEqual([['free', 'paid']]);
      await tenants.updateTenant(tenant.id, { plan: 'paid' }, () => null); // nothing to record: no entry
      expect(await logOf(tenant.id)).toEqual([`tenant.plan_changed ${tenant.id}`]);
      expect(await tenants.updateTenant(randomUUID(), { plan: 'paid' }, () => entryOf(tenant.id, 'tenant.updated', 'ghost'))).toBeNull();
      expect(await logOf(tenant.id)).toHaveLength(1);
    });

    // `rejects.toBeTruthy()`, not `toThrow()`: better-sqlite3's error class is of the realm that first loaded it, which
    // in a reused jest worker is not this file's, and `toThrow` does not take it for an error.
    it('undoes the change when its entry cannot be stored (an id stored already)', async () => {
      const tenant = aTenant();
      await tenants.createWithApiKey(tenant, hashApiKey(randomUUID()), aKey());
      const taken = entryOf(tenant.id, 'key.created', 'first');
      await audit.append([taken]);
      const key = aKey();
      const hash = hashApiKey(randomUUID());
      await expect(tenants.addKey(tenant.id, hash, key, undefined, { ...taken, target: { type: 'key', id: key.id, domain: null } })).rejects.toBeTruthy();
      expect(await tenants.findByKeyHash(hash)).toBeNull();
      const kept = aKey();
      await tenants.addKey(tenant.id, hashApiKey(randomUUID()), kept);
      await expect(tenants.revokeKey(tenant.id, kept.id, new Date(), taken)).rejects.toBeTruthy();
      expect((await tenants.listKeys(tenant.id)).find((k) => k.id === kept.id)?.revokedAt).toBeNull();
      const domain = `u${randomUUID().slice(0, 8)}.example.com`;
      await expect(tenants.addDomain(tenant.id, domain, taken)).rejects.toBeTruthy();
      expect((await tenants.allDomains()).some((d) => d.domain === domain)).toBe(false);
      await expect(tenants.updateTenant(tenant.id, { name: 'renamed' }, () => taken)).rejects.toBeTruthy();
      expect((await tenants.findTenant(tenant.id))?.name).toBe('acme');
      expect(await logOf(tenant.id)).toEqual([`key.created first`]);
    });

    it('writes a domain settings change with its entry, both or neither', async () => {
      const log = randomUUID();
      const domain = `s${randomUUID().slice(0, 8)}.example.com`;
      const at = new Date(Math.floor(Date.now() / 1000) * 1000);
      const first = { ...defaultSettingsOf(domain), robots: 'allow' as const, version: 1, updatedAt: at };
      const entry = auditEntry(context, { log, action: 'domain.settings_changed', target: { type: 'domain', id: domain, domain } }, at);
      expect(await settings.save(first, 0, entry)).toBe(true);
      // A save that loses the race stores neither the settings nor the entry.
      const late = auditEntry(context, { log, action: 'domain.settings_changed', target: { type: 'domain', id: 'late', domain } }, at);
      expect(await settings.save({ ...first, robots: 'disallow' }, 0, late)).toBe(false);
      expect(await settings.save({ ...first, robots: 'disallow', version: 2 }, 5, late)).toBe(false);
      // An entry that cannot be stored undoes the change.
      await expect(settings.save({ ...first, robots: 'disallow', version: 2 }, 1, entry)).rejects.toBeTruthy();
      expect((await settings.find(domain))?.version).toBe(1);
      const other = `t${randomUUID().slice(0, 8)}.example.com`;
      await expect(settings.save({ ...defaultSettingsOf(other), version: 1, updatedAt: at }, 0, entry)).rejects.toBeTruthy();
      expect(await settings.find(other)).toBeNull();
      expect((await audit.list({ log, after: null, limit: 10 })).map((e) => e.target.id)).toEqual([domain]);
    });
  });
}
