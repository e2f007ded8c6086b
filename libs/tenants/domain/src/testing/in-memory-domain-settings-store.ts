import type { AuditEntry } from '@shortlink/audit-domain';
import { InMemoryAuditLogStore } from '@shortlink/audit-domain/testing';
import { defaultSettingsOf, DomainSettings, DomainSettingsStore } from '../domain-settings';

/** A DomainSettingsStore in a map, for unit tests of the domain: the adapters' contract suite holds it too. */
export class InMemoryDomainSettingsStore implements DomainSettingsStore {
  readonly rows = new Map<string, DomainSettings>();

  /** Audit entries of its saves go to `audit` (one synchronous step: "the same transaction"). */
  constructor(readonly audit = new InMemoryAuditLogStore()) {}

  async find(domain: string) {
    return this.rows.get(domain) ?? null;
  }
  async findMany(domains: readonly string[]) {
    return [...new Set(domains)].flatMap((d) => (this.rows.has(d) ? [this.rows.get(d)!] : [])).sort((a, b) => a.domain.localeCompare(b.domain));
  }
  async versions() {
    return [...this.rows.values()].map((s) => ({ domain: s.domain, version: s.version })).sort((a, b) => a.domain.localeCompare(b.domain));
  }
  async save(settings: DomainSettings, expectedVersion: number, audit?: AuditEntry) {
    if ((this.rows.get(settings.domain)?.version ?? 0) !== expectedVersion) return false;
    if (audit && this.audit.entries.some((e) => e.id === audit.id)) throw new Error(`duplicate audit entry ${audit.id}`);
    this.rows.set(settings.domain, settings);
    if (audit) this.audit.add(audit);
    return true;
  }
  /** What the SQL stores do when a domain leaves its tenant: back to the defaults, one version on. */
  reset(domain: string, at: Date): void {
    const row = this.rows.get(domain);
    if (row) this.rows.set(domain, { ...defaultSettingsOf(domain), version: row.version + 1, updatedAt: at });
  }
}
