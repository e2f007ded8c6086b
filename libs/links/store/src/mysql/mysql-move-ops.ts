import { DataSource, EntityManager } from 'typeorm';
import { Link, RetiredCode, ShortUrlIdentifier } from '@shortlink/links-domain';
import { JournalEntry, StoredRow, UpsertOutcome } from '@shortlink/sharding-domain';
import type { MoveOps } from '../movable-shard';
import { COLUMN_INDEX, LINK_COLUMNS, RowData, storedRow, tagsByLink } from '../rows';

const COLUMNS = LINK_COLUMNS.join(', ');
/** Scans read `click_count` after the copied columns: it moves apart from them (carryClicks). */
const SCANNED = `${COLUMNS}, click_count`;
const ROW_MARKS = `(${LINK_COLUMNS.map(() => '?').join(', ')})`;
const UPDATE_SET = LINK_COLUMNS.filter((c) => c !== 'id')
  .map((c) => `${c} = ?`)
  .join(', ');
const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');
/** (domain, code) as one key: domains compare case-insensitively in the table, codes exactly. */
const keyOf = (domain: string, code: string) => `${domain.toLowerCase()}\u0000${code}`;

/** A row's values in LINK_COLUMNS order. */
const asValues = (row: Record<string, unknown>): unknown[] => LINK_COLUMNS.map((c) => row[c]);

/** InnoDB may pick one of two transactions that lock the same index gap as a deadlock victim: run it again. */
export async function retryingDeadlocks<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const e = error as { errno?: number; driverError?: { errno?: number } };
      if (attempt >= 4 || (e.errno ?? e.driverError?.errno) !== 1213) throw error;
    }
  }
}

/**
 * The move operations of a MySQL shard (docs/design.md, "Online resharding"): rows copied column
 * by column as the driver returns them, a batch in one transaction with a handful of statements,
 * tombstones against late copies.
 */
export class MysqlMoveOps implements MoveOps {
  constructor(
    private readonly ds: DataSource,
    /** The store's own Link -> row values (LINK_COLUMNS order), so that a dual write stores what an insert would. */
    private readonly valuesOf: (link: Link) => unknown[],
  ) {}

  async scanRows(afterId: string | null, limit: number): Promise<StoredRow[]> {
    const rows: Array<Record<string, unknown>> = await this.ds.query(`SELECT ${SCANNED} FROM links WHERE id > ? ORDER BY id LIMIT ?`, [afterId ?? '0', limit]);
    return this.withTags(this.ds.manager, rows);
  }

  async rowsByIds(ids: readonly string[]): Promise<StoredRow[]> {
    if (ids.length === 0) return [];
    const rows: Array<Record<string, unknown>> = await this.ds.query(`SELECT ${SCANNED} FROM links WHERE id IN (${marks(ids.length)}) ORDER BY id`, [...ids]);
    return this.withTags(this.ds.manager, rows);
  }

