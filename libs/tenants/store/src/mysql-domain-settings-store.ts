import { DataSource } from 'typeorm';
import type { AuditEntry } from '@shortlink/audit-domain';
import { DomainSettings, DomainSettingsStore } from '@shortlink/tenants-domain';
import { insertAuditEntriesMysql } from '@shortlink/audit-store';
import { isMysqlDuplicate } from '@shortlink/sql';
import { DOMAIN_SETTINGS_COLUMNS, DomainSettingsRow, settingsFromRow, settingsJson } from './domain-settings-rows';

type Affected = { affectedRows: number };

/** Domain settings in the MySQL meta database (docs/design.md, "Domain settings"). */
export class MysqlDomainSettingsStore implements DomainSettingsStore {
  constructor(private readonly ds: DataSource) {}

  async find(domain: string): Promise<DomainSettings | null> {
    const rows: DomainSettingsRow[] = await this.ds.query(`SELECT ${DOMAIN_SETTINGS_COLUMNS} FROM domain_settings WHERE domain = ?`, [domain]);
    return rows.length ? settingsFromRow(rows[0]) : null;
  }

  async findMany(domains: readonly string[]): Promise<DomainSettings[]> {
    if (domains.length === 0) return [];
    const rows: DomainSettingsRow[] = await this.ds.query(`SELECT ${DOMAIN_SETTINGS_COLUMNS} FROM domain_settings WHERE domain IN (?) ORDER BY domain`, [
      [...domains],
    ]);
    return rows.map(settingsFromRow);
  }

  async versions(): Promise<Array<{ domain: string; version: number }>> {
    const rows: Array<{ domain: string; version: number | string }> = await this.ds.query('SELECT domain, version FROM domain_settings ORDER BY domain');
    return rows.map((r) => ({ domain: r.domain, version: Number(r.version) }));
  }

  async save(settings: DomainSettings, expectedVersion: number, audit?: AuditEntry): Promise<boolean> {
    const at = settings.updatedAt ?? new Date();
    const json = settingsJson(settings);
    try {
      return await this.ds.transaction(async (m) => {
        if (expectedVersion === 0) {
          await m.query('INSERT INTO domain_settings (domain, settings, version, updated_at) VALUES (?, ?, ?, ?)', [
            settings.domain,
            json,
            settings.version,
            at,
          ]);
        } else {
          const result: Affected = await m.query('UPDATE domain_settings SET settings = ?, version = ?, updated_at = ? WHERE domain = ? AND version = ?', [
            json,
            settings.version,
            at,
            settings.domain,
            expectedVersion,
          ]);
          if (result.affectedRows !== 1) return false;
        }
        await insertAuditEntriesMysql(m, [audit]);
        return true;
      });
    } catch (error) {
      // Another first save of this domain won (its row exists now); an entry's duplicate id is not that, and fails the save.
      if (expectedVersion === 0 && isMysqlDuplicate(error) && !String((error as Error).message).includes('uq_audit_log_id')) return false;
      throw error;
    }
  }
}
