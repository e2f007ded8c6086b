import type { LRUCache } from 'lru-cache';
import { boundedLru, Clock, systemClock } from '@shortlink/core';

/**
 * The shared side of maxClicks (docs/design.md, "Max clicks"): per link, the clicks used and the
 * leases the instances hold. An instance takes grants for the requests waiting now (used at once)
 * and a reserve it gives from later without asking (its lease); it reports what it gave on its next
 * call. The store acts on one call at a time (a Lua script on Redis, `settleClickQuota` in-process):
 * `used + every reserve` never passes the limit.
 */

/** One instance's call on a link's counter: report, take, top up or give back, in one atomic step. */
export interface ClickLeaseCall {
  /** The instance (one id per process). */
  readonly holder: string;
  /** The link's maxClicks as this instance knows it. */
  readonly limit: number;
  /** Grants for requests waiting now: used at once, never more than the limit leaves. */
  readonly use: number;
  /**
   * Everything this holder gave from its reserves of this link so far (a total that only grows):
   * the store takes the part it has not seen yet as used, so a call sent twice counts once.
   */
  readonly given: number;
  /** The reserve the holder wants after this call; 0 gives back what it holds. */
  readonly reserve: number;
  /** The most the holder gives from its reserve before its next call is answered. */
  readonly cap: number;
  /** Whether the holder believes it holds a reserve (so that a reserve the store no longer has is told as lost). */
  readonly holding: boolean;
  /** A total known to be reached (the shard's count): `used + every reserve` is raised to it first. */
  readonly floor: number;
  /** Where a missing counter starts (the shard's count, read just now); null: answer null and let the caller read it. */
  readonly seed: number | null;
  /** How long the reserve lives without another call from its holder. */
  readonly leaseMs: number;
}

export interface ClickLeaseAnswer {
  /** Of `use`, how many were granted. */
  readonly granted: number;
  /** The holder's reserve after the call. */
  readonly reserve: number;
  /** Clicks used: granted at once, reported given, or counted as given when a silent holder's lease ended. */
  readonly used: number;
  /** `used` and every holder's reserve: what the limit is measured against. */
  readonly taken: number;
  /** The reserves of the other holders (they come back when unused, or at the end of their leases). */
  readonly heldByOthers: number;
  /** The holder believed it held a reserve the store no longer has (its lease ended, or the counter was lost). */
  readonly lost: boolean;
}

/** One holder's lease as the store keeps it. */
export interface ClickLease {
  readonly reserve: number;
  readonly cap: number;
  /** In the store's clock (ms). */
  readonly expiresAt: number;
  /** The holder's `given` total last seen. */
  readonly given: number;
}

/** A link's counter as the store keeps it. */
export interface ClickQuotaRecord {
  readonly used: number;
  readonly leases: ReadonlyMap<string, ClickLease>;
}

/**
 * Ends the leases whose holders went silent for their time: what such a holder may have given since
 * its last call (its cap) counts as used, since nobody can know it, and the rest of its reserve comes
 * back. Never a click given twice; a crash can cost a link at most its holder's cap.
 */
function reclaim(used: number, leases: Map<string, ClickLease>, now: number): number {
  for (const [holder, lease] of leases) {
    if (lease.expiresAt > now) continue;
    used += Math.min(lease.reserve, lease.cap);
    leases.delete(holder);
  }
  return used;
}

/** Clicks used and taken now (the expired leases ended), for a look without a call. */
export function peekClickQuota(record: ClickQuotaRecord, now: number): { used: number; taken: number } {
  const leases = new Map(record.leases);
  const used = reclaim(record.used, leases, now);
  let taken = used;
  for (const lease of leases.values()) taken += lease.reserve;
  return { used, taken };
}

/**
 * One call on a link's counter (the arithmetic the Redis script does in Lua; the contract suite holds
 * both to it). null: the counter is missing and the call brought no seed.
 *
 * Reserves are granted only below half the limit, each at most (room below half) / (2 × holders), and
 * a holder's reserve above half (the limit was lowered, or its requests took clicks past half since)
 * is cut back; so a lease shrinks to one as the half nears and every click past it is taken for a waiting request:
 * exact at the end, and a counter lost in the store can cost only clicks given below half (docs/design.md, "Max clicks").
 */