  async upsertRows(rows: readonly StoredRow[]): Promise<UpsertOutcome> {
    if (rows.length === 0) return { written: 0, skipped: 0, conflicts: 0 };
    return retryingDeadlocks(() =>
      this.ds.transaction(async (m) => {
        const tombstoned = new Set(
          (
            (await m.query(
              `SELECT link_id FROM link_move_tombstones WHERE link_id IN (${marks(rows.length)})`,
              rows.map((r) => r.id),
            )) as Array<{ link_id: string }>
          ).map((r) => String(r.link_id)),
        );
        const candidates = rows.filter((r) => !tombstoned.has(r.id));
        let skipped = rows.length - candidates.length;
        let conflicts = 0;
        if (candidates.length === 0) return { written: 0, skipped, conflicts };
        const existing = new Map(
          (
            (await m.query(
              `SELECT id, domain, code, version FROM links WHERE (domain, code) IN (${candidates.map(() => '(?, ?)').join(', ')}) FOR UPDATE`,
              candidates.flatMap((r) => [r.domain, r.code]),
            )) as Array<{ id: string; domain: string; code: string; version: number }>
          ).map((e) => [keyOf(e.domain, e.code), e]),
        );
        const inserts: StoredRow[] = [];
        const updates: StoredRow[] = [];
        for (const row of candidates) {
          const e = existing.get(keyOf(row.domain, row.code));
          if (!e) inserts.push(row);
          else if (String(e.id) !== row.id) conflicts++;
          else if (Number(e.version) >= row.version) skipped++;
          else updates.push(row);
        }
        if (inserts.length)
          await m.query(
            `INSERT INTO links (${COLUMNS}) VALUES ${inserts.map(() => ROW_MARKS).join(', ')}`,
            inserts.flatMap((r) => [...(r.data as RowData).values]),
          );
        for (const row of updates) {
          const values = (row.data as RowData).values;
          await m.query(`UPDATE links SET ${UPDATE_SET} WHERE id = ?`, [...values.filter((_, i) => i !== COLUMN_INDEX.id), row.id]);
        }
        if (updates.length)
          await m.query(
            `DELETE FROM link_tags WHERE link_id IN (${marks(updates.length)})`,
            updates.map((r) => r.id),
          );
        const tags = [...inserts, ...updates].flatMap((r) => (r.data as RowData).tags.map(([tenant, tag]) => [tenant, tag, r.id]));
        if (tags.length) await m.query(`INSERT IGNORE INTO link_tags (tenant_id, tag, link_id) VALUES ${tags.map(() => '(?, ?, ?)').join(', ')}`, tags.flat());
        return { written: inserts.length + updates.length, skipped, conflicts };
      }),
    );
  }

  async upsertLink(link: Link): Promise<boolean> {
    const row = storedRow(
      this.valuesOf(link),
      link.tags.map((t) => [link.tenantId, t] as const),
    );
    return (await this.upsertRows([row])).written === 1;
  }

  async removeCopy(id: ShortUrlIdentifier, linkId: string, retiredUntil: Date): Promise<void> {
    await retryingDeadlocks(() =>
      this.ds.transaction(async (m) => {
        await m.query('INSERT IGNORE INTO link_move_tombstones (link_id, created_at) VALUES (?, NOW(3))', [linkId]);
        await m.query('DELETE FROM links WHERE id = ?', [linkId]);
        await m.query('DELETE FROM link_tags WHERE link_id = ?', [linkId]);
        await upsertRetired(m, [{ ...id, retiredUntil }]);
      }),
    );
  }

  async deleteRows(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return retryingDeadlocks(() =>
      this.ds.transaction(async (m) => {
        await m.query(`DELETE FROM link_tags WHERE link_id IN (${marks(ids.length)})`, [...ids]);
        const result: { affectedRows: number } = await m.query(`DELETE FROM links WHERE id IN (${marks(ids.length)})`, [...ids]);
        return result.affectedRows;
      }),
    );
  }

  async scanRetired(after: ShortUrlIdentifier | null, limit: number): Promise<RetiredCode[]> {
    const rows: Array<{ domain: string; code: string; retired_until: Date }> = after
      ? await this.ds.query('SELECT domain, code, retired_until FROM retired_codes WHERE (domain, code) > (?, ?) ORDER BY domain, code LIMIT ?', [
          after.domain,
          after.code,
          limit,
        ])
      : await this.ds.query('SELECT domain, code, retired_until FROM retired_codes ORDER BY domain, code LIMIT ?', [limit]);
    return rows.map((r) => ({ domain: r.domain, code: r.code, retiredUntil: new Date(r.retired_until) }));
  }

  async upsertRetired(codes: readonly RetiredCode[]): Promise<void> {
    if (codes.length) await upsertRetired(this.ds.manager, codes);
  }

  async deleteRetired(ids: readonly ShortUrlIdentifier[]): Promise<void> {
    if (ids.length)
      await this.ds.query(
        `DELETE FROM retired_codes WHERE (domain, code) IN (${ids.map(() => '(?, ?)').join(', ')})`,
        ids.flatMap((i) => [i.domain, i.code]),
      );
  }

