import { DataSource, EntityManager } from 'typeorm';
import type { AuditEntry } from '@shortlink/audit-domain';
import {
  ApiKey,
  DomainEntry,
  KeyCap,
  KeyTransferDecision,
  KeyTransferOutcome,
  KeyWithTenant,
  NewApiKey,
  operatorAssignedDomain,
  Scope,
  Tenant,
  TenantChange,
  TenantChangeAudit,
  TenantStore,
} from '@shortlink/tenants-domain';
import { insertAuditEntriesMysql } from '@shortlink/audit-store';
import { isMysqlDuplicate } from '@shortlink/sql';
import {
  DOMAIN_ENTRIES_SELECT,
  domainEntryFromRow,
  INSERT_DOMAIN_COLUMNS,
  INSERT_DOMAIN_PLACEHOLDERS,
  insertDomainValues,
  TenantDomainRow,
} from './domain-ownership-rows';
import { RESET_DOMAIN_SETTINGS } from './domain-settings-rows';
import {
  ACTIVE_KEY,
  ACTIVE_MEMBER,
  ActiveMemberRow,
  HAS_ACTIVE_OWNER,
  KEY_BY_ID_SELECT,
  KEY_WITH_TENANT_SELECT,
  keyFromRow,
  keyPersonFromRow,
  KEYS_OF_TENANT,
  KeyRow,
  keyWithTenantFromRow,
  KeyWithTenantRow,
  scopesToDb,
  TENANT_COLUMNS,
  UNREVOKED_KEY,
  tenantChangeSql,
  tenantFromRow,
  TenantRow,
} from './tenant-rows';

type Affected = { affectedRows: number };

/**
 * Tenants, keys and domains in the MySQL meta database (the migrations are the meta store's). A
 * change's audit entry is written in the change's transaction (docs/design.md, "Audit log").
 */
export class MysqlTenantStore implements TenantStore {
  constructor(private readonly ds: DataSource) {}

  async findByKeyHash(apiKeyHash: string): Promise<KeyWithTenant | null> {
    const rows: KeyWithTenantRow[] = await this.ds.query(KEY_WITH_TENANT_SELECT, [apiKeyHash]);
    return rows.length ? keyWithTenantFromRow(rows[0]) : null;
  }

  async findKey(tenantId: string, keyId: string): Promise<KeyWithTenant | null> {
    const rows: KeyWithTenantRow[] = await this.ds.query(KEY_BY_ID_SELECT, [tenantId, keyId]);
    return rows.length ? keyWithTenantFromRow(rows[0]) : null;
  }

  async createWithApiKey(tenant: Tenant, apiKeyHash: string, key: NewApiKey, audit?: AuditEntry): Promise<boolean> {
    try {
      await this.ds.transaction(async (m) => {
        await m.query('INSERT INTO tenants (id, name, plan, status, created_at) VALUES (?, ?, ?, ?, ?)', [
          tenant.id,
          tenant.name,
          tenant.plan,
          tenant.status,
          tenant.createdAt,
        ]);
        await this.insertKey(m, tenant.id, apiKeyHash, key, tenant.createdAt);
        await insertAuditEntriesMysql(m, [audit]);
      });
      return true;
    } catch (error) {
      if (isMysqlDuplicate(error)) return false;
      throw error;
    }
  }

  async findTenant(tenantId: string): Promise<Tenant | null> {
    const rows: TenantRow[] = await this.ds.query(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ?`, [tenantId]);
    return rows.length ? tenantFromRow(rows[0]) : null;
  }

  async listTenants(afterId: string | null, limit: number): Promise<Tenant[]> {
    const rows: TenantRow[] = await this.ds.query(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id > ? ORDER BY id LIMIT ?`, [afterId ?? '', limit]);
    return rows.map(tenantFromRow);
  }

