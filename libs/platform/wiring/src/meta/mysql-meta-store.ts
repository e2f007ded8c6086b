import type { AuditLogStore } from '@shortlink/audit-domain';
import type { ConversionStore } from '@shortlink/clicks-domain';
import type { BatchRecordStore } from '@shortlink/link-batch';
import { IdBlock, SequenceStore } from '@shortlink/links-domain';
import type { PeopleStore, SsoStore } from '@shortlink/people-domain';
import type { SafetyStore } from '@shortlink/safety-domain';
import type { DomainOwnershipStore, DomainSettingsStore, TenantStore } from '@shortlink/tenants-domain';
import type { WebhookStore } from '@shortlink/webhooks-domain';
import { MysqlAuditLogStore } from '@shortlink/audit-store';
import { MysqlBatchRecordStore, MysqlSequenceStore } from '@shortlink/link-store';
import { mysqlConversionStore, SqlConversionStore } from '@shortlink/olap';
import { MysqlPeopleStore, MysqlSsoStore } from '@shortlink/people-store';
import { mysqlSafetyStore, SqlSafetyStore } from '@shortlink/safety-store';
import { LazyOpen, forwardWhenOpen, MysqlConnectionOptions, MysqlDb, openMysql } from '@shortlink/sql';
import { MysqlDomainOwnershipStore, MysqlDomainSettingsStore, MysqlTenantStore } from '@shortlink/tenants-store';
import { mysqlWebhookStore, SqlWebhookStore } from '@shortlink/webhooks-store';
import { META_MYSQL_MIGRATIONS } from './meta-migrations';

/**
 * The shard-independent MySQL database, one connection pool for every context's store in it: tenants
 * and API keys, id sequences, batch records, the audit log, members and sessions, SSO, webhooks,
 * safety, conversions (each context's adapters are in its store lib).
 */
export class MysqlMetaStore implements SequenceStore {
  readonly tenants: MysqlTenantStore;
  readonly batches: MysqlBatchRecordStore;
  readonly domainSettings: MysqlDomainSettingsStore;
  readonly domainOwnership: MysqlDomainOwnershipStore;
  readonly audit: MysqlAuditLogStore;
  readonly webhooks: SqlWebhookStore;
  readonly people: MysqlPeopleStore;
  readonly sso: MysqlSsoStore;
  readonly safety: SqlSafetyStore;
  readonly conversions: SqlConversionStore;
  private readonly sequences: MysqlSequenceStore;

  private constructor(private readonly ds: MysqlDb) {
    this.tenants = new MysqlTenantStore(ds);
    this.batches = new MysqlBatchRecordStore(ds);
    this.domainSettings = new MysqlDomainSettingsStore(ds);
    this.domainOwnership = new MysqlDomainOwnershipStore(ds);
    this.audit = new MysqlAuditLogStore(ds);
    this.webhooks = mysqlWebhookStore(ds);
    this.people = new MysqlPeopleStore(ds);
    this.sso = new MysqlSsoStore(ds);
    this.safety = mysqlSafetyStore(ds);
    this.conversions = mysqlConversionStore(ds);
    this.sequences = new MysqlSequenceStore(ds);
  }

  static async open(options: MysqlConnectionOptions): Promise<MysqlMetaStore> {
    return new MysqlMetaStore(await openMysql(options, META_MYSQL_MIGRATIONS, '_migrations'));
  }

  allocateBlock(sequence: string, size: number): Promise<IdBlock> {
    return this.sequences.allocateBlock(sequence, size);
  }

  async ping(): Promise<void> {
    await this.ds.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.ds.isInitialized) await this.ds.destroy();
  }
}

/** The meta database, opened on first use; a database down fails the calls, not the boot. */
export class LazyMysqlMetaStore implements SequenceStore {
  private readonly store: LazyOpen<MysqlMetaStore>;
  readonly tenants: TenantStore;
  readonly batches: BatchRecordStore;
  readonly domainSettings: DomainSettingsStore;
  readonly domainOwnership: DomainOwnershipStore;
  readonly audit: AuditLogStore;
  readonly webhooks: WebhookStore;
  readonly people: PeopleStore;
  readonly sso: SsoStore;
  readonly safety: SafetyStore;
  readonly conversions: ConversionStore;

  constructor(options: MysqlConnectionOptions) {
    this.store = new LazyOpen('meta database', () => MysqlMetaStore.open(options));
    this.tenants = forwardWhenOpen(this.store, (meta) => meta.tenants, MysqlTenantStore.prototype);
    this.batches = forwardWhenOpen(this.store, (meta) => meta.batches, MysqlBatchRecordStore.prototype);
    this.domainSettings = forwardWhenOpen(this.store, (meta) => meta.domainSettings, MysqlDomainSettingsStore.prototype);
    this.domainOwnership = forwardWhenOpen(this.store, (meta) => meta.domainOwnership, MysqlDomainOwnershipStore.prototype);
    this.audit = forwardWhenOpen(this.store, (meta) => meta.audit, MysqlAuditLogStore.prototype);
    this.webhooks = forwardWhenOpen(this.store, (meta) => meta.webhooks, SqlWebhookStore.prototype);
    this.people = forwardWhenOpen(this.store, (meta) => meta.people, MysqlPeopleStore.prototype);
    this.sso = forwardWhenOpen(this.store, (meta) => meta.sso, MysqlSsoStore.prototype);
    this.safety = forwardWhenOpen(this.store, (meta) => meta.safety, SqlSafetyStore.prototype);
    this.conversions = forwardWhenOpen(this.store, (meta) => meta.conversions, SqlConversionStore.prototype);
  }

  async allocateBlock(sequence: string, size: number): Promise<IdBlock> {
    return (await this.store.get()).allocateBlock(sequence, size);
  }
  async ping() {
    return (await this.store.get()).ping();
  }
  close() {
    return this.store.close();
  }
}
