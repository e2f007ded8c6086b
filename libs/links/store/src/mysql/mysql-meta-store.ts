import { DataSource } from 'typeorm';
import { IdBlock, SequenceStore } from '@shortlink/links-domain';
import { MysqlAuditLogStore } from '../audit/mysql-audit-log-store';
import { MysqlBatchRecordStore } from '../batches/mysql-batch-record-store';
import { MysqlPeopleStore } from '../people/mysql-people-store';
import { MysqlSsoStore } from '../people/sso-stores';
import { MysqlDomainOwnershipStore } from '../tenants/mysql-domain-ownership-store';
import { MysqlDomainSettingsStore } from '../tenants/mysql-domain-settings-store';
import { MysqlTenantStore } from '../tenants/mysql-tenant-store';
import { SqlWebhookStore } from '../webhooks/sql-webhook-store';
import { mysqlWebhookStore } from '../webhooks/webhook-stores';
import { SqlSafetyStore } from '../safety/sql-safety-store';
import { mysqlSafetyStore } from '../safety/safety-stores';
import { mysqlConversionStore, SqlConversionStore } from '../conversions/sql-conversion-store';
import { MysqlConnectionOptions, openMysql } from './mysql-datasource';
import { META_MIGRATIONS } from './migrations';

/** The shard-independent MySQL database: tenants, hashed API keys, id sequences, the audit log, members and sessions. */
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

  private constructor(private readonly ds: DataSource) {
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
  }

  static async open(options: MysqlConnectionOptions): Promise<MysqlMetaStore> {
    return new MysqlMetaStore(await openMysql(options, META_MIGRATIONS, '_migrations'));
  }

  /**
   * LAST_INSERT_ID(expr) makes the increment and the read one atomic statement on one
   * connection, so concurrent instances always get disjoint blocks.
   */
  async allocateBlock(sequence: string, size: number): Promise<IdBlock> {
    const runner = this.ds.createQueryRunner();
    try {
      await runner.connect();
      await runner.query('INSERT IGNORE INTO sequences (name, next_id) VALUES (?, 1)', [sequence]);
      await runner.query('UPDATE sequences SET next_id = LAST_INSERT_ID(next_id + ?) WHERE name = ?', [size, sequence]);
      const rows: Array<{ end: string }> = await runner.query('SELECT LAST_INSERT_ID() AS end');
      const end = BigInt(rows[0].end);
      return { start: end - BigInt(size), end };
    } finally {
      await runner.release();
    }
  }

  async ping(): Promise<void> {
    await this.ds.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.ds.isInitialized) await this.ds.destroy();
  }
}
