import { CachedLink } from '@shortlink/links-domain';
import { MAX_TTL_MS, NULL_TTL_MS } from './link-cache';

export type CachePolicyName = 'lru' | 'ttl';

export interface TtlPolicyOptions {
  readonly baseSeconds: number;
  readonly jitterSeconds: number;
  readonly hotBaseSeconds: number;
  readonly hotJitterSeconds: number;
}

/** docs/design.md, "Where the numbers come from". */
export const DEFAULT_TTLS: TtlPolicyOptions = { baseSeconds: 1800, jitterSeconds: 300, hotBaseSeconds: 7200, hotJitterSeconds: 600 };

export interface CachePolicyOptions {
  /** The `ttl` policy's times (DEFAULT_TTLS). */
  readonly ttl?: TtlPolicyOptions;
  /** No entry lives longer (CACHE_MAX_TTL_SECONDS, docs/design.md, "Keys in the shared cache"). */
  readonly maxTtlMs?: number;
  readonly random?: () => number;
}

/**
 * How long a positive Redis entry lives. `lru`: Redis evicts with allkeys-lru, and every entry
 * expires after the maximum TTL less up to a tenth of it (entries written together do not expire
 * together). `ttl`: base + random jitter (no synchronized expiry), longer for keys the detector
 * marks hot at the time of the write, never beyond the maximum. The maximum is the last safety net
 * under an invalidation that was lost (docs/design.md, "Keys in the shared cache").
 */
export class CachePolicy {
  private readonly ttl: TtlPolicyOptions;
  readonly maxTtlMs: number;
  private readonly random: () => number;

  constructor(
    readonly name: CachePolicyName,
    options: CachePolicyOptions = {},
  ) {
    this.ttl = options.ttl ?? DEFAULT_TTLS;
    this.maxTtlMs = options.maxTtlMs ?? MAX_TTL_MS;
    this.random = options.random ?? Math.random;
  }

  /** Milliseconds, at most `maxTtlMs`. */
  ttlMsFor(hot: boolean): number {
    if (this.name === 'lru') return this.maxTtlMs - Math.floor(this.random() * (this.maxTtlMs / 10));
    const base = hot ? this.ttl.hotBaseSeconds : this.ttl.baseSeconds;
    const jitter = hot ? this.ttl.hotJitterSeconds : this.ttl.jitterSeconds;
    return Math.min((base + Math.floor(this.random() * jitter)) * 1000, this.maxTtlMs);
  }
}

/**
 * The policy's TTL, capped for a link that expires: it stays cached until its expiry plus the
 * null-value TTL (so the 410s right after expiry are still answered from the cache), then goes.
 */
export function cappedTtlMs(policyTtlMs: number, link: Pick<CachedLink, 'expiresAt'>, now: number, nullTtlMs = NULL_TTL_MS): number {
  if (link.expiresAt === null) return policyTtlMs;
  return Math.min(policyTtlMs, Math.max(link.expiresAt - now, 0) + nullTtlMs);
}

/** The TTL of a value the generation app writes through after an edit (not hot: it was just changed). */
export const writeThroughTtlMs = (policy: CachePolicy, link: Pick<CachedLink, 'expiresAt'>, now: number): number =>
  cappedTtlMs(policy.ttlMsFor(false), link, now);
