import type { AuditEntry } from '@shortlink/audit-domain';
import { InMemoryAuditLogStore } from '@shortlink/audit-domain/testing';
import { KeyPerson } from '../authority';
import { ApiKey, Plan, Scope, Tenant, TenantStatus } from '../tenant';
import { operatorAssignedDomain, TenantDomain } from '../domain-ownership';
import { KeyCap, KeyTransferDecision, KeyTransferOutcome, KeyWithTenant, NewApiKey, TenantChangeAudit, TenantStore } from '../ports';

/**
 * The members a key may act for, as the meta database's members table answers them to the SQL
 * stores' joins (the people domain's double provides them: link-store's in-memory-doubles.spec.ts).
 */
export interface KeyPeopleDirectory {
  /** The active member of the tenant with this id, as a key's person; null otherwise. */
  person(tenantId: string, memberId: string): KeyPerson | null;
  hasActiveOwner(tenantId: string): boolean;
}
import { InMemoryDomainSettingsStore } from './in-memory-domain-settings-store';

/**
 * A TenantStore in maps, for unit tests of the domain: the adapters' contract suite holds it too
 * (link-store's in-memory-doubles.spec.ts). Audit entries of its changes go to `audit` (nothing
 * here can fail between a change and its entry, so "the same transaction" is one synchronous step).
 */
export class InMemoryTenantStore implements TenantStore {
  readonly tenants = new Map<string, Tenant>();
  readonly keys = new Map<string, ApiKey>();
  /** Every tenant domain with its ownership (the ownership double works on this map too). */
  readonly domains = new Map<string, TenantDomain>();
  readonly blocked = new Map<string, { domain: string; reason: string | null; createdAt: Date }>();
  /** The tenants' members, for the keys' persons; none when unset. */
  people: KeyPeopleDirectory | null = null;

  /** `settings`: the domain settings of the same meta database, reset when a domain leaves its tenant. */
  constructor(
    private readonly settings?: InMemoryDomainSettingsStore,
    readonly audit = new InMemoryAuditLogStore(),
  ) {}

  /** As a database's unique key would: an entry stored already fails, before the change is made. */
  private refuseStored(entry: AuditEntry | null | undefined): void {
    if (entry && this.audit.entries.some((e) => e.id === entry.id)) throw new Error(`duplicate audit entry ${entry.id}`);
  }

  private record(entry: AuditEntry | null | undefined): void {
    if (entry) this.audit.add(entry);
  }

  /** A key as stored, with its person as the members answer now. */
  private withPerson(key: ApiKey): ApiKey {
    return { ...key, person: key.memberId === null ? null : (this.people?.person(key.tenantId, key.memberId) ?? null) };
  }
  private found(key: ApiKey | undefined): KeyWithTenant | null {
    if (!key) return null;
    return { key: this.withPerson(key), tenant: this.tenants.get(key.tenantId)!, tenantHasOwner: this.people?.hasActiveOwner(key.tenantId) ?? false };
  }
  private stored(tenantId: string, key: NewApiKey, createdAt: Date): ApiKey {
    const { person, ...rest } = key;
    return { ...rest, tenantId, createdAt, revokedAt: null, memberId: person?.id ?? null, person };
  }

