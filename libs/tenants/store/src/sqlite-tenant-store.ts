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
import { insertAuditEntriesSqlite } from '@shortlink/audit-store';
import { SqliteDb } from '@shortlink/sql';
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

const ms = (d: Date | null) => (d === null ? null : d.getTime());

/**
 * Tenants, keys and domains in the embedded meta database (the migrations are the meta store's). A
 * change's audit entry is written in the change's transaction (docs/design.md, "Audit log").
 */
export class SqliteTenantStore implements TenantStore {
  constructor(private readonly db: SqliteDb) {}

  async findByKeyHash(apiKeyHash: string): Promise<KeyWithTenant | null> {
    const row = this.db.prepare(KEY_WITH_TENANT_SELECT).get(apiKeyHash) as KeyWithTenantRow | undefined;
    return row ? keyWithTenantFromRow(row) : null;
  }

  async findKey(tenantId: string, keyId: string): Promise<KeyWithTenant | null> {
    const row = this.db.prepare(KEY_BY_ID_SELECT).get(tenantId, keyId) as KeyWithTenantRow | undefined;
    return row ? keyWithTenantFromRow(row) : null;
  }

  async createWithApiKey(tenant: Tenant, apiKeyHash: string, key: NewApiKey, audit?: AuditEntry): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (this.db.prepare('SELECT 1 FROM api_keys WHERE key_hash = ?').get(apiKeyHash)) return false;
        this.db
          .prepare('INSERT INTO tenants (id, name, plan, status, created_at) VALUES (?, ?, ?, ?, ?)')
          .run(tenant.id, tenant.name, tenant.plan, tenant.status, tenant.createdAt.getTime());
        this.insertKey(tenant.id, apiKeyHash, key, tenant.createdAt);
        insertAuditEntriesSqlite(this.db, [audit]);
        return true;
      })
      .immediate();
  }

  async findTenant(tenantId: string): Promise<Tenant | null> {
    const row = this.db.prepare(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ?`).get(tenantId) as TenantRow | undefined;
    return row ? tenantFromRow(row) : null;
  }

  async listTenants(afterId: string | null, limit: number): Promise<Tenant[]> {
    const rows = this.db.prepare(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id > ? ORDER BY id LIMIT ?`).all(afterId ?? '', limit) as TenantRow[];
    return rows.map(tenantFromRow);
  }

  async updateTenant(tenantId: string, change: TenantChange, audit?: TenantChangeAudit): Promise<Tenant | null> {
    const { set, values } = tenantChangeSql(change);
    const find = () => this.db.prepare(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ?`).get(tenantId) as TenantRow | undefined;
    return this.db
      .transaction(() => {
        const before = find();
        if (!before) return null;
        if (set) this.db.prepare(`UPDATE tenants SET ${set} WHERE id = ?`).run(...values, tenantId);
        const after = tenantFromRow(find()!);
        insertAuditEntriesSqlite(this.db, [audit?.(tenantFromRow(before), after)]);
        return after;
      })
      .immediate();
  }

  async countTenants(): Promise<number> {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM tenants').get() as { n: number }).n;
  }

  async addKey(tenantId: string, apiKeyHash: string, key: NewApiKey, cap?: KeyCap, audit?: AuditEntry): Promise<ApiKey | null> {
    const createdAt = new Date();
    return this.db
      .transaction(() => {
        if (cap) {
          const { n } = this.db.prepare(`SELECT COUNT(*) AS n FROM api_keys WHERE tenant_id = ? AND ${ACTIVE_KEY}`).get(tenantId, cap.now.getTime()) as {
            n: number;
          };
          if (n >= cap.maxActive) return null;
        }
        this.insertKey(tenantId, apiKeyHash, key, createdAt);
        insertAuditEntriesSqlite(this.db, [audit]);
        const { person, ...rest } = key;
        return { ...rest, tenantId, createdAt, revokedAt: null, memberId: person?.id ?? null, person };
      })
      .immediate();
  }

  async listKeys(tenantId: string): Promise<ApiKey[]> {
    return (this.db.prepare(KEYS_OF_TENANT).all(tenantId) as KeyRow[]).map(keyFromRow);
  }

  async hasActiveOwner(tenantId: string): Promise<boolean> {
    return (this.db.prepare(`SELECT ${HAS_ACTIVE_OWNER} AS owned`).get(tenantId) as { owned: number }).owned === 1;
  }

  async transferKey(tenantId: string, keyId: string, memberId: string, decide: KeyTransferDecision): Promise<KeyTransferOutcome> {
    // One write transaction: a member removed, or the key revoked, meanwhile is seen before the change.
    return this.db
      .transaction((): KeyTransferOutcome => {
        const row = this.db.prepare(UNREVOKED_KEY).get(tenantId, keyId) as KeyRow | undefined;
        if (!row) return { outcome: 'key_not_found' };
        const target = this.db.prepare(ACTIVE_MEMBER).get(tenantId, memberId) as ActiveMemberRow | undefined;
        const to = target && keyPersonFromRow(target);
        if (!to) return { outcome: 'member_not_found' };
        const before = keyFromRow(row);
        const decision = decide(before, to);
        if (decision.refuse) return { outcome: 'refused' };
        this.db.prepare('UPDATE api_keys SET member_id = ? WHERE tenant_id = ? AND id = ?').run(to.id, tenantId, keyId);
        insertAuditEntriesSqlite(this.db, [decision.audit]);
        return { outcome: 'transferred', key: { ...before, memberId: to.id, person: to } };
      })
      .immediate();
  }

  async restoreKey(apiKeyHash: string, scopes: readonly Scope[]): Promise<void> {
    this.db.transaction(() => {
      this.db
        .prepare('UPDATE api_keys SET scopes = ?, revoked_at = NULL, expires_at = NULL, member_id = NULL WHERE key_hash = ?')
        .run(scopesToDb(scopes), apiKeyHash);
      this.db.prepare("UPDATE tenants SET status = 'active' WHERE id = (SELECT tenant_id FROM api_keys WHERE key_hash = ?)").run(apiKeyHash);
    })();
  }

  async revokeKey(tenantId: string, keyId: string, at: Date, audit?: AuditEntry): Promise<boolean> {
    return this.changedWithEntry(
      () =>
        this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL').run(at.getTime(), tenantId, keyId).changes,
      audit,
    );
  }

  async addDomain(tenantId: string, domain: string, audit?: AuditEntry): Promise<boolean> {
    return this.changedWithEntry(
      () =>
        this.db
          .prepare(`INSERT OR IGNORE INTO tenant_domains (${INSERT_DOMAIN_COLUMNS}) VALUES (${INSERT_DOMAIN_PLACEHOLDERS})`)
          .run(...insertDomainValues(operatorAssignedDomain(domain, tenantId, new Date()), (d) => (d === null ? null : d.getTime()))).changes,
      audit,
    );
  }

  async removeDomain(tenantId: string, domain: string, audit?: AuditEntry): Promise<boolean> {
    // The domain's settings go back to the defaults in the same transaction (docs/design.md, "Domain settings").
    return this.changedWithEntry(() => {
      const removed = this.db.prepare('DELETE FROM tenant_domains WHERE tenant_id = ? AND domain = ?').run(tenantId, domain).changes;
      if (removed === 1) this.db.prepare(RESET_DOMAIN_SETTINGS).run(Date.now(), domain);
      return removed;
    }, audit);
  }

  /** One statement and, when it changed a row, its audit entry: in one transaction. */
  private changedWithEntry(change: () => number, audit: AuditEntry | undefined): boolean {
    return this.db
      .transaction(() => {
        if (change() !== 1) return false;
        insertAuditEntriesSqlite(this.db, [audit]);
        return true;
      })
      .immediate();
  }

  async allDomains(): Promise<DomainEntry[]> {
    return (this.db.prepare(DOMAIN_ENTRIES_SELECT).all() as TenantDomainRow[]).map(domainEntryFromRow);
  }

  async suspendedTenantIds(): Promise<string[]> {
    return (this.db.prepare("SELECT id FROM tenants WHERE status = 'suspended' ORDER BY id").all() as Array<{ id: string }>).map((r) => r.id);
  }

  async blockedDomains(): Promise<Array<{ domain: string; reason: string | null; createdAt: Date }>> {
    const rows = this.db.prepare('SELECT domain, reason, created_at FROM blocked_domains ORDER BY domain').all() as Array<{
      domain: string;
      reason: string | null;
      created_at: number;
    }>;
    return rows.map((r) => ({ domain: r.domain, reason: r.reason, createdAt: new Date(r.created_at) }));
  }

  async blockDomain(domain: string, reason: string | null): Promise<boolean> {
    return this.db.prepare('INSERT OR IGNORE INTO blocked_domains (domain, reason, created_at) VALUES (?, ?, ?)').run(domain, reason, Date.now()).changes === 1;
  }

  async unblockDomain(domain: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM blocked_domains WHERE domain = ?').run(domain).changes === 1;
  }

  private insertKey(tenantId: string, apiKeyHash: string, key: NewApiKey, createdAt: Date): void {
    this.db
      .prepare('INSERT INTO api_keys (key_hash, tenant_id, id, name, prefix, scopes, created_at, expires_at, member_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(apiKeyHash, tenantId, key.id, key.name, key.prefix, scopesToDb(key.scopes), createdAt.getTime(), ms(key.expiresAt), key.person?.id ?? null);
  }
}
