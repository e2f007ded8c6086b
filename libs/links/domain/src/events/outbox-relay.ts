import { Clock, systemClock } from '@shortlink/core';
import { eventKey, LinkChangeEvent, LinkEventOutbox, LinkEventOutboxes, OutboxEvent } from './link-events';

/**
 * A subscriber of link events (docs/design.md, "Edits reach every instance"). Deliveries may come
 * twice (after a crash, a lease taken over, a request and the relay both) and a link's events of
 * different relays in any order: a consumer applies them by version, idempotently.
 */
export interface LinkEventConsumer {
  readonly name: string;
  /** Delivers the events; resolves with those it could not (they come again at the next round). */
  deliver(events: readonly LinkChangeEvent[]): Promise<readonly LinkChangeEvent[]>;
  /**
   * For a consumer whose acknowledged writes can still be lost (a Redis master that took a write and
   * then lost its role): checks events delivered `confirmAfterMs` ago. `again`: they had not held and
   * were delivered again (checked once more later); `failed`: they could not be checked (next round).
   */
  reassert?(events: readonly LinkChangeEvent[]): Promise<{ readonly again: readonly LinkChangeEvent[]; readonly failed: readonly LinkChangeEvent[] }>;
}

export interface LinkEventRelayOptions {
  /** How often the relay reads its outboxes and delivers what waits (OUTBOX_RELAY_INTERVAL_MS). */
  readonly intervalMs: number;
  /** How long an event stays leased to this relay without being renewed (OUTBOX_LEASE_MS); the stamp of new events says the same. */
  readonly leaseMs: number;
  /** How long after a delivery a consumer with `reassert` checks it again (OUTBOX_CONFIRM_AFTER_MS). */
  readonly confirmAfterMs: number;
  /** Events read per shard and round (and handed to a consumer per call) at most. */
  readonly batch?: number;
  /** Events kept in memory per shard at most; beyond it the outbox waits (a long outage of a consumer). */
  readonly maxTracked?: number;
  readonly clock?: Clock;
  /** A shard's outbox could not be read or written this round (it is tried again at the next). */
  readonly onShardError?: (shard: string, error: unknown) => void;
}

/** Where one consumer is with one event. */
type Phase = { readonly at: 'due' } | { readonly at: 'busy' } | { readonly at: 'check'; readonly after: number } | { readonly at: 'done' };

const DUE: Phase = { at: 'due' };
/** Passes a round runs back to back at most while batches come full (see `work`). */
const PASSES_PER_ROUND = 8;
const BUSY: Phase = { at: 'busy' };
const DONE: Phase = { at: 'done' };

interface Tracked {
  readonly event: OutboxEvent;
  /** One per consumer; shared with the request that delivered the event itself, if one did. */
  readonly phases: Phase[];
}

/** Counters since start (the generation app's metrics). */
export interface RelayCounts {
  /** Events delivered to a consumer (a request's own delivery included). */
  delivered: number;
  /** Deliveries that failed and wait for the next round. */
  failed: number;
  /** Events a consumer found not to have held when it checked them again, and delivered again. */
  redelivered: number;
  /** Events deleted from the outboxes (every consumer had them). */
  settled: number;
  /** Events of another relay whose lease ran out, taken over. */
  claimed: number;
}

/**
 * The relay of the outboxes (docs/design.md, "Edits reach every instance"): after a link change
 * commits, the request delivers its events itself (`deliverNow`, the fast path of the propagation
 * bound), and the relay, every `intervalMs`, reads the events stamped with its owner, takes over
 * those of relays whose lease ran out, delivers what a request could not, checks each delivery
 * again `confirmAfterMs` later, and deletes an event from its outbox once every consumer has it.
 * Until then the event stays in the shard's database: a crash loses nothing, and another relay (or
 * this one, restarted) takes it over after its lease.
 */
export class LinkEventRelay {
  private readonly clock: Clock;
  private readonly batch: number;
  private readonly maxTracked: number;
  /** By shard, then outbox id. */
  private readonly tracked = new Map<string, Map<string, Tracked>>();
  /** Per shard: where the last round read up to, and the round before (re-read: a transaction may commit after a later one). */
  private readonly cursors = new Map<string, { last: string | null; before: string | null }>();
  private readonly renewedAt = new Map<string, number>();
  /** Events a request delivered itself, by eventKey, until the relay reads them from its outbox. */
  private readonly inline = new Map<string, { phases: Phase[]; until: number }>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  readonly counts: RelayCounts = { delivered: 0, failed: 0, redelivered: 0, settled: 0, claimed: 0 };

