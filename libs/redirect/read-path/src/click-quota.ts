import { randomUUID } from 'crypto';
import type { LRUCache } from 'lru-cache';
import { boundedLru } from '@shortlink/core';
import { CachedLink, ShortUrlIdentifier } from '@shortlink/links-domain';
import { ExhaustionView } from '@shortlink/redirect-rules';
import { ClickLeaseAnswer, ClickLeaseCall, ClickLeaseStore } from './click-leases';

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
  /** How often this instance reports what it gave from its leases, and tops them up or gives them back (100 ms). */
  readonly syncIntervalMs?: number;
  /** A lease whose holder made no call for this long ends (its cap counted as given, the rest back): 2 s. */
  readonly leaseMs?: number;
  /** Links remembered as exhausted, and persisted counts remembered, per instance. */
  readonly maxLinks?: number;
  /** This instance in the counters' leases (a new id per process). */
  readonly holder?: string;
}

export interface ClickQuotaObserver {
  reserved(outcome: ReservationOutcome, n: number): void;
  /** A counter was missing in the shared cache and was started again from the shard's count. */
  seeded(): void;
  flushFailed(): void;
}

export type ReservationOutcome = 'granted' | 'exhausted' | 'unavailable';

type Waiter = (outcome: ReservationOutcome) => void;

/** A request that found the clicks left held in other instances' reserves: asked again at the next sync, until `until`. */
interface Deferred {
  readonly done: Waiter;
  readonly until: number;
}

/** This instance's side of one link's counter. */
interface Lease {
  readonly linkId: string;
  readonly id: ShortUrlIdentifier;
  limit: number;
  /** Grants this instance may still give without asking the store. */
  reserve: number;
  /** The most it gives from the reserve beyond `acked` until a call is answered. */
  cap: number;
  /** Everything given from this link's reserves so far (a total that only grows, sent as `given`). */
  given: number;
  /** `given` as of the last answered call: the store knows at least that much. */
  acked: number;
  /** The store holds a reserve of ours (as of the last answer). */
  holding: boolean;
  /** Grants in the current sync period, and the smoothed grants per period. */
  demand: number;
  rate: number;
  waiting: Waiter[];
  deferred: Deferred[];
  /** The call in flight, if any. */
  calling: Promise<void> | null;
  scheduled: boolean;
  /** The store granted no reserve because the link is past half its limit: only waiting requests call. */
  pastHalf: boolean;
}

const quiet: ClickQuotaObserver = { reserved: () => undefined, seeded: () => undefined, flushFailed: () => undefined };

/**
 * maxClicks, exact across instances (docs/design.md, "Max clicks"). Each instance holds a **lease**
 * per busy link: a reserve of grants taken from the shared counter (ClickLeaseStore, a Lua script
 * on Redis, the in-process twin on the embedded profile) that it gives locally, without a round
 * trip. Every `syncIntervalMs` it reports what it gave, and tops the reserve up to about two
 * periods of its demand, or gives it back when the link went quiet. The store grants reserves only
 * below half the limit, each at most (room below half) / (2 × holders), so leases shrink to one as
 * the half nears; past it, the requests of one event-loop turn take their clicks in one call, as
 * they all did before leases. The store never lets `used + every reserve` pass the limit, so no
 * click is granted twice. An instance gives at most `cap` from its reserve before its next call is
 * answered; a lease whose holder went silent for `leaseMs` ends with its cap counted as given (it
 * may have been) and the rest back: a crash costs a link at most that cap, never an extra click.
 *
 * The granted clicks are also added to the shard's `click_count` every `flushIntervalMs`, and,
 * once more than half of a link's limit is taken, before its redirects are answered. A counter the
 * cache lost (eviction, a failover, a restart of the in-process cache) is started again from that
 * count; a count a failover set back is raised to the last total this instance flushed.
 */
