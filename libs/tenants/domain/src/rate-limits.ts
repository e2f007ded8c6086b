import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { Plan } from './tenant';

/**
 * The window is cut into 60 buckets (1 s buckets for a minute's window): a request counts while
 * its bucket is inside the last `windowMs`. Exact to one bucket and bounded in memory (61 counters
 * per key), where a weighted two-window counter lets bursts through at window edges and a log of
 * timestamps costs one entry per request (docs/design.md, "Tenants, keys and plans").
 */
export const BUCKETS_PER_WINDOW = 60;

export interface WindowHit {
  readonly allowed: boolean;
  /** What the window holds after this hit (refused hits are not counted). */
  readonly used: number;
  /** Refused: ms until `cost` more fit. Allowed: ms until the oldest counted bucket leaves the window. */
  readonly waitMs: number;
}

/** Shared sliding-window counters (Redis on the real stack, in-process on the embedded profile). */
export interface RateWindowStore {
  /** Adds `cost` to `key`'s window unless that would pass `limit`. */
  hit(key: string, limit: number, windowMs: number, cost: number): Promise<WindowHit>;
}

export const RATE_WINDOW_STORE = Symbol('RATE_WINDOW_STORE');

/**
 * The decision on one set of bucket counts; the Redis script does the same arithmetic in Lua
 * (the contract suite holds both to it). `buckets` maps bucket index → count and is updated.
 */
export function slideWindow(buckets: Map<number, number>, now: number, limit: number, windowMs: number, cost: number): WindowHit {
  const bucketMs = Math.max(1, Math.floor(windowMs / BUCKETS_PER_WINDOW));
  const current = Math.floor(now / bucketMs);
  const oldest = current - BUCKETS_PER_WINDOW + 1;
  let used = 0;
  for (const [bucket, count] of buckets) {
    if (bucket < oldest) buckets.delete(bucket);
    else used += count;
  }
  const ordered = [...buckets.keys()].sort((a, b) => a - b);
  // A bucket b leaves the window when `current` passes b + BUCKETS_PER_WINDOW - 1.
  const leavesAt = (bucket: number) => (bucket + BUCKETS_PER_WINDOW) * bucketMs - now;
  if (used + cost > limit) {
    let freed = 0;
    for (const bucket of ordered) {
      freed += buckets.get(bucket)!;
      if (used - freed + cost <= limit) return { allowed: false, used, waitMs: leavesAt(bucket) };
    }
    return { allowed: false, used, waitMs: windowMs }; // cost alone is above the limit
  }
  buckets.set(current, (buckets.get(current) ?? 0) + cost);
  return { allowed: true, used: used + cost, waitMs: leavesAt(ordered[0] ?? current) };
}

/** Sliding windows in this process: the embedded profile's store, and every instance's fallback. */
export class LocalRateWindows implements RateWindowStore {
  private readonly windows = new Map<string, { buckets: Map<number, number>; lastMs: number }>();

  constructor(
    private readonly clock: Clock = systemClock,
    /** Keys tracked at most; the idlest are dropped first (a dropped key starts afresh). */
    private readonly maxKeys = 100_000,
  ) {}

  async hit(key: string, limit: number, windowMs: number, cost: number): Promise<WindowHit> {
    const now = this.clock.now();
    let window = this.windows.get(key);
    if (window)
      this.windows.delete(key); // re-inserted below: Map order is least recently used first
    else window = { buckets: new Map(), lastMs: now };
    window.lastMs = now;
    this.windows.set(key, window);
    if (this.windows.size > this.maxKeys) this.windows.delete(this.windows.keys().next().value!);
    return slideWindow(window.buckets, now, limit, windowMs, cost);
  }
}

export interface PlanLimits {
  /** Requests per minute per tenant: every key of the tenant counts in one window. */
  readonly requestsPerMinute: number;
  /** Batch rows per day (a sliding 24 h) per tenant. */
  readonly batchRowsPerDay: number;
  /** Invitations per hour (a sliding 60 min) per tenant: each one may mail an address outside it. */
  readonly invitationsPerHour: number;
  /** Leads and sales counted per sliding 30 days per tenant (docs/analytics.md, "Conversions"). */
  readonly conversionsPerMonth: number;
}

export type PlanTable = Readonly<Record<Plan, PlanLimits>>;

