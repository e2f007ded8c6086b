import { LinkChangeEvent, LinkEventOutbox, OutboxEvent, OutboxStamp } from '@shortlink/links-domain';
import type { Statement } from 'better-sqlite3';
import { SqliteDb } from '@shortlink/sql';
import { EVENT_COLUMNS, EVENT_SELECT, eventFromRow, EventRow, eventValues } from './outbox-rows';

/** The outbox of a SQLite shard: its `link_events` table. `write` is called inside the change's transaction. */
export class SqliteOutbox implements LinkEventOutbox {
  private readonly insertStmt: Statement;
  private readonly leasedStmt: Statement;

  constructor(
    readonly shardName: string,
    private readonly db: SqliteDb,
    private readonly stamp: OutboxStamp,
  ) {
    this.insertStmt = db.prepare(`INSERT INTO link_events (${EVENT_COLUMNS.join(', ')}) VALUES (${EVENT_COLUMNS.map(() => '?').join(', ')})`);
    this.leasedStmt = db.prepare(`${EVENT_SELECT} WHERE lease_owner = ? AND id > ? ORDER BY id LIMIT ?`);
  }

  /** The events of a change: to be called in that change's transaction (docs/design.md, "Edits reach every instance"). */
  write(events: readonly LinkChangeEvent[]): void {
    const now = Date.now();
    for (const e of events) this.insertStmt.run(...eventValues(e, this.stamp, now, (ms) => ms));
  }

  async leased(owner: string, afterId: string | null, limit: number): Promise<OutboxEvent[]> {
    return (this.leasedStmt.all(owner, afterId === null ? 0 : BigInt(afterId), limit) as EventRow[]).map((r) => eventFromRow(this.shardName, r));
  }

  async claimExpired(owner: string, now: Date, until: Date, limit: number): Promise<OutboxEvent[]> {
    if (limit <= 0) return [];
    // One write transaction: SQLite runs one at a time, so two relays never take the same event.
    return this.db
      .transaction(() => {
        const rows = this.db.prepare(`${EVENT_SELECT} WHERE lease_until <= ? ORDER BY id LIMIT ?`).all(now.getTime(), limit) as EventRow[];
        const take = this.db.prepare('UPDATE link_events SET lease_owner = ?, lease_until = ? WHERE id = ?');
        for (const r of rows) take.run(owner, until.getTime(), r.id);
        return rows.map((r) => eventFromRow(this.shardName, r));
      })
      .immediate();
  }

  async renew(owner: string, until: Date, ids?: readonly string[]): Promise<number> {
    if (!ids) return this.db.prepare('UPDATE link_events SET lease_until = ? WHERE lease_owner = ?').run(until.getTime(), owner).changes;
    const one = this.db.prepare('UPDATE link_events SET lease_until = ? WHERE id = ? AND lease_owner = ?');
    return this.db.transaction(() => ids.reduce((held, id) => held + one.run(until.getTime(), BigInt(id), owner).changes, 0))();
  }

  async settle(owner: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const drop = this.db.prepare('DELETE FROM link_events WHERE lease_owner = ? AND id = ?');
    this.db.transaction(() => {
      for (const id of ids) drop.run(owner, BigInt(id));
    })();
  }

  async backlog(): Promise<{ events: number; oldest: Date | null }> {
    const row = this.db.prepare('SELECT COUNT(*) AS n, MIN(occurred_at) AS oldest FROM link_events').get() as { n: number; oldest: number | null };
    return { events: Number(row.n), oldest: row.oldest === null ? null : new Date(row.oldest) };
  }
}
