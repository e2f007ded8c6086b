import { IdBlock, SequenceStore } from '@shortlink/links-domain';
import { SqliteAuditLogStore } from '@shortlink/audit-store';
import { SqliteBatchRecordStore, SqliteSequenceStore } from '@shortlink/link-store';
import { SqlConversionStore, sqliteConversionStore } from '@shortlink/olap';
import { SqlitePeopleStore, SqliteSsoStore } from '@shortlink/people-store';
import { SqlSafetyStore, sqliteSafetyStore } from '@shortlink/safety-store';
import { migrateSqlite, openSqlite, SqliteDb } from '@shortlink/sql';
import { SqliteDomainOwnershipStore, SqliteDomainSettingsStore, SqliteTenantStore } from '@shortlink/tenants-store';
import { SqlWebhookStore, sqliteWebhookStore } from '@shortlink/webhooks-store';
import { META_SQLITE_MIGRATIONS } from './meta-migrations';

/** Every context's store of the shard-independent database in one SQLite file: tenants, API keys, sequences, batch records, the audit log, members and sessions, SSO, webhooks, safety, conversions. */
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
  private readonly sequences: SqliteSequenceStore;

  constructor(file: string) {
    this.db = openSqlite(file);
    migrateSqlite(this.db, META_SQLITE_MIGRATIONS);
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
    this.sequences = new SqliteSequenceStore(this.db);
  }

  allocateBlock(sequence: string, size: number): Promise<IdBlock> {
    return this.sequences.allocateBlock(sequence, size);
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
