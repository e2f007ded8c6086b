import {
  createdEvent,
  deletedEvent,
  DuplicateLinkError,
  editedEvent,
  Link,
  LinkListQuery,
  OutboxStamp,
  RetiredCode,
  ShortUrlIdentifier,
  UNCLAIMED,
} from '@shortlink/links-domain';
import { MovableShardStore } from '@shortlink/sharding-domain';
import { MovableShard } from '../movable-shard';
import type { Statement } from 'better-sqlite3';
import { codesByDomain, healthColumns, LINK_COLUMNS, linkFromRow, LinkRow, MODERATION_TO_DB, optionsJson, STATUS_TO_DB, tenantPageQuery } from '../rows';
import { migrateSqlite, openSqlite, SqliteDb } from '@shortlink/sql';
import { SQLITE_SHARD_MIGRATIONS } from './migrations';
import { SqliteMoveOps } from './sqlite-move-ops';
import { SqliteOutbox } from '../outbox/sqlite-outbox';

const SELECT = `SELECT ${LINK_COLUMNS.map((c) => `l.${c}`).join(', ')} FROM links l`;

/**
 * One SQLite file per shard: the embedded twin of a MySQL shard. Every change of a link writes its
 * event into `link_events` in its transaction, stamped `stamp` (docs/design.md, "Edits reach every instance").
 */
export class SqliteLinkShardStore extends MovableShard implements MovableShardStore {
  private readonly db: SqliteDb;
  protected readonly moves: SqliteMoveOps;
  protected readonly outbox: SqliteOutbox;
  private readonly insertStmt: Statement;
  private readonly insertTagStmt: Statement;
  private readonly findStmt: Statement;
  private readonly listStmt: Statement;
  private readonly replaceStmt: Statement;
  private readonly deleteTagsStmt: Statement;
  private readonly addClicksStmt: Statement;
  private readonly clickCountStmt: Statement;
  private readonly healthStmt: Statement;
  private readonly listLinksStmt: Statement;

  constructor(
    readonly shardName: string,
    file: string,
    stamp: OutboxStamp = UNCLAIMED,
  ) {
    super();
    this.db = openSqlite(file);
    migrateSqlite(this.db, SQLITE_SHARD_MIGRATIONS);
    this.outbox = new SqliteOutbox(shardName, this.db, stamp);
    this.insertStmt = this.db.prepare(`INSERT INTO links (${LINK_COLUMNS.join(', ')}) VALUES (${LINK_COLUMNS.map((c) => `@${c}`).join(', ')})`);
    this.insertTagStmt = this.db.prepare('INSERT OR IGNORE INTO link_tags (tenant_id, tag, link_id) VALUES (?, ?, ?)');
    this.deleteTagsStmt = this.db.prepare('DELETE FROM link_tags WHERE link_id = ?');
    this.findStmt = this.db.prepare(`${SELECT} WHERE l.domain = ? AND l.code = ?`);
    this.addClicksStmt = this.db.prepare('UPDATE links SET click_count = click_count + ? WHERE domain = ? AND code = ? AND id = ? RETURNING click_count');
    this.clickCountStmt = this.db.prepare('SELECT click_count FROM links WHERE domain = ? AND code = ? AND id = ?');
    this.listStmt = this.db.prepare('SELECT id, domain, code FROM links WHERE id > ? ORDER BY id LIMIT ?');
    this.replaceStmt = this.db.prepare(
      `UPDATE links SET target_url = @target_url, updated_at = @updated_at, expires_at = @expires_at, status = @status, redirect_type = @redirect_type,
       version = @version, moderation = @moderation, title = @title, options = @options, crawlable = @crawlable,
       health = @health, health_detail = @health_detail
       WHERE domain = @domain AND code = @code AND version = @expected_version`,
    );
    this.healthStmt = this.db.prepare('UPDATE links SET health = ?, health_detail = ? WHERE domain = ? AND code = ? AND id = ? AND version = ?');
    this.listLinksStmt = this.db.prepare(`${SELECT} WHERE l.id > ? ORDER BY l.id LIMIT ?`);
    this.moves = new SqliteMoveOps(this.db, (link) => {
      const params = toParams(link);
      return LINK_COLUMNS.map((c) => params[c]);
    });
  }

  async insert(link: Link): Promise<void> {
    await this.insertMany([link]);
  }

  async insertMany(links: readonly Link[]): Promise<void> {
    return this.insertRows(links, false);
  }

