import { DataSource, EntityManager } from 'typeorm';
import { LinkChangeEvent, LinkEventOutbox, OutboxEvent, OutboxStamp } from '@shortlink/links-domain';
import { EVENT_COLUMNS, EVENT_SELECT, eventFromRow, EventRow, eventValues } from './outbox-rows';

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');
const ROW = `(${marks(EVENT_COLUMNS.length)})`;
const RENEW_PER_STATEMENT = 1000;

/** Writes the events of a change in the transaction `m` of that change (docs/design.md, "Edits reach every instance"). */
export async function writeEvents(m: EntityManager, events: readonly LinkChangeEvent[], stamp: OutboxStamp): Promise<void> {
  if (events.length === 0) return;
  await m.query(...eventsInsert(events, stamp));
}

/** The statement that writes `events` (at least one) into the outbox, and its parameters. */
export function eventsInsert(events: readonly LinkChangeEvent[], stamp: OutboxStamp): [string, unknown[]] {
  const now = Date.now();
  return [
    `INSERT INTO link_events (${EVENT_COLUMNS.join(', ')}) VALUES ${events.map(() => ROW).join(', ')}`,
    events.flatMap((e) => eventValues(e, stamp, now, (ms) => new Date(ms))),
  ];
}

/** The outbox of a MySQL shard: its `link_events` table. */
export class MysqlOutbox implements LinkEventOutbox {
  constructor(
    readonly shardName: string,
    private readonly ds: DataSource,
  ) {}

  async leased(owner: string, afterId: string | null, limit: number): Promise<OutboxEvent[]> {
    const rows: EventRow[] = await this.ds.query(`${EVENT_SELECT} WHERE lease_owner = ? AND id > ? ORDER BY id LIMIT ?`, [owner, afterId ?? '0', limit]);
    return rows.map((r) => eventFromRow(this.shardName, r));
  }

  async claimExpired(owner: string, now: Date, until: Date, limit: number): Promise<OutboxEvent[]> {
    if (limit <= 0) return [];
    const candidates: Array<{ id: string }> = await this.ds.query('SELECT id FROM link_events WHERE lease_until <= ? ORDER BY id LIMIT ?', [
      now.getTime(),
      limit,
    ]);
    if (candidates.length === 0) return [];
    const ids = candidates.map((c) => c.id);
    // The condition again in the UPDATE: of two relays that saw the same candidates, the second finds them leased.
    await this.ds.query(`UPDATE link_events SET lease_owner = ?, lease_until = ? WHERE id IN (${marks(ids.length)}) AND lease_until <= ?`, [
      owner,
      until.getTime(),
      ...ids,
      now.getTime(),
    ]);
    const rows: EventRow[] = await this.ds.query(`${EVENT_SELECT} WHERE id IN (${marks(ids.length)}) AND lease_owner = ? AND lease_until = ? ORDER BY id`, [
      ...ids,
      owner,
      until.getTime(),
    ]);
    return rows.map((r) => eventFromRow(this.shardName, r));
  }

  async renew(owner: string, until: Date, ids?: readonly string[]): Promise<number> {
    if (!ids) {
      const result: { affectedRows: number } = await this.ds.query('UPDATE link_events SET lease_until = ? WHERE lease_owner = ?', [until.getTime(), owner]);
      return result.affectedRows;
    }
    // By primary key, a thousand at a time: no range of the owner index is locked, so the
    // request's inserts of new events (same owner, higher ids) never wait behind a renewal.
    let held = 0;
    for (let i = 0; i < ids.length; i += RENEW_PER_STATEMENT) {
      const some = ids.slice(i, i + RENEW_PER_STATEMENT);
      const result: { affectedRows: number } = await this.ds.query(
        `UPDATE link_events SET lease_until = ? WHERE id IN (${marks(some.length)}) AND lease_owner = ?`,
        [until.getTime(), ...some, owner],
      );
      held += result.affectedRows;
    }
    return held;
  }

  async settle(owner: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.ds.query(`DELETE FROM link_events WHERE lease_owner = ? AND id IN (${marks(ids.length)})`, [owner, ...ids]);
  }

  async backlog(): Promise<{ events: number; oldest: Date | null }> {
    const [row]: Array<{ n: string | number; oldest: Date | null }> = await this.ds.query('SELECT COUNT(*) AS n, MIN(occurred_at) AS oldest FROM link_events');
    return { events: Number(row.n), oldest: row.oldest ? new Date(row.oldest) : null };
  }
}
