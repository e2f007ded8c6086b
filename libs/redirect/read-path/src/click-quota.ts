import type { LRUCache } from 'lru-cache';
import { boundedLru } from '@shortlink/core';
import { CachedLink, ExhaustionView, ShortUrlIdentifier } from '@shortlink/links-domain';
import { CacheKeys } from './cache-keys';
import { CacheStore } from './ports';

/** Where the redirects counted against maxClicks are kept for good: the link's row on its shard. */
export interface ClickCounts {
  addClicks(id: ShortUrlIdentifier, linkId: string, delta: number): Promise<number | null>;
  clickCount(id: ShortUrlIdentifier, linkId: string): Promise<number | null>;
}

export interface ClickQuotaOptions {
  /**
   * How often the clicks granted here are added to the shard's count. It bounds what a lost Redis
   * counter can cost (docs/design.md, "Max clicks"): the clicks granted but not yet flushed.
   */
  readonly flushIntervalMs: number;
  /** Links remembered as exhausted, and persisted counts remembered, per instance. */
  readonly maxLinks?: number;
}

export interface ClickQuotaObserver {
  reserved(outcome: ReservationOutcome, n: number): void;
  /** A counter was missing in the shared cache and was started again from the shard's count. */
  seeded(): void;
  flushFailed(): void;
}

export type ReservationOutcome = 'granted' | 'exhausted' | 'unavailable';

interface Batch {
  readonly id: ShortUrlIdentifier;
  readonly limit: number;
  readonly waiting: Array<(outcome: ReservationOutcome) => void>;
}

const quiet: ClickQuotaObserver = { reserved: () => undefined, seeded: () => undefined, flushFailed: () => undefined };

/**
 * maxClicks, exact across instances (docs/design.md, "Max clicks"): every redirect of a link with
 * maxClicks takes one unit of a shared counter that never passes the limit (`reserveBelow`, a Lua
 * script on Redis, the in-process twin on the embedded profile). The requests for one link that
 * arrive in one event-loop turn are taken in one call (the batch gets what is left, in arrival
 * order), so a hot link costs one round trip per turn, not one per request.
 *
 * The granted units are also added to the shard's `click_count` every `flushIntervalMs`, and,
 * once more than half of a link's limit is taken, before its redirects are answered. A counter the
 * cache lost (eviction, a failover, a restart of the in-process cache) is started again from that
 * count; a count a failover set back is raised to the last total this instance flushed. So a loss
 * costs at most the clicks granted but not yet flushed when it happened, which are clicks granted
 * below half the limit, and nothing for a link that was already exhausted.
 */