  async insertJournaled(links: readonly Link[]): Promise<void> {
    return this.insertRows(links, true);
  }

  private async insertRows(links: readonly Link[], journal: boolean): Promise<void> {
    if (links.length === 0) return;
    let current = links[0];
    try {
      this.db.transaction(() => {
        for (const l of links) {
          current = l;
          this.insertStmt.run(toParams(l));
          for (const tag of l.tags) this.insertTagStmt.run(l.tenantId, tag, BigInt(l.id));
        }
        if (journal) this.moves.journalNow(links);
        this.outbox.write(links.map(createdEvent));
      })();
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
        throw new DuplicateLinkError({ domain: current.domain, code: current.code });
      throw error;
    }
  }

  async findByCode(id: ShortUrlIdentifier): Promise<Link | null> {
    const row = this.findStmt.get(id.domain, id.code) as LinkRow | undefined;
    return row ? linkFromRow(row) : null;
  }

  async replace(link: Link, expectedVersion: number): Promise<boolean> {
    return this.replaceRow(link, expectedVersion, false);
  }

  async replaceJournaled(link: Link, expectedVersion: number): Promise<boolean> {
    return this.replaceRow(link, expectedVersion, true);
  }

  private replaceRow(link: Link, expectedVersion: number, journal: boolean): boolean {
    return this.db.transaction(() => {
      const changed = this.replaceStmt.run({ ...toParams(link), expected_version: expectedVersion }).changes === 1;
      if (changed) {
        this.deleteTagsStmt.run(BigInt(link.id));
        for (const tag of link.tags) this.insertTagStmt.run(link.tenantId, tag, BigInt(link.id));
        if (journal) this.moves.journalNow([link]);
        this.outbox.write([editedEvent(link)]);
      }
      return changed;
    })();
  }

  async remove(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date): Promise<boolean> {
    return this.removeRow(id, expectedVersion, retiredUntil, false);
  }

  async removeJournaled(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date): Promise<boolean> {
    return this.removeRow(id, expectedVersion, retiredUntil, true);
  }

  private removeRow(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date, journal: boolean): boolean {
    return this.db.transaction(() => {
      const row = this.db.prepare('SELECT id, tenant_id FROM links WHERE domain = ? AND code = ? AND version = ?').get(id.domain, id.code, expectedVersion) as
        { id: number | bigint; tenant_id: string } | undefined;
      if (!row) return false;
      this.db.prepare('DELETE FROM links WHERE id = ?').run(row.id);
      this.deleteTagsStmt.run(row.id);
      this.db
        .prepare(
          'INSERT INTO retired_codes (domain, code, retired_until) VALUES (?, ?, ?) ON CONFLICT (domain, code) DO UPDATE SET retired_until = excluded.retired_until',
        )
        .run(id.domain, id.code, retiredUntil.getTime());
      if (journal) this.moves.journalNow([{ id: String(row.id), domain: id.domain, code: id.code }]);
      this.outbox.write([deletedEvent({ id: String(row.id), tenantId: row.tenant_id, domain: id.domain, code: id.code, version: expectedVersion })]);
      return true;
    })();
  }

  async retiredUntil(id: ShortUrlIdentifier, now: Date): Promise<Date | null> {
    const row = this.db
      .prepare('SELECT retired_until FROM retired_codes WHERE domain = ? AND code = ? AND retired_until > ?')
      .get(id.domain, id.code, now.getTime()) as { retired_until: number } | undefined;
    return row ? new Date(row.retired_until) : null;
  }

  async findMany(ids: readonly ShortUrlIdentifier[]): Promise<Link[]> {
    return codesByDomain(ids).flatMap((g) =>
      (this.db.prepare(`${SELECT} WHERE l.domain = ? AND l.code IN (${g.placeholders})`).all(g.domain, ...g.codes) as LinkRow[]).map(linkFromRow),
    );
  }

  async retiredAmong(ids: readonly ShortUrlIdentifier[], now: Date): Promise<RetiredCode[]> {
    return codesByDomain(ids).flatMap((g) =>
      (
        this.db
          .prepare(`SELECT domain, code, retired_until FROM retired_codes WHERE domain = ? AND code IN (${g.placeholders}) AND retired_until > ?`)
          .all(g.domain, ...g.codes, now.getTime()) as Array<{ domain: string; code: string; retired_until: number }>
      ).map((r) => ({ domain: r.domain, code: r.code, retiredUntil: new Date(r.retired_until) })),
    );
  }