  async carryClicks(carries: ReadonlyArray<{ readonly id: string; readonly clicks: number }>): Promise<number> {
    if (carries.length === 0) return 0;
    return retryingDeadlocks(() =>
      this.ds.transaction(async (m) => {
        let carried = 0;
        for (const { id, clicks } of carries) {
          const marked: { affectedRows: number } = await m.query('INSERT IGNORE INTO link_move_carries (link_id, clicks, created_at) VALUES (?, ?, NOW(3))', [
            id,
            clicks,
          ]);
          if (marked.affectedRows === 0) continue;
          await m.query('UPDATE links SET click_count = click_count + ? WHERE id = ?', [clicks, id]);
          carried++;
        }
        return carried;
      }),
    );
  }

  async clearTombstones(): Promise<void> {
    await this.ds.query('DELETE FROM link_move_tombstones');
    await this.ds.query('DELETE FROM link_move_carries');
    await this.clearJournal();
  }

  async journal(entries: readonly JournalEntry[]): Promise<void> {
    if (entries.length) await retryingDeadlocks(() => journalEntries(this.ds.manager, entries));
  }

  async journalPage(afterId: string | null, limit: number): Promise<JournalEntry[]> {
    const rows: Array<{ link_id: string; domain: string; code: string }> = await this.ds.query(
      'SELECT link_id, domain, code FROM link_move_journal WHERE link_id > ? ORDER BY link_id LIMIT ?',
      [afterId ?? '0', limit],
    );
    return rows.map((r) => ({ id: String(r.link_id), domain: r.domain, code: r.code }));
  }

  /**
   * In slices, so that writers entering links meanwhile wait for one slice at most. A slice deletes
   * only committed entries (it waits for a writer's uncommitted one), and an entry committed after
   * its slice passed stays: either way no write committed after this returns loses its entry.
   */
  async clearJournal(): Promise<void> {
    for (;;) {
      const result: { affectedRows: number } = await retryingDeadlocks(() => this.ds.query('DELETE FROM link_move_journal ORDER BY link_id LIMIT 5000'));
      if (result.affectedRows < 5000) return;
    }
  }

  private async withTags(m: EntityManager, scanned: Array<Record<string, unknown>>): Promise<StoredRow[]> {
    if (scanned.length === 0) return [];
    const rows = scanned.map(asValues);
    const ids = rows.map((r) => String(r[COLUMN_INDEX.id]));
    const tags: Array<{ link_id: string; tenant_id: string; tag: string }> = await m.query(
      `SELECT link_id, tenant_id, tag FROM link_tags WHERE link_id IN (${marks(ids.length)})`,
      ids,
    );
    const byId = tagsByLink(tags);
    return rows.map((r, i) => storedRow(r, byId.get(String(r[COLUMN_INDEX.id])) ?? [], Number(scanned[i].click_count)));
  }
}

/**
 * Enters links in the move journal within `m`'s transaction, in id order (two writers then lock
 * the journal's index in the same order).
 */
export async function journalEntries(m: EntityManager, entries: readonly JournalEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const sorted = [...new Map(entries.map((e) => [e.id, e])).values()].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  await m.query(
    `INSERT IGNORE INTO link_move_journal (link_id, domain, code) VALUES ${sorted.map(() => '(?, ?, ?)').join(', ')}`,
    sorted.flatMap((e) => [e.id, e.domain, e.code]),
  );
}

async function upsertRetired(m: EntityManager, codes: readonly RetiredCode[]): Promise<void> {
  await m.query(
    `INSERT INTO retired_codes (domain, code, retired_until) VALUES ${codes.map(() => '(?, ?, ?)').join(', ')} ON DUPLICATE KEY UPDATE retired_until = GREATEST(retired_until, VALUES(retired_until))`,
    codes.flatMap((c) => [c.domain, c.code, c.retiredUntil]),
  );
}
