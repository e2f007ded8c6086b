import { CachedLink } from '@shortlink/links-domain';
import { NULL_TTL_MS } from './link-cache';

export type CachePolicyName = 'lru' | 'ttl';

export interface TtlPolicyOptions {
  readonly baseSeconds: number;
  readonly jitterSeconds: number;
  readonly hotBaseSeconds: number;
  readonly hotJitterSeconds: number;
}

/** docs/design.md, "Where the numbers come from". */
export const DEFAULT_TTLS: TtlPolicyOptions = { baseSeconds: 1800, jitterSeconds: 300, hotBaseSeconds: 7200, hotJitterSeconds: 600 };

/**
 * How long a positive Redis entry lives. `lru`: no TTL, Redis evicts with allkeys-lru
 * and hot keys never expire. `ttl`: base + random jitter (no synchronized expiry),
 * longer for keys the detector marks hot at the time of the write.
 */
export class CachePolicy {
  constructor(
    readonly name: CachePolicyName,
    private readonly ttl: TtlPolicyOptions = DEFAULT_TTLS,
    private readonly random: () => number = Math.random,
  ) {}

  /** Milliseconds, or undefined for no expiry. */
  ttlMsFor(hot: boolean): number | undefined {
    if (this.name === 'lru') return undefined;
    const base = hot ? this.ttl.hotBaseSeconds : this.ttl.baseSeconds;
    const jitter = hot ? this.ttl.hotJitterSeconds : this.ttl.jitterSeconds;
    return (base + Math.floor(this.random() * jitter)) * 1000;
  }
}

/**
 * The policy's TTL, capped for a link that expires: it stays cached until its expiry plus the
 * null-value TTL (so the 410s right after expiry are still answered from the cache), then goes,
 * instead of occupying Redis forever under the lru policy.
 */
export function cappedTtlMs(policyTtlMs: number | undefined, link: Pick<CachedLink, 'expiresAt'>, now: number, nullTtlMs = NULL_TTL_MS): number | undefined {
  if (link.expiresAt === null) return policyTtlMs;
  const untilGone = Math.max(link.expiresAt - now, 0) + nullTtlMs;
  return policyTtlMs === undefined ? untilGone : Math.min(policyTtlMs, untilGone);
}

/** The TTL of a value the generation app writes through after an edit (not hot: it was just changed). */
export const writeThroughTtlMs = (policy: CachePolicy, link: Pick<CachedLink, 'expiresAt'>, now: number): number | undefined =>
  cappedTtlMs(policy.ttlMsFor(false), link, now);