  async listByTenant(q: LinkListQuery): Promise<Link[]> {
    const { sql, params } = tenantPageQuery(q, { id: (id) => BigInt(id), time: (at) => at.getTime() });
    return (this.db.prepare(sql).all(...params) as LinkRow[]).map(linkFromRow);
  }

  async crawlableCodes(domain: string, limit: number): Promise<string[]> {
    const rows = this.db.prepare('SELECT code FROM links WHERE domain = ? AND crawlable = 1 ORDER BY code LIMIT ?').all(domain, limit) as Array<{
      code: string;
    }>;
    return rows.map((r) => r.code);
  }

  async tagsOf(tenantId: string, limit: number): Promise<string[]> {
    const rows = this.db.prepare('SELECT DISTINCT tag FROM link_tags WHERE tenant_id = ? ORDER BY tag LIMIT ?').all(tenantId, limit) as Array<{ tag: string }>;
    return rows.map((r) => r.tag);
  }

  async addClicks(id: ShortUrlIdentifier, linkId: string, delta: number): Promise<number | null> {
    const row = this.addClicksStmt.get(delta, id.domain, id.code, BigInt(linkId)) as { click_count: number } | undefined;
    return row ? Number(row.click_count) : null;
  }

  async clickCount(id: ShortUrlIdentifier, linkId: string): Promise<number | null> {
    const row = this.clickCountStmt.get(id.domain, id.code, BigInt(linkId)) as { click_count: number } | undefined;
    return row ? Number(row.click_count) : null;
  }

  async listIdentifiers(afterId: string | null, limit: number) {
    const rows = this.listStmt.all(afterId === null ? -1 : BigInt(afterId), limit) as Array<{ id: number | bigint; domain: string; code: string }>;
    return rows.map((r) => ({ id: String(r.id), domain: r.domain, code: r.code }));
  }

  async listLinks(afterId: string | null, limit: number): Promise<Link[]> {
    return (this.listLinksStmt.all(afterId === null ? -1 : BigInt(afterId), limit) as LinkRow[]).map(linkFromRow);
  }

  async recordHealth(link: Link, expectedVersion: number): Promise<boolean> {
    const { health, health_detail } = healthColumns(link.health);
    return this.healthStmt.run(health, health_detail, link.domain, link.code, BigInt(link.id), expectedVersion).changes === 1;
  }

  async expireDue(now: Date, limit: number): Promise<Link[]> {
    return this.db.transaction(() => {
      const rows = this.db
        .prepare(`${SELECT} WHERE l.status = ${STATUS_TO_DB.active} AND l.expires_at IS NOT NULL AND l.expires_at <= ? ORDER BY l.expires_at LIMIT ?`)
        .all(now.getTime(), limit) as LinkRow[];
      const mark = this.db.prepare(`UPDATE links SET status = ${STATUS_TO_DB.expired}, version = version + 1, updated_at = ? WHERE id = ?`);
      for (const r of rows) mark.run(now.getTime(), r.id);
      const expired = rows.map((r) => ({ ...linkFromRow(r), status: 'expired' as const, version: Number(r.version) + 1, updatedAt: now }));
      this.outbox.write(expired.map(editedEvent));
      return expired;
    })();
  }

  /** No event: the caches let an expiring link go at its expiry plus a minute, and a tombstone would keep its freed alias from a new link. */
  async purgeExpired(before: Date, limit: number): Promise<number> {
    return this.db.transaction(() => {
      const ids = (
        this.db.prepare(`SELECT id FROM links WHERE status = ${STATUS_TO_DB.expired} AND expires_at < ? LIMIT ?`).all(before.getTime(), limit) as Array<{
          id: number | bigint;
        }>
      ).map((r) => r.id);
      for (const id of ids) {
        this.db.prepare('DELETE FROM links WHERE id = ?').run(id);
        this.deleteTagsStmt.run(id);
      }
      return ids.length;
    })();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
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
    updated_at: link.updatedAt.getTime(),
    expires_at: link.expiresAt ? link.expiresAt.getTime() : null,
    status: STATUS_TO_DB[link.status],
    redirect_type: link.redirectType,
    version: link.version,
    moderation: MODERATION_TO_DB[link.moderation],
    title: link.title,
    options: optionsJson(link),
    crawlable: link.crawlable ? 1 : 0,
    ...healthColumns(link.health),
  };
}