export class ClickQuota implements ExhaustionView {
  private readonly leases = new Map<string, Lease>();
  private due: Lease[] = [];
  private scheduled = false;
  private readonly holder: string;
  private readonly syncIntervalMs: number;
  private readonly leaseMs: number;
  /** Link id -> the count seen when its limit was reached (a raised limit makes it live again). */
  private readonly exhausted: LRUCache<string, number>;
  /**
   * Link id -> the shard's count as last read or written here: an existing counter below it (set
   * back by a failover) is raised to it. Never a seed for a missing one: another instance may have
   * flushed more since.
   */
  private readonly floors: LRUCache<string, number>;
  private readonly unflushed = new Map<string, { id: ShortUrlIdentifier; n: number }>();
  /** Grants given from reserves since the observer was last told (counted here, off the request's path). */
  private givenUntold = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  private syncTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private queued: Promise<void> | null = null;
  private tail: Promise<void> = Promise.resolve();

  private readonly store: ClickLeaseStore;
  private readonly counts: ClickCounts;
  private readonly observer: ClickQuotaObserver;

  constructor(
    parts: { readonly store: ClickLeaseStore; readonly counts: ClickCounts; readonly observer?: ClickQuotaObserver },
    private readonly options: ClickQuotaOptions,
  ) {
    ({ store: this.store, counts: this.counts, observer: this.observer = quiet } = parts);
    this.holder = options.holder ?? randomUUID();
    this.syncIntervalMs = options.syncIntervalMs ?? 100;
    this.leaseMs = options.leaseMs ?? 2000;
    this.exhausted = boundedLru({ maxEntries: options.maxLinks ?? 100_000 });
    this.floors = boundedLru({ maxEntries: options.maxLinks ?? 100_000 });
  }

  start(): void {
    if (this.flushTimer) return;
    this.flushTimer = setInterval(() => void this.flush(), this.options.flushIntervalMs);
    this.flushTimer.unref();
    this.syncTimer = setInterval(() => void this.sync(), this.syncIntervalMs);
    this.syncTimer.unref();
  }

  /** Stops the timers, gives every unused reserve back and flushes what is left (at shutdown, before the shards close). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.flushTimer) clearInterval(this.flushTimer);
    if (this.syncTimer) clearInterval(this.syncTimer);
    this.flushTimer = this.syncTimer = null;
    const leases = [...this.leases.values()];
    await Promise.all(leases.map((l) => l.calling));
    await Promise.all(leases.filter((l) => l.holding || l.given > l.acked).map((l) => this.call(l)));
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
    const lease = this.leases.get(link.id);
    if (lease !== undefined && lease.limit === limit && lease.reserve > 0) return false;
    const seen = await this.store.peek(link.id);
    const used = seen !== null ? seen.used : ((await this.counts.clickCount(id, link.id)) ?? 0);
    if (used < limit) return false;
    this.exhausted.set(link.id, used);
    return true;
  }

  /**
   * Takes one click of `link` (which has maxClicks) and calls `done` with the outcome: `granted`
   * (redirect), `exhausted` (410) or `unavailable` (the shared counter cannot be reached and the
   * lease has nothing left to give: 503, since granting without it could pass the limit by any
   * amount). From the lease, `done` is called at once.
   */
  reserve(link: CachedLink, id: ShortUrlIdentifier, done: (outcome: ReservationOutcome) => void): void {
    const limit = link.rules!.maxClicks!;
    let lease = this.leases.get(link.id);
    if (lease === undefined) {
      lease = newLease(link.id, id, limit);
      this.leases.set(link.id, lease);
    } else if (lease.limit !== limit) {
      // A PATCH of maxClicks: nothing more is given from the old reserve; the next call settles it under the new limit.
      lease.limit = limit;
      lease.reserve = 0;
      lease.pastHalf = false;
    }
    if (this.give(lease)) {
      this.givenUntold++;
      done('granted');
      return;
    }
    lease.waiting.push(done);
    this.schedule(lease);
  }

