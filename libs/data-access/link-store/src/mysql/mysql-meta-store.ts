import { DataSource } from 'typeorm';
import { IdBlock, SequenceStore, Tenant, TenantStore } from '@shortlink/links-domain';
import { isMysqlDuplicate, MysqlConnectionOptions, openMysql } from './mysql-datasource';
import { META_MIGRATIONS } from './migrations';

/** The shard-independent MySQL database: tenants, hashed API keys, id sequences. */
export class MysqlMetaStore implements TenantStore, SequenceStore {
  private constructor(private readonly ds: DataSource) {}

  static async open(options: MysqlConnectionOptions): Promise<MysqlMetaStore> {
    return new MysqlMetaStore(await openMysql(options, META_MIGRATIONS, '_migrations'));
  }

  async findByApiKeyHash(apiKeyHash: string): Promise<Tenant | null> {
    const rows: Array<{ id: string; name: string; plan: Tenant['plan']; created_at: Date }> = await this.ds.query(
      'SELECT t.id, t.name, t.plan, t.created_at FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = ?',
      [apiKeyHash],
    );
    return rows.length ? { id: rows[0].id, name: rows[0].name, plan: rows[0].plan, createdAt: new Date(rows[0].created_at) } : null;
  }

  async createWithApiKey(tenant: Tenant, apiKeyHash: string): Promise<boolean> {
    try {
      await this.ds.transaction(async (m) => {
        await m.query('INSERT INTO tenants (id, name, plan, created_at) VALUES (?, ?, ?, ?)', [tenant.id, tenant.name, tenant.plan, tenant.createdAt]);
        await m.query('INSERT INTO api_keys (key_hash, tenant_id, created_at) VALUES (?, ?, ?)', [apiKeyHash, tenant.id, new Date()]);
      });
      return true;
    } catch (error) {
      if (isMysqlDuplicate(error)) return false;
      throw error;
    }
  }

  async countTenants(): Promise<number> {
    const rows: Array<{ n: string }> = await this.ds.query('SELECT COUNT(*) AS n FROM tenants');
    return Number(rows[0].n);
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
