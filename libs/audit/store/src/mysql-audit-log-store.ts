import { DataSource, EntityManager } from 'typeorm';
import { GroupCommit } from '@shortlink/core';
import type { AuditEntry, AuditLogStore, AuditQuery, StoredAuditEntry } from '@shortlink/audit-domain';
import { auditFromRow, auditInsert, auditListSql, AuditRow } from './audit-rows';

const asIs = (d: Date) => d;

/**
 * Writes audit entries inside the caller's transaction (a tenant store's change): a duplicate id
 * fails, and with it the change (docs/design.md, "Audit log").
 */
export async function insertAuditEntriesMysql(m: EntityManager, entries: ReadonlyArray<AuditEntry | null | undefined>): Promise<void> {
  const given = entries.filter((e): e is AuditEntry => !!e);
  if (!given.length) return;
  const { sql, params } = auditInsert(given, asIs, 'INSERT INTO');
  await m.query(sql, params);
}

/** The audit log in the MySQL meta database (the migrations are the meta store's). */
export class MysqlAuditLogStore implements AuditLogStore {
  /**
   * The entries of requests that arrive together go in one statement (docs/design.md, "Group
   * commit"): every change request appends one, so at a thousand creates a second this is the meta
   * database's busiest write.
   */
  private readonly appends = new GroupCommit<readonly AuditEntry[]>({
    write: (groups) => this.insert(groups.flat()),
    maxItems: 200,
  });

  constructor(private readonly ds: DataSource) {}

  async append(entries: readonly AuditEntry[]): Promise<void> {
    if (!entries.length) return;
    await this.appends.submit(entries);
  }

  private async insert(entries: readonly AuditEntry[]): Promise<void> {
    // Only a duplicate id is skipped (INSERT IGNORE would also turn other errors into warnings).
    const { sql, params } = auditInsert(entries, asIs, 'INSERT INTO', ' ON DUPLICATE KEY UPDATE id = id');
    await this.ds.query(sql, params);
  }

  async list(query: AuditQuery): Promise<StoredAuditEntry[]> {
    const { sql, params } = auditListSql(query, asIs, (seq) => seq);
    return ((await this.ds.query(sql, params)) as AuditRow[]).map(auditFromRow);
  }

  async purgeBefore(before: Date, limit: number): Promise<number> {
    const result: { affectedRows: number } = await this.ds.query('DELETE FROM audit_log WHERE at < ? ORDER BY at, seq LIMIT ?', [before, limit]);
    return result.affectedRows;
  }
}
