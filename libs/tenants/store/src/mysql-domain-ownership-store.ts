import { DataSource } from 'typeorm';
import type { AuditEntry } from '@shortlink/audit-domain';
import { CertificateState, ClaimResult, DomainOwnershipStore, OwnershipState, TenantDomain } from '@shortlink/tenants-domain';
import { insertAuditEntriesMysql } from '@shortlink/audit-store';
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

type Affected = { affectedRows: number };
const time = (d: Date | null) => d;

/** The ownership of tenant domains in the MySQL meta database (docs/design.md, "Custom domains and TLS"). */
export class MysqlDomainOwnershipStore implements DomainOwnershipStore {
  constructor(private readonly ds: DataSource) {}

  async claim(domain: TenantDomain, maxDomains: number, audit?: AuditEntry): Promise<ClaimResult> {
    return this.ds.transaction(async (m) => {
      // The tenant's row lock serialises its adds: two cannot both see room under the cap.
      await m.query('SELECT id FROM tenants WHERE id = ? FOR UPDATE', [domain.tenantId]);
      if (((await m.query('SELECT 1 FROM tenant_domains WHERE domain = ?', [domain.domain])) as unknown[]).length) return 'taken';
      const [{ n }]: Array<{ n: string | number }> = await m.query('SELECT COUNT(*) AS n FROM tenant_domains WHERE tenant_id = ?', [domain.tenantId]);
      if (Number(n) >= maxDomains) return 'limit_reached';
      const inserted: Affected = await m.query(
        `INSERT IGNORE INTO tenant_domains (${INSERT_DOMAIN_COLUMNS}) VALUES (${INSERT_DOMAIN_PLACEHOLDERS})`,
        insertDomainValues(domain, time),
      );
      if (inserted.affectedRows !== 1) return 'taken';
      await insertAuditEntriesMysql(m, [audit]);
      return 'added';
    });
  }

  async find(domain: string): Promise<TenantDomain | null> {
    const rows: TenantDomainRow[] = await this.ds.query(`SELECT ${TENANT_DOMAIN_COLUMNS} FROM tenant_domains WHERE domain = ?`, [domain]);
    return rows.length ? tenantDomainFromRow(rows[0]) : null;
  }

  async listOf(tenantId: string): Promise<TenantDomain[]> {
    const rows: TenantDomainRow[] = await this.ds.query(`SELECT ${TENANT_DOMAIN_COLUMNS} FROM tenant_domains WHERE tenant_id = ? ORDER BY domain`, [tenantId]);
    return rows.map(tenantDomainFromRow);
  }

  async takeDue(now: Date, leaseUntil: Date, holder: string, limit: number): Promise<TenantDomain[]> {
    const rows: TenantDomainRow[] = await this.ds.query(DUE_SELECT, [now, limit]);
    const taken: TenantDomain[] = [];
    for (const row of rows) {
      // Another instance that took it first moved its next_check_at past `now`: this update then matches nothing.
      const result: Affected = await this.ds.query(TAKE_DUE, [leaseUntil, holder, row.domain, now]);
      if (result.affectedRows === 1) taken.push(tenantDomainFromRow(row));
    }
    return taken;
  }

  async takeNow(tenantId: string, domain: string, now: Date, leaseUntil: Date, holder: string): Promise<TenantDomain | null> {
    const found = await this.find(domain);
    if (!found || found.tenantId !== tenantId) return null;
    const result: Affected = await this.ds.query(TAKE_NOW, [leaseUntil, holder, domain, tenantId, now]);
    return result.affectedRows === 1 ? found : null;
  }

  async saveCheck(domain: string, holder: string, state: OwnershipState, audit?: AuditEntry): Promise<boolean> {
    return this.ds.transaction(async (m) => {
      const result: Affected = await m.query(SAVE_CHECK, [...ownershipValues(state, time), domain, holder]);
      if (result.affectedRows !== 1) return false;
      await insertAuditEntriesMysql(m, [audit]);
      return true;
    });
  }

  async saveCertificate(domain: string, certificate: CertificateState): Promise<void> {
    await this.ds.query(`UPDATE tenant_domains SET ${CERTIFICATE_SET} WHERE domain = ?`, [...certificateValues(certificate, time), domain]);
  }

  async certificates(): Promise<Array<{ domain: string; certificate: CertificateState | null }>> {
    return certificatesFromRows(await this.ds.query(VERIFIED_CERTIFICATES));
  }
}
