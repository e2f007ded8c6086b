import { Link, RetiredCode, ShortUrlIdentifier } from '@shortlink/links-domain';
import { JournalEntry, StoredRow, UpsertOutcome } from '@shortlink/sharding-domain';
import type { MoveOps } from '../movable-shard';
import { COLUMN_INDEX, LINK_COLUMNS, RowData, storedRow, tagsByLink } from '../rows';
import { SqliteDb } from '@shortlink/sql';

const COLUMNS = LINK_COLUMNS.join(', ');
const VERSION = COLUMN_INDEX.version;
/** Scans read `click_count` after the copied columns: it moves apart from them (carryClicks). */
const SCANNED = `${COLUMNS}, click_count`;
const CLICKS = LINK_COLUMNS.length;

/**
 * The move operations of a SQLite shard (docs/design.md, "Online resharding"): rows copied column
 * by column as SQLite returns them, each write one transaction, tombstones against late copies.
 */
export class SqliteMoveOps implements MoveOps {
  constructor(
    private readonly db: SqliteDb,
    /** The store's own Link -> row values (LINK_COLUMNS order), so that a dual write stores what an insert would. */
    private readonly valuesOf: (link: Link) => unknown[],
  ) {}

  async scanRows(afterId: string | null, limit: number): Promise<StoredRow[]> {
    const rows = this.db
      .prepare(`SELECT ${SCANNED} FROM links WHERE id > ? ORDER BY id LIMIT ?`)
      .raw(true)
      .all(afterId === null ? -1 : BigInt(afterId), limit) as unknown[][];
    return this.withTags(rows);
  }

  async rowsByIds(ids: readonly string[]): Promise<StoredRow[]> {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare(`SELECT ${SCANNED} FROM links WHERE id IN (${ids.map(() => '?').join(', ')}) ORDER BY id`)
      .raw(true)
      .all(...ids.map((i) => BigInt(i))) as unknown[][];
    return this.withTags(rows);
  }

  async upsertRows(rows: readonly StoredRow[]): Promise<UpsertOutcome> {
    return this.db
      .transaction(() => {
        let written = 0;
        let skipped = 0;
        let conflicts = 0;
        for (const row of rows) {
          const outcome = this.upsertOne(row);
          if (outcome === 'written') written++;
          else if (outcome === 'conflict') conflicts++;
          else skipped++;
        }
        return { written, skipped, conflicts };
      })
      .immediate();
  }

  async upsertLink(link: Link): Promise<boolean> {
    const row = storedRow(
      this.valuesOf(link),
      link.tags.map((t) => [link.tenantId, t] as const),
    );
    return (await this.upsertRows([row])).written === 1;
  }

  async removeCopy(id: ShortUrlIdentifier, linkId: string, retiredUntil: Date): Promise<void> {
    this.db
      .transaction(() => {
        this.db.prepare('INSERT OR IGNORE INTO link_move_tombstones (link_id, created_at) VALUES (?, ?)').run(BigInt(linkId), Date.now());
        this.db.prepare('DELETE FROM links WHERE id = ?').run(BigInt(linkId));
        this.db.prepare('DELETE FROM link_tags WHERE link_id = ?').run(BigInt(linkId));
        this.upsertRetiredOne({ ...id, retiredUntil });
      })
      .immediate();
  }

  async deleteRows(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const list = ids.map((i) => BigInt(i));
    const marks = ids.map(() => '?').join(', ');
    return this.db
      .transaction(() => {
        this.db.prepare(`DELETE FROM link_tags WHERE link_id IN (${marks})`).run(...list);
        return this.db.prepare(`DELETE FROM links WHERE id IN (${marks})`).run(...list).changes;
      })
      .immediate();
  }

  async scanRetired(after: ShortUrlIdentifier | null, limit: number): Promise<RetiredCode[]> {
    const rows = (
      after
        ? this.db
            .prepare('SELECT domain, code, retired_until FROM retired_codes WHERE (domain, code) > (?, ?) ORDER BY domain, code LIMIT ?')
            .all(after.domain, after.code, limit)
        : this.db.prepare('SELECT domain, code, retired_until FROM retired_codes ORDER BY domain, code LIMIT ?').all(limit)
    ) as Array<{ domain: string; code: string; retired_until: number }>;
    return rows.map((r) => ({ domain: r.domain, code: r.code, retiredUntil: new Date(r.retired_until) }));
  }

  async upsertRetired(codes: readonly RetiredCode[]): Promise<void> {
    this.db.transaction(() => codes.forEach((c) => this.upsertRetiredOne(c))).immediate();
  }

  async deleteRetired(ids: readonly ShortUrlIdentifier[]): Promise<void> {
    const del = this.db.prepare('DELETE FROM retired_codes WHERE domain = ? AND code = ?');
    this.db.transaction(() => ids.forEach((i) => del.run(i.domain, i.code))).immediate();
  }

