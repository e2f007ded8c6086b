import { DataSource } from 'typeorm';
import { DomainSettings, DomainSettingsStore } from '@shortlink/tenants-domain';
import { isMysqlDuplicate } from '../mysql/mysql-datasource';
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

  async save(settings: DomainSettings, expectedVersion: number): Promise<boolean> {
    const at = settings.updatedAt ?? new Date();
    const json = settingsJson(settings);
    if (expectedVersion === 0) {
      try {
        await this.ds.query('INSERT INTO domain_settings (domain, settings, version, updated_at) VALUES (?, ?, ?, ?)', [
          settings.domain,
          json,
          settings.version,
          at,
        ]);
        return true;
      } catch (error) {
        if (isMysqlDuplicate(error)) return false;
        throw error;
      }
    }
    const result: Affected = await this.ds.query('UPDATE domain_settings SET settings = ?, version = ?, updated_at = ? WHERE domain = ? AND version = ?', [
      json,
      settings.version,
      at,
      settings.domain,
      expectedVersion,
    ]);
    return result.affectedRows === 1;
  }
}