/** What a request was told: the RateLimit-* headers, and Retry-After when refused. */
export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the window has room again (refused) or fully renews (allowed); at least 1. */
  readonly resetSeconds: number;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const MONTH = 30 * DAY;

/**
 * Plans enforced per tenant across instances (docs/design.md, "Tenants, keys and plans"): a tenant's
 * keys share one window, so minting keys does not multiply the plan. When the shared store fails,
 * each instance counts in its own window until it answers again: a tenant may then get up to the
 * limit once per instance, which beats refusing every tenant or letting every request through.
 */
export class PlanRateLimiter {
  private readonly local: LocalRateWindows;
  private sharedDownSince: number | null = null;

  constructor(
    private readonly shared: RateWindowStore,
    private readonly plans: PlanTable,
    private readonly onFallback: (down: boolean, error?: unknown) => void = () => undefined,
    clock: Clock = systemClock,
  ) {
    this.local = new LocalRateWindows(clock);
  }

  limitsOf(plan: Plan): PlanLimits {
    return this.plans[plan];
  }

  /** One API request by any key of the tenant. */
  async request(tenantId: string, plan: Plan): Promise<RateDecision> {
    const limit = this.plans[plan].requestsPerMinute;
    return decide(limit, await this.hit(`rl:req:${tenantId}`, limit, MINUTE, 1));
  }

  /**
   * Up to `rows` batch rows for a tenant: returns how many fit today (0..rows) and takes them.
   * Asked once per chunk, so a batch stops at the quota within one chunk.
   */
  async batchRows(tenantId: string, plan: Plan, rows: number): Promise<{ granted: number; decision: RateDecision }> {
    const limit = this.plans[plan].batchRowsPerDay;
    const key = `rl:rows:${tenantId}`;
    let hit = await this.hit(key, limit, DAY, rows);
    let granted = rows;
    if (!hit.allowed) {
      granted = Math.max(0, limit - hit.used);
      hit = granted > 0 ? await this.hit(key, limit, DAY, granted) : hit;
      if (!hit.allowed) granted = 0;
    }
    return { granted, decision: decide(limit, hit) };
  }

  /**
   * One invitation by the tenant (a person or a key inviting a member), counted whether or not it
   * is then accepted; 429 INVITATION_LIMIT_REACHED with the wait beyond the plan's hourly number.
   */
  async invitation(tenantId: string, plan: Plan): Promise<void> {
    const limit = this.plans[plan].invitationsPerHour;
    const decision = decide(limit, await this.hit(`rl:inv:${tenantId}`, limit, HOUR, 1));
    if (!decision.allowed)
      throw new DomainError(ErrorCode.INVITATION_LIMIT_REACHED, `the ${plan} plan sends ${limit} invitations an hour per tenant; try again later`, {
        limit,
        retryAfterSeconds: decision.resetSeconds,
      });
  }

  /**
   * One lead or sale counted for the tenant (docs/analytics.md, "Conversions"): 429
   * CONVERSION_LIMIT_REACHED with the wait beyond the plan's number per sliding 30 days.
   */
  async conversion(tenantId: string, plan: Plan): Promise<void> {
    const limit = this.plans[plan].conversionsPerMonth;
    const decision = decide(limit, await this.hit(`rl:cnv:${tenantId}`, limit, MONTH, 1));
    if (!decision.allowed)
      throw new DomainError(ErrorCode.CONVERSION_LIMIT_REACHED, `the ${plan} plan counts ${limit} leads and sales per 30 days; try again later`, {
        limit,
        retryAfterSeconds: decision.resetSeconds,
      });
  }

  private async hit(key: string, limit: number, windowMs: number, cost: number): Promise<WindowHit> {
    try {
      const hit = await this.shared.hit(key, limit, windowMs, cost);
      if (this.sharedDownSince !== null) {
        this.sharedDownSince = null;
        this.onFallback(false);
      }
      return hit;
    } catch (error) {
      if (this.sharedDownSince === null) {
        this.sharedDownSince = Date.now();
        this.onFallback(true, error);
      }
      return this.local.hit(key, limit, windowMs, cost);
    }
  }
}

function decide(limit: number, hit: WindowHit): RateDecision {
  return { allowed: hit.allowed, limit, remaining: Math.max(0, limit - hit.used), resetSeconds: Math.max(1, Math.ceil(hit.waitMs / 1000)) };
}