  async carryClicks(carries: ReadonlyArray<{ readonly id: string; readonly clicks: number }>): Promise<number> {
    if (carries.length === 0) return 0;
    const mark = this.db.prepare('INSERT OR IGNORE INTO link_move_carries (link_id, clicks, created_at) VALUES (?, ?, ?)');
    const add = this.db.prepare('UPDATE links SET click_count = click_count + ? WHERE id = ?');
    return this.db
      .transaction(() => {
        let carried = 0;
        for (const { id, clicks } of carries) {
          if (mark.run(BigInt(id), clicks, Date.now()).changes === 0) continue;
          add.run(clicks, BigInt(id));
          carried++;
        }
        return carried;
      })
      .immediate();
  }

  async clearTombstones(): Promise<void> {
    this.db.prepare('DELETE FROM link_move_tombstones').run();
    this.db.prepare('DELETE FROM link_move_carries').run();
    await this.clearJournal();
  }

  async journal(entries: readonly JournalEntry[]): Promise<void> {
    this.db.transaction(() => this.journalNow(entries)).immediate();
  }

  /** Enters links in the journal, inside the caller's transaction (the store's journaled writes). */
  journalNow(entries: readonly JournalEntry[]): void {
    const add = this.db.prepare('INSERT OR IGNORE INTO link_move_journal (link_id, domain, code) VALUES (?, ?, ?)');
    for (const e of entries) add.run(BigInt(e.id), e.domain, e.code);
  }

  async journalPage(afterId: string | null, limit: number): Promise<JournalEntry[]> {
    const rows = this.db
      .prepare('SELECT link_id, domain, code FROM link_move_journal WHERE link_id > ? ORDER BY link_id LIMIT ?')
      .all(afterId === null ? -1 : BigInt(afterId), limit) as Array<{ link_id: number | bigint; domain: string; code: string }>;
    return rows.map((r) => ({ id: String(r.link_id), domain: r.domain, code: r.code }));
  }

  /** One statement: SQLite has one writer at a time, so every entry it deletes was committed before it. */
  async clearJournal(): Promise<void> {
    this.db.prepare('DELETE FROM link_move_journal').run();
  }

  private upsertRetiredOne(c: RetiredCode): void {
    this.db
      .prepare(
        'INSERT INTO retired_codes (domain, code, retired_until) VALUES (?, ?, ?) ON CONFLICT (domain, code) DO UPDATE SET retired_until = MAX(retired_until, excluded.retired_until)',
      )
      .run(c.domain, c.code, c.retiredUntil.getTime());
  }

  /** Inside the caller's transaction. */
  private upsertOne(row: StoredRow): 'written' | 'skipped' | 'conflict' {
    const data = row.data as RowData;
    const id = BigInt(row.id);
    if (this.db.prepare('SELECT 1 FROM link_move_tombstones WHERE link_id = ?').get(id)) return 'skipped';
    const existing = this.db.prepare('SELECT id, version FROM links WHERE domain = ? AND code = ?').get(row.domain, row.code) as
      { id: number | bigint; version: number } | undefined;
    if (existing && BigInt(existing.id) !== id) return 'conflict';
    if (existing && existing.version >= Number(data.values[VERSION])) return 'skipped';
    if (existing) {
      this.db
        .prepare(
          `UPDATE links SET ${LINK_COLUMNS.filter((c) => c !== 'id')
            .map((c) => `${c} = ?`)
            .join(', ')} WHERE id = ?`,
        )
        .run(...data.values.filter((_, i) => i !== COLUMN_INDEX.id), id);
      this.db.prepare('DELETE FROM link_tags WHERE link_id = ?').run(id);
    } else {
      this.db.prepare(`INSERT INTO links (${COLUMNS}) VALUES (${LINK_COLUMNS.map(() => '?').join(', ')})`).run(...data.values);
    }
    const tag = this.db.prepare('INSERT OR IGNORE INTO link_tags (tenant_id, tag, link_id) VALUES (?, ?, ?)');
    for (const [tenant, t] of data.tags) tag.run(tenant, t, id);
    return 'written';
  }

  private withTags(rows: unknown[][]): StoredRow[] {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r[COLUMN_INDEX.id] as number | bigint);
    const tags = this.db.prepare(`SELECT link_id, tenant_id, tag FROM link_tags WHERE link_id IN (${ids.map(() => '?').join(', ')})`).all(...ids) as Array<{
      link_id: number | bigint;
      tenant_id: string;
      tag: string;
    }>;
    const byId = tagsByLink(tags);
    return rows.map((r) => storedRow(r.slice(0, CLICKS), byId.get(String(r[COLUMN_INDEX.id])) ?? [], Number(r[CLICKS])));
  }
}
