import type { AuditEntry } from '@shortlink/audit-domain';
import { CertificateState, ClaimResult, DomainOwnershipStore, OwnershipState, TenantDomain } from '../domain-ownership';
import { InMemoryTenantStore } from './in-memory-tenant-store';

/**
 * The ownership side of the tenant double's domains, for the domain's specs: the adapters' contract
 * suite holds it too (link-store's in-memory-doubles.spec.ts). Holders and their leases are kept
 * beside the domains, as the adapters keep them in a column.
 */
export class InMemoryDomainOwnershipStore implements DomainOwnershipStore {
  private readonly holders = new Map<string, string>();

  constructor(readonly tenants: InMemoryTenantStore = new InMemoryTenantStore()) {}

  async claim(domain: TenantDomain, maxDomains: number, audit?: AuditEntry): Promise<ClaimResult> {
    if (this.tenants.domains.has(domain.domain)) return 'taken';
    if ([...this.tenants.domains.values()].filter((d) => d.tenantId === domain.tenantId).length >= maxDomains) return 'limit_reached';
    this.tenants.insertDomain(domain, audit);
    return 'added';
  }

  async find(domain: string) {
    return this.tenants.domains.get(domain) ?? null;
  }

  async listOf(tenantId: string) {
    return [...this.tenants.domains.values()].filter((d) => d.tenantId === tenantId).sort((a, b) => a.domain.localeCompare(b.domain));
  }

  async takeDue(now: Date, leaseUntil: Date, holder: string, limit: number) {
    const due = [...this.tenants.domains.values()]
      .filter((d) => d.nextCheckAt !== null && d.nextCheckAt <= now)
      .sort((a, b) => a.nextCheckAt!.getTime() - b.nextCheckAt!.getTime())
      .slice(0, limit);
    return due.map((d) => this.take(d, leaseUntil, holder));
  }

  async takeNow(tenantId: string, domain: string, now: Date, leaseUntil: Date, holder: string) {
    const found = this.tenants.domains.get(domain);
    if (!found || found.tenantId !== tenantId) return null;
    if (this.holders.has(domain) && found.nextCheckAt !== null && found.nextCheckAt > now) return null;
    return this.take(found, leaseUntil, holder);
  }

  async saveCheck(domain: string, holder: string, state: OwnershipState, audit?: AuditEntry) {
    if (this.holders.get(domain) !== holder || !this.tenants.domains.has(domain)) return false;
    this.tenants.changeDomain(domain, state, audit);
    this.holders.delete(domain);
    return true;
  }

  async saveCertificate(domain: string, certificate: CertificateState) {
    if (this.tenants.domains.has(domain)) this.tenants.changeDomain(domain, { certificate });
  }

  async certificates() {
    return [...this.tenants.domains.values()].filter((d) => d.status === 'verified').map((d) => ({ domain: d.domain, certificate: d.certificate }));
  }

  private take(domain: TenantDomain, leaseUntil: Date, holder: string): TenantDomain {
    this.holders.set(domain.domain, holder);
    this.tenants.changeDomain(domain.domain, { nextCheckAt: leaseUntil });
    return domain;
  }
}