  /** Clicks granted here and not yet on the shard (what a counter loss could cost right now). */
  get unflushedClicks(): number {
    let n = 0;
    for (const e of this.unflushed.values()) n += e.n;
    return n;
  }

  /** Grants held here in reserve (taken from the shared counters, not yet given). */
  get reservedClicks(): number {
    let n = 0;
    for (const lease of this.leases.values()) n += lease.reserve;
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

  /**
   * One sync period (every `syncIntervalMs`): each lease that gave something, has requests deferred
   * or no longer fits its demand calls the store; a link quiet for a whole period gives its reserve
   * back, and is forgotten once nothing of it is left.
   */
  async sync(): Promise<void> {
    if (this.givenUntold > 0) {
      this.observer.reserved('granted', this.givenUntold);
      this.givenUntold = 0;
    }
    const calls: Array<Promise<void>> = [];
    for (const lease of this.leases.values()) {
      lease.rate = Math.max(lease.demand, Math.floor(lease.rate / 2));
      lease.demand = 0;
      if (lease.calling || lease.scheduled) continue;
      const target = this.targetOf(lease, 0);
      const off = lease.reserve > 2 * target || lease.reserve * 2 < target;
      const wantsReserve = !lease.holding && !lease.pastHalf && target > 0;
      if (lease.given > lease.acked || lease.deferred.length > 0 || lease.waiting.length > 0 || (lease.holding && off) || wantsReserve) {
        calls.push(this.call(lease));
      } else if (!lease.holding && lease.rate === 0) {
        this.leases.delete(lease.linkId);
      }
    }
    await Promise.all(calls);
  }

  /** Gives one grant from the lease's reserve when it has one and the cap allows. */
  private give(lease: Lease): boolean {
    if (this.closed || lease.reserve <= 0 || lease.given - lease.acked >= lease.cap) return false;
    lease.reserve--;
    lease.given++;
    lease.demand++;
    this.count(lease, 1);
    return true;
  }

  /** The reserve to hold: about two sync periods of the link's demand (none once it went quiet, or at shutdown). */
  private targetOf(lease: Lease, asking: number): number {
    if (this.closed) return 0;
    return 2 * Math.max(lease.rate, lease.demand, asking);
  }

  private schedule(lease: Lease): void {
    if (lease.calling || lease.scheduled) return;
    lease.scheduled = true;
    this.due.push(lease);
    if (!this.scheduled) {
      this.scheduled = true;
      // After the poll phase: every request read in this turn is in its lease's queue by then.
      setImmediate(this.drain);
    }
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    const due = this.due;
    this.due = [];
    for (const lease of due) {
      lease.scheduled = false;
      void this.call(lease);
    }
  };

  /** One call on the link's counter: what waits is taken at once, what was given is reported, the reserve topped up or given back. */
  private call(lease: Lease): Promise<void> {
    if (lease.calling) return lease.calling;
    const calling = this.callOnce(lease).finally(() => {
      lease.calling = null;
      if (lease.waiting.length > 0) this.schedule(lease);
    });
    lease.calling = calling;
    return calling;
  }

  private async callOnce(lease: Lease): Promise<void> {
    const now = Date.now();
    const asking: Deferred[] = [...lease.deferred, ...lease.waiting.map((done) => ({ done, until: now + this.leaseMs + this.syncIntervalMs }))];
    lease.deferred = [];
    lease.waiting = [];
    const given = lease.given;
    const reserve = this.targetOf(lease, asking.length);
    const cap = Math.max(1, Math.ceil(reserve / 2));
    // Until this call is answered the store holds either the old lease or the new one: give within both.
    lease.cap = Math.min(lease.cap, cap);
    lease.reserve = Math.min(lease.reserve, reserve);
    const base: Omit<ClickLeaseCall, 'seed'> = {
      holder: this.holder,
      limit: lease.limit,
      use: asking.length,
      given,
      reserve,
      cap,
      holding: lease.holding,
      floor: this.floors.get(lease.linkId) ?? 0,
      leaseMs: this.leaseMs,
    };
    let answer: ClickLeaseAnswer | null = null;
    try {
      answer = await this.store.settle(lease.linkId, { ...base, seed: null });
      if (answer === null) {
        // The counter is missing: first use, or lost. Start it again from the shard's count, read
        // now: a floor known here may be older than another instance's last flush.
        const persisted = (await this.counts.clickCount(lease.id, lease.linkId)) ?? 0;
        this.observer.seeded();
        this.raiseFloor(lease.linkId, persisted);
        answer = await this.store.settle(lease.linkId, { ...base, seed: persisted });
      }
    } catch {
      answer = null;
    }
    if (answer === null) {
      // Unreachable: what the lease may still give (within its cap) is given, the rest cannot be counted.
      this.answerAll(lease, asking, 0, () => (this.give(lease) ? 'granted' : 'unavailable'));
    } else {
      lease.acked = given;
      lease.cap = cap;
      // What was given while the call was out comes off the reserve the store answered with (it counted `given` as of the call).
      lease.reserve = Math.max(0, answer.reserve - (lease.given - given));
      lease.holding = answer.reserve > 0;
      lease.pastHalf = answer.reserve === 0 && answer.taken * 2 >= lease.limit;
      const granted = Math.min(answer.granted, asking.length);
      if (granted > 0) this.count(lease, granted);
      lease.demand += granted;
      if (answer.used >= lease.limit) this.exhausted.set(lease.linkId, answer.used);
      // Past half the limit the grant reaches the shard before the redirects are answered (the final
      // count included, so a later loss cannot revive an exhausted link): a lost counter then costs at
      // most the clicks granted below half the limit and not yet flushed. A failed flush keeps them for the next tick.
      if (granted > 0 && answer.taken * 2 > lease.limit) await this.flush();
      const othersHold = answer.heldByOthers > 0;
      this.answerAll(lease, asking, granted, (d) => {
        if (this.give(lease)) return 'granted';
        // The clicks left are in other instances' reserves: they come back when unused, or at the end of their leases.
        if (othersHold && Date.now() < d.until && !this.closed) return null;
        return 'exhausted';
      });
    }
  }

  /** The first `granted` of `asking` redirect; each other gets `rest` (null: deferred to the next sync). */
  private answerAll(lease: Lease, asking: readonly Deferred[], granted: number, rest: (d: Deferred) => ReservationOutcome | null): void {
    let grantedHere = granted;
    let exhausted = 0;
    let unavailable = 0;
    const outcomes: ReservationOutcome[] = [];
    for (let i = 0; i < asking.length; i++) {
      const outcome = i < granted ? 'granted' : rest(asking[i]);
      if (outcome === null) {
        lease.deferred.push(asking[i]);
        continue;
      }
      if (i >= granted && outcome === 'granted') grantedHere++;
      if (outcome === 'exhausted') exhausted++;
      if (outcome === 'unavailable') unavailable++;
      outcomes[i] = outcome;
    }
    if (grantedHere > 0) this.observer.reserved('granted', grantedHere);
    if (exhausted > 0) this.observer.reserved('exhausted', exhausted);
    if (unavailable > 0) this.observer.reserved('unavailable', unavailable);
    for (let i = 0; i < asking.length; i++) if (outcomes[i] !== undefined) asking[i].done(outcomes[i]);
  }

  /** Clicks granted for the link: the shard's count gets them at the next flush. */
  private count(lease: Lease, n: number): void {
    const entry = this.unflushed.get(lease.linkId);
    if (entry) entry.n += n;
    else this.unflushed.set(lease.linkId, { id: lease.id, n });
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

function newLease(linkId: string, id: ShortUrlIdentifier, limit: number): Lease {
  return {
    linkId,
    id,
    limit,
    reserve: 0,
    cap: 0,
    given: 0,
    acked: 0,
    holding: false,
    demand: 0,
    rate: 0,
    waiting: [],
    deferred: [],
    calling: null,
    scheduled: false,
    pastHalf: false,
  };
}
