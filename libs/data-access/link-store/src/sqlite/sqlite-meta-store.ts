import { IdBlock, SequenceStore, Tenant, TenantStore } from '@shortlink/links-domain';
import { migrateSqlite, openSqlite, SqliteDb } from './sqlite-database';
import { SQLITE_META_MIGRATIONS } from './migrations';

/** Tenants, API keys and sequences in one SQLite file (the shard-independent database). */
export class SqliteMetaStore implements TenantStore, SequenceStore {
  private readonly db: SqliteDb;

  constructor(file: string) {
    this.db = openSqlite(file);
    migrateSqlite(this.db, SQLITE_META_MIGRATIONS);
  }

  async findByApiKeyHash(apiKeyHash: string): Promise<Tenant | null> {
    const row = this.db
      .prepare('SELECT t.id, t.name, t.plan, t.created_at FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = ?')
      .get(apiKeyHash) as { id: string; name: string; plan: Tenant['plan']; created_at: number } | undefined;
    return row ? { id: row.id, name: row.name, plan: row.plan, createdAt: new Date(row.created_at) } : null;
  }

  async createWithApiKey(tenant: Tenant, apiKeyHash: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (this.db.prepare('SELECT 1 FROM api_keys WHERE key_hash = ?').get(apiKeyHash)) return false;
        this.db.prepare('INSERT INTO tenants (id, name, plan, created_at) VALUES (?, ?, ?, ?)').run(tenant.id, tenant.name, tenant.plan, tenant.createdAt.getTime());
        this.db.prepare('INSERT INTO api_keys (key_hash, tenant_id, created_at) VALUES (?, ?, ?)').run(apiKeyHash, tenant.id, Date.now());
        return true;
      })
      .immediate();
  }

  async countTenants(): Promise<number> {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM tenants').get() as { n: number }).n;
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