  async updateTenant(tenantId: string, change: TenantChange, audit?: TenantChangeAudit): Promise<Tenant | null> {
    const { set, values } = tenantChangeSql(change);
    return this.ds.transaction(async (m) => {
      // The row lock makes the entry's "before" the tenant this change replaced.
      const before: TenantRow[] = await m.query(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ? FOR UPDATE`, [tenantId]);
      if (!before.length) return null;
      if (set) await m.query(`UPDATE tenants SET ${set} WHERE id = ?`, [...values, tenantId]);
      const after = tenantFromRow(((await m.query(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ?`, [tenantId])) as TenantRow[])[0]);
      await insertAuditEntriesMysql(m, [audit?.(tenantFromRow(before[0]), after)]);
      return after;
    });
  }

  async countTenants(): Promise<number> {
    const rows: Array<{ n: string }> = await this.ds.query('SELECT COUNT(*) AS n FROM tenants');
    return Number(rows[0].n);
  }

  async addKey(tenantId: string, apiKeyHash: string, key: NewApiKey, cap?: KeyCap, audit?: AuditEntry): Promise<ApiKey | null> {
    const createdAt = new Date();
    const { person, ...rest } = key;
    const added: ApiKey = { ...rest, tenantId, createdAt, revokedAt: null, memberId: person?.id ?? null, person };
    if (!cap) {
      await this.ds.transaction(async (m) => {
        await this.insertKey(m, tenantId, apiKeyHash, key, createdAt);
        await insertAuditEntriesMysql(m, [audit]);
      });
      return added;
    }
    return this.ds.transaction(async (m) => {
      // The tenant's row lock serialises key creation per tenant: two adds cannot both see room.
      await m.query('SELECT id FROM tenants WHERE id = ? FOR UPDATE', [tenantId]);
      const rows: Array<{ n: string | number }> = await m.query(`SELECT COUNT(*) AS n FROM api_keys WHERE tenant_id = ? AND ${ACTIVE_KEY}`, [
        tenantId,
        cap.now,
      ]);
      if (Number(rows[0].n) >= cap.maxActive) return null;
      await this.insertKey(m, tenantId, apiKeyHash, key, createdAt);
      await insertAuditEntriesMysql(m, [audit]);
      return added;
    });
  }

  async listKeys(tenantId: string): Promise<ApiKey[]> {
    const rows: KeyRow[] = await this.ds.query(KEYS_OF_TENANT, [tenantId]);
    return rows.map(keyFromRow);
  }

  async hasActiveOwner(tenantId: string): Promise<boolean> {
    const rows: Array<{ owned: number | string }> = await this.ds.query(`SELECT ${HAS_ACTIVE_OWNER} AS owned`, [tenantId]);
    return Number(rows[0].owned) === 1;
  }

  async transferKey(tenantId: string, keyId: string, memberId: string, decide: KeyTransferDecision): Promise<KeyTransferOutcome> {
    return this.ds.transaction(async (m): Promise<KeyTransferOutcome> => {
      // The tenant's row lock, which member changes take too: the member cannot be removed before the key is theirs.
      await m.query('SELECT id FROM tenants WHERE id = ? FOR UPDATE', [tenantId]);
      const rows: KeyRow[] = await m.query(UNREVOKED_KEY, [tenantId, keyId]);
      if (!rows.length) return { outcome: 'key_not_found' };
      const targets: ActiveMemberRow[] = await m.query(ACTIVE_MEMBER, [tenantId, memberId]);
      const to = targets.length ? keyPersonFromRow(targets[0]) : null;
      if (!to) return { outcome: 'member_not_found' };
      const before = keyFromRow(rows[0]);
      const decision = decide(before, to);
      if (decision.refuse) return { outcome: 'refused' };
      await m.query('UPDATE api_keys SET member_id = ? WHERE tenant_id = ? AND id = ?', [to.id, tenantId, keyId]);
      await insertAuditEntriesMysql(m, [decision.audit]);
      return { outcome: 'transferred', key: { ...before, memberId: to.id, person: to } };
    });
  }

  async restoreKey(apiKeyHash: string, scopes: readonly Scope[]): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query('UPDATE api_keys SET scopes = ?, revoked_at = NULL, expires_at = NULL, member_id = NULL WHERE key_hash = ?', [
        scopesToDb(scopes),
        apiKeyHash,
      ]);
      await m.query("UPDATE tenants SET status = 'active' WHERE id = (SELECT tenant_id FROM api_keys WHERE key_hash = ?)", [apiKeyHash]);
    });
  }

  async revokeKey(tenantId: string, keyId: string, at: Date, audit?: AuditEntry): Promise<boolean> {
    return this.changedWithEntry('UPDATE api_keys SET revoked_at = ? WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL', [at, tenantId, keyId], audit);
  }

  async addDomain(tenantId: string, domain: string, audit?: AuditEntry): Promise<boolean> {
    return this.changedWithEntry(
      `INSERT IGNORE INTO tenant_domains (${INSERT_DOMAIN_COLUMNS}) VALUES (${INSERT_DOMAIN_PLACEHOLDERS})`,
      insertDomainValues(operatorAssignedDomain(domain, tenantId, new Date()), (d) => d),
      audit,
    );
  }

  async removeDomain(tenantId: string, domain: string, audit?: AuditEntry): Promise<boolean> {
    // The domain's settings go back to the defaults in the same transaction (docs/design.md, "Domain settings").
    return this.ds.transaction(async (m) => {
      const result: Affected = await m.query('DELETE FROM tenant_domains WHERE tenant_id = ? AND domain = ?', [tenantId, domain]);
      if (result.affectedRows !== 1) return false;
      await m.query(RESET_DOMAIN_SETTINGS, [new Date(), domain]);
      if (audit) await insertAuditEntriesMysql(m, [audit]);
      return true;
    });
  }

  /** One statement and, when it changed a row, its audit entry: in one transaction (one statement alone without an entry). */
  private async changedWithEntry(sql: string, params: unknown[], audit: AuditEntry | undefined): Promise<boolean> {
    if (!audit) return ((await this.ds.query(sql, params)) as Affected).affectedRows === 1;
    return this.ds.transaction(async (m) => {
      if (((await m.query(sql, params)) as Affected).affectedRows !== 1) return false;
      await insertAuditEntriesMysql(m, [audit]);
      return true;
    });
  }

  async allDomains(): Promise<DomainEntry[]> {
    return ((await this.ds.query(DOMAIN_ENTRIES_SELECT)) as TenantDomainRow[]).map(domainEntryFromRow);
  }

  async suspendedTenantIds(): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.ds.query("SELECT id FROM tenants WHERE status = 'suspended' ORDER BY id");
    return rows.map((r) => r.id);
  }

  async blockedDomains(): Promise<Array<{ domain: string; reason: string | null; createdAt: Date }>> {
    const rows: Array<{ domain: string; reason: string | null; created_at: Date }> = await this.ds.query(
      'SELECT domain, reason, created_at FROM blocked_domains ORDER BY domain',
    );
    return rows.map((r) => ({ domain: r.domain, reason: r.reason, createdAt: new Date(r.created_at) }));
  }

  async blockDomain(domain: string, reason: string | null): Promise<boolean> {
    const result: Affected = await this.ds.query('INSERT IGNORE INTO blocked_domains (domain, reason, created_at) VALUES (?, ?, ?)', [
      domain,
      reason,
      new Date(),
    ]);
    return result.affectedRows === 1;
  }

  async unblockDomain(domain: string): Promise<boolean> {
    const result: Affected = await this.ds.query('DELETE FROM blocked_domains WHERE domain = ?', [domain]);
    return result.affectedRows === 1;
  }

  private async insertKey(m: EntityManager, tenantId: string, apiKeyHash: string, key: NewApiKey, createdAt: Date): Promise<void> {
    await m.query(
      'INSERT INTO api_keys (key_hash, tenant_id, id, name, prefix, scopes, created_at, expires_at, member_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [apiKeyHash, tenantId, key.id, key.name, key.prefix, scopesToDb(key.scopes), createdAt, key.expiresAt, key.person?.id ?? null],
    );
  }
}
