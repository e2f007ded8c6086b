import { Clock, systemClock } from '@shortlink/core';
import { LinkChangeEvent, LinkEventOutbox, OutboxEvent, OutboxStamp, UNCLAIMED } from '../events/link-events';

interface Row {
  readonly event: OutboxEvent;
  owner: string;
  leaseUntil: number;
}

/** A shard's outbox in memory (the LinkEventOutbox of the SQL stores, by their rules, held by the same contract suite). */
export class InMemoryOutbox implements LinkEventOutbox {
  private readonly waiting = new Map<string, Row>();
  private nextId = 1;

  constructor(
    readonly shardName: string,
    private readonly stamp: OutboxStamp = UNCLAIMED,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Called by the shard in the "transaction" of a change (synchronously, with the change itself). */
  protected record(events: readonly LinkChangeEvent[]): void {
    const now = this.clock.now();
    for (const e of events) {
      const id = String(this.nextId++);
      const event: OutboxEvent = { ...e, id, shard: this.shardName, occurredAt: new Date(now) };
      this.waiting.set(id, { event, owner: this.stamp.owner, leaseUntil: now + this.stamp.leaseMs });
    }
  }

  /** Every event waiting, oldest first (tests). */
  get events(): OutboxEvent[] {
    return [...this.waiting.values()].map((r) => r.event);
  }

  async leased(owner: string, afterId: string | null, limit: number): Promise<OutboxEvent[]> {
    const after = afterId === null ? 0 : Number(afterId);
    return [...this.waiting.values()]
      .filter((r) => r.owner === owner && Number(r.event.id) > after)
      .slice(0, limit)
      .map((r) => r.event);
  }

  async claimExpired(owner: string, now: Date, until: Date, limit: number): Promise<OutboxEvent[]> {
    const lapsed = [...this.waiting.values()].filter((r) => r.leaseUntil <= now.getTime()).slice(0, limit);
    for (const r of lapsed) [r.owner, r.leaseUntil] = [owner, until.getTime()];
    return lapsed.map((r) => r.event);
  }

  async renew(owner: string, until: Date, ids?: readonly string[]): Promise<number> {
    const among = ids ? new Set(ids) : null;
    const mine = [...this.waiting.entries()].filter(([id, r]) => r.owner === owner && (!among || among.has(id))).map(([, r]) => r);
    for (const r of mine) r.leaseUntil = until.getTime();
    return mine.length;
  }

  async settle(owner: string, ids: readonly string[]): Promise<void> {
    for (const id of ids) if (this.waiting.get(id)?.owner === owner) this.waiting.delete(id);
  }

  async backlog(): Promise<{ events: number; oldest: Date | null }> {
    const first = this.waiting.values().next();
    return { events: this.waiting.size, oldest: first.done ? null : first.value.event.occurredAt };
  }
}