export function settleClickQuota(
  record: ClickQuotaRecord | null,
  call: ClickLeaseCall,
  now: number,
): { record: ClickQuotaRecord; answer: ClickLeaseAnswer } | null {
  if (record === null && call.seed === null) return null;
  const leases = new Map(record?.leases ?? []);
  let used = reclaim(record?.used ?? call.seed!, leases, now);
  const own = leases.get(call.holder);
  leases.delete(call.holder);
  let reserve = 0;
  if (own) {
    const given = Math.min(Math.max(0, call.given - own.given), own.reserve);
    used += given;
    reserve = own.reserve - given;
  }
  let heldByOthers = 0;
  for (const lease of leases.values()) heldByOthers += lease.reserve;
  let taken = used + reserve + heldByOthers;
  if (call.floor > taken) {
    used += call.floor - taken;
    taken = call.floor;
  }
  // A reserve lives below half the limit only (the limit may have been lowered, or requests taken past half since).
  const half = Math.floor(call.limit / 2);
  if (reserve > 0 && taken > half) {
    const cut = Math.min(reserve, taken - half);
    reserve -= cut;
    taken -= cut;
  }
  const granted = Math.max(0, Math.min(call.use, call.limit - taken));
  used += granted;
  taken += granted;
  if (call.reserve < reserve) {
    taken -= reserve - call.reserve;
    reserve = call.reserve;
  } else if (call.reserve > reserve) {
    const room = half - taken;
    if (room > 0) {
      const add = Math.min(call.reserve - reserve, Math.ceil(room / (2 * (leases.size + 1))));
      reserve += add;
      taken += add;
    }
  }
  if (reserve > 0) leases.set(call.holder, { reserve, cap: call.cap, expiresAt: now + call.leaseMs, given: call.given });
  return {
    record: { used, leases },
    answer: { granted, reserve, used, taken, heldByOthers, lost: own === undefined && call.holding },
  };
}

/**
 * The counters of maxClicks, one per link (`short:click-quota:<link id>`): a Lua script on Redis
 * Cluster, or in-process on the embedded profile.
 */
export interface ClickLeaseStore {
  /** One call (see ClickLeaseCall); null when the counter is missing and `seed` is null. */
  settle(linkId: string, call: ClickLeaseCall): Promise<ClickLeaseAnswer | null>;
  /** Clicks used and taken (every reserve included) without changing anything; null when the counter is missing. */
  peek(linkId: string): Promise<{ used: number; taken: number } | null>;
}

/** ClickLeaseStore: Redis Cluster, or the in-process twin. */
export const CLICK_LEASE_STORE = Symbol('CLICK_LEASE_STORE');

/**
 * The counters in this process: the embedded profile's store (one process serves every request), and
 * the unit tests' twin of Redis. Bounded at `maxLinks` counters, the least recently used forgotten
 * first (as Redis' allkeys-lru would evict them); a forgotten counter starts again from the shard's count.
 */
export class LocalClickLeases implements ClickLeaseStore {
  private readonly records: LRUCache<string, ClickQuotaRecord>;

  constructor(
    private readonly clock: Clock = systemClock,
    maxLinks = 100_000,
  ) {
    this.records = boundedLru({ maxEntries: maxLinks });
  }

  async settle(linkId: string, call: ClickLeaseCall): Promise<ClickLeaseAnswer | null> {
    const settled = settleClickQuota(this.records.get(linkId) ?? null, call, this.clock.now());
    if (settled === null) return null;
    this.records.set(linkId, settled.record);
    return settled.answer;
  }

  async peek(linkId: string): Promise<{ used: number; taken: number } | null> {
    const record = this.records.get(linkId);
    return record === undefined ? null : peekClickQuota(record, this.clock.now());
  }

  /** Drops a counter, as an eviction or a failover that lost it would. */
  forget(linkId: string): void {
    this.records.delete(linkId);
  }
}
