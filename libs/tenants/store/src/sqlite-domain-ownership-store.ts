import type { AuditEntry } from '@shortlink/audit-domain';
import { CertificateState, ClaimResult, DomainOwnershipStore, OwnershipState, TenantDomain } from '@shortlink/tenants-domain';
import { insertAuditEntriesSqlite } from '@shortlink/audit-store';
import { SqliteDb } from '@shortlink/sql';
import {
  CERTIFICATE_SET,
  certificatesFromRows,
  certificateValues,
  DUE_SELECT,
  INSERT_DOMAIN_COLUMNS,
  INSERT_DOMAIN_PLACEHOLDERS,
  insertDomainValues,
  ownershipValues,
  SAVE_CHECK,
  TAKE_DUE,
  TAKE_NOW,
  TENANT_DOMAIN_COLUMNS,
  tenantDomainFromRow,
  TenantDomainRow,
  VERIFIED_CERTIFICATES,
} from './domain-ownership-rows';

const time = (d: Date | null) => (d === null ? null : d.getTime());

/** The ownership of tenant domains in the embedded meta database (times in epoch ms; docs/design.md, "Custom domains and TLS"). */
export class SqliteDomainOwnershipStore implements DomainOwnershipStore {
  constructor(private readonly db: SqliteDb) {}

  async claim(domain: TenantDomain, maxDomains: number, audit?: AuditEntry): Promise<ClaimResult> {
    // An immediate transaction holds the database's write lock: two adds cannot both see room under the cap.
    return this.db
      .transaction((): ClaimResult => {
        if (this.db.prepare('SELECT 1 FROM tenant_domains WHERE domain = ?').get(domain.domain)) return 'taken';
        const { n } = this.db.prepare('SELECT COUNT(*) AS n FROM tenant_domains WHERE tenant_id = ?').get(domain.tenantId) as { n: number };
        if (n >= maxDomains) return 'limit_reached';
        this.db
          .prepare(`INSERT INTO tenant_domains (${INSERT_DOMAIN_COLUMNS}) VALUES (${INSERT_DOMAIN_PLACEHOLDERS})`)
          .run(...insertDomainValues(domain, time));
        insertAuditEntriesSqlite(this.db, [audit]);
        return 'added';
      })
      .immediate();
  }

  async find(domain: string): Promise<TenantDomain | null> {
    const row = this.db.prepare(`SELECT ${TENANT_DOMAIN_COLUMNS} FROM tenant_domains WHERE domain = ?`).get(domain) as TenantDomainRow | undefined;
    return row ? tenantDomainFromRow(row) : null;
  }

  async listOf(tenantId: string): Promise<TenantDomain[]> {
    const rows = this.db.prepare(`SELECT ${TENANT_DOMAIN_COLUMNS} FROM tenant_domains WHERE tenant_id = ? ORDER BY domain`).all(tenantId) as TenantDomainRow[];
    return rows.map(tenantDomainFromRow);
  }

  async takeDue(now: Date, leaseUntil: Date, holder: string, limit: number): Promise<TenantDomain[]> {
    return this.db
      .transaction(() => {
        const rows = this.db.prepare(DUE_SELECT).all(now.getTime(), limit) as TenantDomainRow[];
        const take = this.db.prepare(TAKE_DUE);
        return rows.filter((row) => take.run(leaseUntil.getTime(), holder, row.domain, now.getTime()).changes === 1).map(tenantDomainFromRow);
      })
      .immediate();
  }

  async takeNow(tenantId: string, domain: string, now: Date, leaseUntil: Date, holder: string): Promise<TenantDomain | null> {
    const found = await this.find(domain);
    if (!found || found.tenantId !== tenantId) return null;
    return this.db.prepare(TAKE_NOW).run(leaseUntil.getTime(), holder, domain, tenantId, now.getTime()).changes === 1 ? found : null;
  }

  async saveCheck(domain: string, holder: string, state: OwnershipState, audit?: AuditEntry): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (this.db.prepare(SAVE_CHECK).run(...ownershipValues(state, time), domain, holder).changes !== 1) return false;
        insertAuditEntriesSqlite(this.db, [audit]);
        return true;
      })
      .immediate();
  }

  async saveCertificate(domain: string, certificate: CertificateState): Promise<void> {
    this.db.prepare(`UPDATE tenant_domains SET ${CERTIFICATE_SET} WHERE domain = ?`).run(...certificateValues(certificate, time), domain);
  }

  async certificates(): Promise<Array<{ domain: string; certificate: CertificateState | null }>> {
    return certificatesFromRows(this.db.prepare(VERIFIED_CERTIFICATES).all() as TenantDomainRow[]);
  }
}
