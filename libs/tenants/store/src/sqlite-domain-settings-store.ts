import type { AuditEntry } from '@shortlink/audit-domain';
import { DomainSettings, DomainSettingsStore } from '@shortlink/tenants-domain';
import { insertAuditEntriesSqlite } from '@shortlink/audit-store';
import { SqliteDb } from '@shortlink/sql';
import { DOMAIN_SETTINGS_COLUMNS, DomainSettingsRow, settingsFromRow, settingsJson } from './domain-settings-rows';

/** Domain settings in the embedded meta database (docs/design.md, "Domain settings"). */
export class SqliteDomainSettingsStore implements DomainSettingsStore {
  constructor(private readonly db: SqliteDb) {}

  async find(domain: string): Promise<DomainSettings | null> {
    const row = this.db.prepare(`SELECT ${DOMAIN_SETTINGS_COLUMNS} FROM domain_settings WHERE domain = ?`).get(domain) as DomainSettingsRow | undefined;
    return row ? settingsFromRow(row) : null;
  }

  async findMany(domains: readonly string[]): Promise<DomainSettings[]> {
    if (domains.length === 0) return [];
    const rows = this.db
      .prepare(`SELECT ${DOMAIN_SETTINGS_COLUMNS} FROM domain_settings WHERE domain IN (SELECT value FROM json_each(?)) ORDER BY domain`)
      .all(JSON.stringify(domains)) as DomainSettingsRow[];
    return rows.map(settingsFromRow);
  }

  async versions(): Promise<Array<{ domain: string; version: number }>> {
    return (this.db.prepare('SELECT domain, version FROM domain_settings ORDER BY domain').all() as Array<{ domain: string; version: number }>).map((r) => ({
      domain: r.domain,
      version: Number(r.version),
    }));
  }

  async save(settings: DomainSettings, expectedVersion: number, audit?: AuditEntry): Promise<boolean> {
    const at = (settings.updatedAt ?? new Date()).getTime();
    const json = settingsJson(settings);
    return this.db
      .transaction(() => {
        const changed =
          expectedVersion === 0
            ? this.db
                .prepare('INSERT OR IGNORE INTO domain_settings (domain, settings, version, updated_at) VALUES (?, ?, ?, ?)')
                .run(settings.domain, json, settings.version, at).changes
            : this.db
                .prepare('UPDATE domain_settings SET settings = ?, version = ?, updated_at = ? WHERE domain = ? AND version = ?')
                .run(json, settings.version, at, settings.domain, expectedVersion).changes;
        if (changed !== 1) return false;
        insertAuditEntriesSqlite(this.db, [audit]);
        return true;
      })
      .immediate();
  }
}