export class ClickQuota implements ExhaustionView {
  private batches = new Map<string, Batch>();
  private scheduled = false;
  /** Link id -> the count seen when its limit was reached (a raised limit makes it live again). */
  private readonly exhausted: LRUCache<string, number>;
  /**
   * Link id -> the shard's count as last read or written here: an existing counter below it (set
   * back by a failover) is raised to it. Never a seed for a missing one: another instance may have
   * flushed more since.
   */
  private readonly floors: LRUCache<string, number>;
  private readonly unflushed = new Map<string, { id: ShortUrlIdentifier; n: number }>();
  private timer: NodeJS.Timeout | null = null;
  private queued: Promise<void> | null = null;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: CacheStore,
    private readonly counts: ClickCounts,
    private readonly options: ClickQuotaOptions,
    private readonly observer: ClickQuotaObserver = quiet,
  ) {
    this.exhausted = boundedLru({ maxEntries: options.maxLinks ?? 100_000 });
    this.floors = boundedLru({ maxEntries: options.maxLinks ?? 100_000 });
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer and flushes what is left (at shutdown, before the shards close). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  isKnownExhausted(link: CachedLink): boolean {
    const limit = link.rules?.maxClicks;
    if (limit === undefined) return false;
    const seen = this.exhausted.get(link.id);
    return seen !== undefined && seen >= limit;
  }

  /** Whether the link has no click left, without taking one (the password form asks this first). */
  async isExhausted(link: CachedLink, id: ShortUrlIdentifier): Promise<boolean> {
    const limit = link.rules?.maxClicks;
    if (limit === undefined) return false;
    if (this.isKnownExhausted(link)) return true;
    const stored = await this.store.get(CacheKeys.clickCounter(link.id));
    const count = stored !== null && stored !== '' ? Number(stored) : ((await this.counts.clickCount(id, link.id)) ?? 0);
    if (count < limit) return false;
    this.exhausted.set(link.id, count);
    return true;
  }

  /**
   * Takes one click of `link` (which has maxClicks) and calls `done` with the outcome: `granted`
   * (redirect), `exhausted` (410) or `unavailable` (the shared counter cannot be reached: 503,
   * since granting without it could pass the limit by any amount).
   */
  reserve(link: CachedLink, id: ShortUrlIdentifier, done: (outcome: ReservationOutcome) => void): void {
    let batch = this.batches.get(link.id);
    if (batch === undefined) {
      batch = { id, limit: link.rules!.maxClicks!, waiting: [] };
      this.batches.set(link.id, batch);
      if (!this.scheduled) {
        this.scheduled = true;
        // After the poll phase: every request read in this turn is in its link's batch by then.
        setImmediate(this.drain);
      }
    }
    batch.waiting.push(done);
  }

  /** Clicks granted here and not yet on the shard (what a counter loss could cost right now). */
  get unflushedClicks(): number {
    let n = 0;
    for (const e of this.unflushed.values()) n += e.n;
    return n;
  }

  /** Adds the granted clicks to the shards; one flush at a time, at most one more queued behind it. */
  flush(): Promise<void> {
    if (this.queued) return this.queued;
    const run = this.tail.then(() => {
      this.queued = null;
      return this.flushOnce();
    });
    this.queued = run;
    this.tail = run.catch(() => undefined);
    return run;
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    const batches = this.batches;
    this.batches = new Map();
    for (const [linkId, batch] of batches) void this.settle(linkId, batch);
  };

  private async settle(linkId: string, batch: Batch): Promise<void> {
    const wanted = batch.waiting.length;
    let result: { granted: number; count: number } | null = null;
    try {
      const key = CacheKeys.clickCounter(linkId);
      const floor = this.floors.get(linkId) ?? 0;
      result = await this.store.reserveBelow(key, batch.limit, wanted, floor, null);
      if (result === null) {
        // The counter is missing: first use, or lost. Start it again from the shard's count, read
        // now: a floor known here may be older than another instance's last flush.
        const persisted = (await this.counts.clickCount(batch.id, linkId)) ?? 0;
        this.observer.seeded();
        this.raiseFloor(linkId, persisted);
        result = await this.store.reserveBelow(key, batch.limit, wanted, floor, persisted);
      }
    } catch {
      result = null;
    }
    if (result === null) {
      this.observer.reserved('unavailable', wanted);
      for (const done of batch.waiting) done('unavailable');
      return;
    }
    const { granted, count } = result;
    if (granted > 0) {
      const entry = this.unflushed.get(linkId);
      if (entry) entry.n += granted;
      else this.unflushed.set(linkId, { id: batch.id, n: granted });
    }
    if (count >= batch.limit) this.exhausted.set(linkId, count);
    // Past half the limit the grant reaches the shard before the redirects are answered (the final
    // count included, so a later loss cannot revive an exhausted link): a lost counter then costs at
    // most the clicks granted below half the limit and not yet flushed. A failed flush keeps them for the next tick.
    if (granted > 0 && count * 2 > batch.limit) await this.flush();
    if (granted > 0) this.observer.reserved('granted', granted);
    if (granted < wanted) this.observer.reserved('exhausted', wanted - granted);
    for (let i = 0; i < wanted; i++) batch.waiting[i](i < granted ? 'granted' : 'exhausted');
  }

  private async flushOnce(): Promise<void> {
    for (const [linkId, entry] of [...this.unflushed]) {
      const n = entry.n;
      try {
        const total = await this.counts.addClicks(entry.id, linkId, n);
        entry.n -= n;
        if (entry.n === 0 || total === null) this.unflushed.delete(linkId);
        if (total !== null) this.raiseFloor(linkId, total);
      } catch {
        this.observer.flushFailed(); // kept; the next tick tries again
      }
    }
  }

  private raiseFloor(linkId: string, count: number): void {
    const known = this.floors.get(linkId);
    if (known === undefined || count > known) this.floors.set(linkId, count);
  }
}
