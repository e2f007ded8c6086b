import type { AuditEntry, AuditLogStore, AuditQuery, StoredAuditEntry } from '@shortlink/audit-domain';
import { SqliteDb } from '@shortlink/sql';
import { auditFromRow, auditInsert, auditListSql, AuditRow } from './audit-rows';

const ms = (d: Date) => d.getTime();

/**
 * Writes audit entries inside the caller's transaction (a tenant store's change): a duplicate id
 * fails, and with it the change (docs/design.md, "Audit log").
 */
export function insertAuditEntriesSqlite(db: SqliteDb, entries: ReadonlyArray<AuditEntry | null | undefined>): void {
  const given = entries.filter((e): e is AuditEntry => !!e);
  if (!given.length) return;
  const { sql, params } = auditInsert(given, ms, 'INSERT INTO');
  db.prepare(sql).run(...params);
}

/** The audit log in the embedded meta database (the migrations are the meta store's). */
export class SqliteAuditLogStore implements AuditLogStore {
  constructor(private readonly db: SqliteDb) {}

  async append(entries: readonly AuditEntry[]): Promise<void> {
    if (!entries.length) return;
    const { sql, params } = auditInsert(entries, ms, 'INSERT OR IGNORE INTO');
    this.db.prepare(sql).run(...params);
  }

  async list(query: AuditQuery): Promise<StoredAuditEntry[]> {
    const { sql, params } = auditListSql(query, ms, (seq) => BigInt(seq));
    return (this.db.prepare(sql).all(...params) as AuditRow[]).map(auditFromRow);
  }

  async purgeBefore(before: Date, limit: number): Promise<number> {
    return this.db.prepare('DELETE FROM audit_log WHERE seq IN (SELECT seq FROM audit_log WHERE at < ? ORDER BY at, seq LIMIT ?)').run(before.getTime(), limit)
      .changes;
  }
}