  constructor(
    private readonly outboxes: LinkEventOutboxes,
    private readonly consumers: readonly LinkEventConsumer[],
    private readonly options: LinkEventRelayOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.batch = options.batch ?? 1000;
    this.maxTracked = options.maxTracked ?? 20_000;
  }

  get owner(): string {
    return this.outboxes.stamp.owner;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.round(), this.options.intervalMs);
    this.timer.unref?.();
  }

  /** Stops the rounds and gives this relay's events up at once, so another relay need not wait out their lease. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    await Promise.all(this.outboxes.all().map((o) => o.renew(this.owner, new Date(0)).catch(() => undefined)));
  }

  /**
   * A request's delivery of the events its change committed (the fast path): every consumer gets
   * them now; the relay checks them later like its own deliveries, and delivers again what failed.
   * Never throws: the events are in the outbox whatever happens here. True when every consumer took them.
   */
  async deliverNow(events: readonly LinkChangeEvent[]): Promise<boolean> {
    if (events.length === 0) return true;
    const until = this.clock.now() + 2 * this.options.leaseMs;
    const records = events.map((event) => {
      const record = { phases: this.consumers.map(() => BUSY), until };
      this.inline.set(eventKey(event), record);
      return record;
    });
    let all = true;
    for (const [i, consumer] of this.consumers.entries()) {
      const failed = await this.attempt(consumer, events);
      const now = this.clock.now();
      events.forEach((event, k) => (records[k].phases[i] = failed.has(event) ? DUE : this.delivered(consumer, now)));
      if (failed.size) all = false;
    }
    return all;
  }

  /** One round: read, deliver, check, settle. The timer runs it; tests call it step by step. Rounds never overlap. */
  round(): Promise<void> {
    this.running ??= this.work().finally(() => (this.running = null));
    return this.running;
  }

  /** Events held by this relay (read and not yet settled), and how long the oldest of them has waited (ms). */
  pending(): { events: number; oldestMs: number } {
    let events = 0;
    let oldest = Infinity;
    for (const shard of this.tracked.values()) {
      events += shard.size;
      for (const t of shard.values()) oldest = Math.min(oldest, t.event.occurredAt.getTime());
    }
    return { events, oldestMs: events ? Math.max(0, this.clock.now() - oldest) : 0 };
  }

  /**
   * Passes back to back while a pass found a full batch to read, deliver or check, up to
   * PASSES_PER_ROUND: one pass a round relayed `batch` events a second at most (1 000), a quarter
   * of what one batch upload writes, and a large upload left a backlog that grew with the links
   * loaded (docs/benchmarks.md, "Scale").
   */
  private async work(): Promise<void> {
    for (let pass = 0; pass < PASSES_PER_ROUND; pass++) if (!(await this.pass())) break;
    const now = this.clock.now();
    for (const [key, record] of this.inline) if (record.until < now) this.inline.delete(key);
  }

  /** One read, deliver, check and settle; true when some step had a full batch (more may wait). */
  private async pass(): Promise<boolean> {
    const now = this.clock.now();
    const outboxes = this.outboxes.all();
    const reads = await Promise.all(outboxes.map((outbox) => this.read(outbox, now)));
    let full = reads.some(Boolean);
    for (const [i, consumer] of this.consumers.entries()) {
      if ((await this.deliverDue(i, consumer)) >= this.batch) full = true;
      if ((await this.checkDue(i, consumer)) >= this.batch) full = true;
    }
    await Promise.all(outboxes.map((outbox) => this.settle(outbox)));
    return full;
  }

  /** This relay's new events of one shard, those whose lease ran out, and its leases renewed; true when a page came back full. */
  private async read(outbox: LinkEventOutbox, now: number): Promise<boolean> {
    const shard = outbox.shardName;
    let mine = this.tracked.get(shard);
    if (!mine) this.tracked.set(shard, (mine = new Map()));
    let full = false;
    try {
      const room = this.maxTracked - mine.size;
      if (room > 0) {
        const cursor = this.cursors.get(shard) ?? { last: null, before: null };
        const fresh = await outbox.leased(this.owner, cursor.before, Math.min(this.batch, room) + mine.size);
        let adopted = 0;
        for (const event of fresh) if (this.adopt(mine, event)) adopted++;
        full = adopted >= Math.min(this.batch, room);
        this.cursors.set(shard, { last: fresh.at(-1)?.id ?? cursor.last, before: cursor.last });
        const lapsed = await outbox.claimExpired(
          this.owner,
          new Date(now),
          new Date(now + this.options.leaseMs),
          Math.min(this.batch, this.maxTracked - mine.size),
        );
        for (const event of lapsed) if (this.adopt(mine, event)) this.counts.claimed++;
      }
      if (mine.size && now - (this.renewedAt.get(shard) ?? 0) >= this.options.leaseMs / 3) {
        // What this relay has read, not its whole backlog: a renewal of every event of the owner
        // grew with the backlog (after a batch of millions, hundreds of thousands of rows per shard
        // every few seconds, locking the owner's range against the batch's own inserts).
        await outbox.renew(this.owner, new Date(now + this.options.leaseMs), [...mine.keys()]);
        this.renewedAt.set(shard, now);
      }
    } catch (error) {
      this.options.onShardError?.(shard, error);
    }
    return full;
  }

  private adopt(mine: Map<string, Tracked>, event: OutboxEvent): boolean {
    if (mine.has(event.id)) return false;
    const key = eventKey(event);
    const delivered = this.inline.get(key);
    this.inline.delete(key);
    mine.set(event.id, { event, phases: delivered?.phases ?? this.consumers.map(() => DUE) });
    return true;
  }

  private async deliverDue(i: number, consumer: LinkEventConsumer): Promise<number> {
    const due = this.select(i, (p) => p.at === 'due');
    if (due.length === 0) return 0;
    for (const t of due) t.phases[i] = BUSY;
    const failed = await this.attempt(
      consumer,
      due.map((t) => t.event),
    );
    const now = this.clock.now();
    for (const t of due) t.phases[i] = failed.has(t.event) ? DUE : this.delivered(consumer, now);
    return failed.size ? 0 : due.length; // a consumer that failed waits for the next round
  }

  private async checkDue(i: number, consumer: LinkEventConsumer): Promise<number> {
    const now = this.clock.now();
    const due = this.select(i, (p) => p.at === 'check' && p.after <= now);
    if (due.length === 0 || !consumer.reassert) return 0;
    for (const t of due) t.phases[i] = BUSY;
    let outcome: { again: ReadonlySet<LinkChangeEvent>; failed: ReadonlySet<LinkChangeEvent> };
    try {
      const r = await consumer.reassert(due.map((t) => t.event));
      outcome = { again: new Set(r.again), failed: new Set(r.failed) };
    } catch {
      outcome = { again: new Set(), failed: new Set(due.map((t) => t.event)) };
    }
    const after = this.clock.now();
    for (const t of due) {
      if (outcome.failed.has(t.event)) t.phases[i] = { at: 'check', after };
      else if (outcome.again.has(t.event)) {
        this.counts.redelivered++;
        t.phases[i] = { at: 'check', after: after + this.options.confirmAfterMs };
      } else t.phases[i] = DONE;
    }
    return outcome.failed.size ? 0 : due.length;
  }

  /** Deletes the shard's events every consumer has; they stay tracked (and are deleted again) if the outbox does not answer. */
  private async settle(outbox: LinkEventOutbox): Promise<void> {
    const mine = this.tracked.get(outbox.shardName);
    if (!mine) return;
    const done = [...mine.values()].filter((t) => t.phases.every((p) => p.at === 'done')).map((t) => t.event.id);
    if (done.length === 0) return;
    try {
      for (let i = 0; i < done.length; i += this.batch) await outbox.settle(this.owner, done.slice(i, i + this.batch));
      for (const id of done) mine.delete(id);
      this.counts.settled += done.length;
    } catch (error) {
      this.options.onShardError?.(outbox.shardName, error);
    }
  }

  /** Tracked events whose phase for consumer `i` matches, oldest first per shard, at most a batch. */
  private select(i: number, match: (p: Phase) => boolean): Tracked[] {
    const out: Tracked[] = [];
    for (const shard of this.tracked.values()) {
      for (const t of shard.values()) {
        if (match(t.phases[i])) out.push(t);
        if (out.length >= this.batch) return out;
      }
    }
    return out;
  }

  private async attempt(consumer: LinkEventConsumer, events: readonly LinkChangeEvent[]): Promise<ReadonlySet<LinkChangeEvent>> {
    let failed: ReadonlySet<LinkChangeEvent>;
    try {
      failed = new Set(await consumer.deliver(events));
    } catch {
      failed = new Set(events);
    }
    this.counts.delivered += events.length - failed.size;
    this.counts.failed += failed.size;
    return failed;
  }

  private delivered(consumer: LinkEventConsumer, now: number): Phase {
    return consumer.reassert ? { at: 'check', after: now + this.options.confirmAfterMs } : DONE;
  }
}
