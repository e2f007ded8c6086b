import { IdBlock, SequenceStore } from '@shortlink/links-domain';
import { SqliteAuditLogStore } from '../audit/sqlite-audit-log-store';
import { SqliteBatchRecordStore } from '../batches/sqlite-batch-record-store';
import { SqlitePeopleStore } from '../people/sqlite-people-store';
import { SqliteSsoStore } from '../people/sso-stores';
import { SqliteDomainOwnershipStore } from '../tenants/sqlite-domain-ownership-store';
import { SqliteDomainSettingsStore } from '../tenants/sqlite-domain-settings-store';
import { SqliteTenantStore } from '../tenants/sqlite-tenant-store';
import { SqlWebhookStore } from '../webhooks/sql-webhook-store';
import { sqliteWebhookStore } from '../webhooks/webhook-stores';
import { SqlSafetyStore } from '../safety/sql-safety-store';
import { sqliteSafetyStore } from '../safety/safety-stores';
import { SqlConversionStore, sqliteConversionStore } from '../conversions/sql-conversion-store';
import { migrateSqlite, openSqlite, SqliteDb } from './sqlite-database';
import { SQLITE_META_MIGRATIONS } from './migrations';

/** Tenants, API keys, sequences and the audit log, members and sessions in one SQLite file (the shard-independent database). */
export class SqliteMetaStore implements SequenceStore {
  private readonly db: SqliteDb;
  readonly tenants: SqliteTenantStore;
  readonly batches: SqliteBatchRecordStore;
  readonly domainSettings: SqliteDomainSettingsStore;
  readonly domainOwnership: SqliteDomainOwnershipStore;
  readonly audit: SqliteAuditLogStore;
  readonly webhooks: SqlWebhookStore;
  readonly people: SqlitePeopleStore;
  readonly sso: SqliteSsoStore;
  readonly safety: SqlSafetyStore;
  readonly conversions: SqlConversionStore;

  constructor(file: string) {
    this.db = openSqlite(file);
    migrateSqlite(this.db, SQLITE_META_MIGRATIONS);
    this.tenants = new SqliteTenantStore(this.db);
    this.batches = new SqliteBatchRecordStore(this.db);
    this.domainSettings = new SqliteDomainSettingsStore(this.db);
    this.domainOwnership = new SqliteDomainOwnershipStore(this.db);
    this.audit = new SqliteAuditLogStore(this.db);
    this.webhooks = sqliteWebhookStore(this.db);
    this.people = new SqlitePeopleStore(this.db);
    this.sso = new SqliteSsoStore(this.db);
    this.safety = sqliteSafetyStore(this.db);
    this.conversions = sqliteConversionStore(this.db);
  }

  /** One write-locked statement: atomic across every process sharing the file. */
  async allocateBlock(sequence: string, size: number): Promise<IdBlock> {
    const row = this.db
      .transaction(() => {
        this.db.prepare('INSERT OR IGNORE INTO sequences (name, next_id) VALUES (?, 1)').run(sequence);
        return this.db.prepare('UPDATE sequences SET next_id = next_id + ? WHERE name = ? RETURNING next_id').get(size, sequence) as { next_id: number };
      })
      .immediate();
    const end = BigInt(row.next_id);
    return { start: end - BigInt(size), end };
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
