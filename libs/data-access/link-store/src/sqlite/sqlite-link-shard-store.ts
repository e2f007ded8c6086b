import { DuplicateLinkError, Link, LinkShardStore, ShortUrlIdentifier } from '@shortlink/links-domain';
import type { Statement } from 'better-sqlite3';
import { linkFromRow, LinkRow, STATUS_TO_DB } from '../rows';
import { migrateSqlite, openSqlite, SqliteDb } from './sqlite-database';
import { SQLITE_SHARD_MIGRATIONS } from './migrations';

/** One SQLite file per shard: the embedded twin of a MySQL shard. */
export class SqliteLinkShardStore implements LinkShardStore {
  private readonly db: SqliteDb;
  private readonly insertStmt: Statement;
  private readonly findStmt: Statement;
  private readonly listStmt: Statement;

  constructor(
    readonly shardName: string,
    file: string,
  ) {
    this.db = openSqlite(file);
    migrateSqlite(this.db, SQLITE_SHARD_MIGRATIONS);
    this.insertStmt = this.db.prepare(
      `INSERT INTO links (id, domain, code, target_url, tenant_id, created_at, expires_at, status, redirect_type)
       VALUES (@id, @domain, @code, @target_url, @tenant_id, @created_at, @expires_at, @status, @redirect_type)`,
    );
    this.findStmt = this.db.prepare('SELECT * FROM links WHERE domain = ? AND code = ?');
    this.listStmt = this.db.prepare('SELECT id, domain, code FROM links WHERE id > ? ORDER BY id LIMIT ?');
  }

  async insert(link: Link): Promise<void> {
    this.run(link, () => this.insertStmt.run(toParams(link)));
  }

  async insertMany(links: readonly Link[]): Promise<void> {
    if (links.length === 0) return;
    this.run(links[0], () => this.db.transaction(() => links.forEach((l) => this.insertStmt.run(toParams(l))))());
  }

  async findByCode(id: ShortUrlIdentifier): Promise<Link | null> {
    const row = this.findStmt.get(id.domain, id.code) as LinkRow | undefined;
    return row ? linkFromRow(row) : null;
  }

  async listIdentifiers(afterId: string | null, limit: number) {
    const rows = this.listStmt.all(afterId === null ? -1 : BigInt(afterId), limit) as Array<{ id: number | bigint; domain: string; code: string }>;
    return rows.map((r) => ({ id: String(r.id), domain: r.domain, code: r.code }));
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  private run(link: Link, op: () => unknown) {
    try {
      op();
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' || (error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new DuplicateLinkError({ domain: link.domain, code: link.code });
      }
      throw error;
    }
  }
}

function toParams(link: Link) {
  return {
    id: BigInt(link.id),
    domain: link.domain,
    code: link.code,
    target_url: link.targetUrl,
    tenant_id: link.tenantId,
    created_at: link.createdAt.getTime(),
    expires_at: link.expiresAt ? link.expiresAt.getTime() : null,
    status: STATUS_TO_DB[link.status],
    redirect_type: link.redirectType,
  };
}