  async findByKeyHash(hash: string): Promise<KeyWithTenant | null> {
    return this.found(this.keys.get(hash));
  }
  async findKey(tenantId: string, keyId: string): Promise<KeyWithTenant | null> {
    return this.found([...this.keys.values()].find((k) => k.tenantId === tenantId && k.id === keyId));
  }
  async createWithApiKey(tenant: Tenant, hash: string, key: NewApiKey, audit?: AuditEntry) {
    if (this.keys.has(hash)) return false;
    this.refuseStored(audit);
    this.tenants.set(tenant.id, tenant);
    this.keys.set(hash, this.stored(tenant.id, key, tenant.createdAt));
    this.record(audit);
    return true;
  }
  async findTenant(id: string) {
    return this.tenants.get(id) ?? null;
  }
  async listTenants(afterId: string | null, limit: number) {
    return [...this.tenants.values()]
      .filter((t) => afterId === null || t.id > afterId)
      .sort((a, b) => a.id.localeCompare(b.id))
      .slice(0, limit);
  }
  async updateTenant(id: string, change: { plan?: Plan; status?: TenantStatus; name?: string }, audit?: TenantChangeAudit) {
    const tenant = this.tenants.get(id);
    if (!tenant) return null;
    const updated = { ...tenant, ...Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) };
    const entry = audit?.(tenant, updated);
    this.refuseStored(entry);
    this.tenants.set(id, updated);
    this.record(entry);
    return updated;
  }
  async countTenants() {
    return this.tenants.size;
  }
  async addKey(tenantId: string, hash: string, key: NewApiKey, cap?: KeyCap, audit?: AuditEntry) {
    const active = [...this.keys.values()].filter(
      (k) => k.tenantId === tenantId && k.revokedAt === null && (k.expiresAt === null || k.expiresAt > (cap?.now ?? new Date())),
    );
    if (cap && active.length >= cap.maxActive) return null;
    this.refuseStored(audit);
    const stored = this.stored(tenantId, key, new Date());
    this.keys.set(hash, stored);
    this.record(audit);
    return stored;
  }
  async listKeys(tenantId: string) {
    return [...this.keys.values()].filter((k) => k.tenantId === tenantId).map((k) => this.withPerson(k));
  }
  async hasActiveOwner(tenantId: string) {
    return this.people?.hasActiveOwner(tenantId) ?? false;
  }
  async transferKey(tenantId: string, keyId: string, memberId: string, decide: KeyTransferDecision): Promise<KeyTransferOutcome> {
    const entry = [...this.keys].find(([, k]) => k.tenantId === tenantId && k.id === keyId && k.revokedAt === null);
    if (!entry) return { outcome: 'key_not_found' };
    const to = this.people?.person(tenantId, memberId) ?? null;
    if (!to) return { outcome: 'member_not_found' };
    const [hash, key] = entry;
    const decision = decide(this.withPerson(key), to);
    if (decision.refuse) return { outcome: 'refused' };
    this.refuseStored(decision.audit);
    const moved: ApiKey = { ...key, memberId: to.id, person: to };
    this.keys.set(hash, moved);
    this.record(decision.audit);
    return { outcome: 'transferred', key: moved };
  }
  async restoreKey(hash: string, scopes: readonly Scope[]) {
    const key = this.keys.get(hash);
    if (!key) return;
    this.keys.set(hash, { ...key, scopes: [...scopes], revokedAt: null, expiresAt: null, memberId: null, person: null });
    await this.updateTenant(key.tenantId, { status: 'active' });
  }
  async revokeKey(tenantId: string, keyId: string, at: Date, audit?: AuditEntry) {
    for (const [hash, key] of this.keys) {
      if (key.tenantId === tenantId && key.id === keyId && key.revokedAt === null) {
        this.refuseStored(audit);
        this.keys.set(hash, { ...key, revokedAt: at });
        this.record(audit);
        return true;
      }
    }
    return false;
  }
  async addDomain(tenantId: string, domain: string, audit?: AuditEntry) {
    if (this.domains.has(domain)) return false;
    this.refuseStored(audit);
    this.domains.set(domain, operatorAssignedDomain(domain, tenantId, new Date()));
    this.record(audit);
    return true;
  }
  async removeDomain(tenantId: string, domain: string, audit?: AuditEntry) {
    if (this.domains.get(domain)?.tenantId !== tenantId) return false;
    this.refuseStored(audit);
    this.domains.delete(domain);
    this.settings?.reset(domain, new Date());
    this.record(audit);
    return true;
  }
  async allDomains() {
    return [...this.domains.values()].map(({ domain, tenantId, status, token }) => ({ domain, tenantId, status, token }));
  }

  /** As the store's own insert (the ownership double's claim). */
  insertDomain(domain: TenantDomain, audit?: AuditEntry): void {
    this.refuseStored(audit);
    this.domains.set(domain.domain, domain);
    this.record(audit);
  }

  /** A change of a stored domain, with its entry. */
  changeDomain(domain: string, change: Partial<TenantDomain>, audit?: AuditEntry): void {
    this.refuseStored(audit);
    this.domains.set(domain, { ...this.domains.get(domain)!, ...change });
    this.record(audit);
  }
  async suspendedTenantIds() {
    return [...this.tenants.values()].filter((t) => t.status === 'suspended').map((t) => t.id);
  }
  async blockedDomains() {
    return [...this.blocked.values()];
  }
  async blockDomain(domain: string, reason: string | null) {
    if (this.blocked.has(domain)) return false;
    this.blocked.set(domain, { domain, reason, createdAt: new Date() });
    return true;
  }
  async unblockDomain(domain: string) {
    return this.blocked.delete(domain);
  }
}
