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
