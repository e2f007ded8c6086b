import type { AuditEntry } from '@shortlink/audit-domain';
import { InMemoryAuditLogStore } from '@shortlink/audit-domain/testing';
import { ApiKey, Plan, Scope, Tenant, TenantStatus } from '../tenant';
import { operatorAssignedDomain, TenantDomain } from '../domain-ownership';
import { KeyCap, KeyWithTenant, NewApiKey, TenantChangeAudit, TenantStore } from '../ports';
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

  async findByKeyHash(hash: string): Promise<KeyWithTenant | null> {
    const key = this.keys.get(hash);
    return key ? { key, tenant: this.tenants.get(key.tenantId)! } : null;
  }
  async createWithApiKey(tenant: Tenant, hash: string, key: NewApiKey, audit?: AuditEntry) {
    if (this.keys.has(hash)) return false;
    this.refuseStored(audit);
    this.tenants.set(tenant.id, tenant);
    this.keys.set(hash, { ...key, tenantId: tenant.id, createdAt: tenant.createdAt, revokedAt: null });
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
    const stored: ApiKey = { ...key, tenantId, createdAt: new Date(), revokedAt: null };
    this.keys.set(hash, stored);
    this.record(audit);
    return stored;
  }
  async listKeys(tenantId: string) {
    return [...this.keys.values()].filter((k) => k.tenantId === tenantId);
  }
  async restoreKey(hash: string, scopes: readonly Scope[]) {
    const key = this.keys.get(hash);
    if (!key) return;
    this.keys.set(hash, { ...key, scopes: [...scopes], revokedAt: null, expiresAt: null });
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
