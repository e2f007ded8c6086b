import { randomUUID } from 'crypto';
import { BulkheadRejectedError, bulkhead, BulkheadPolicy, circuitBreaker, CircuitBreakerPolicy, CircuitState, ConsecutiveBreaker, handleAll } from 'cockatiel';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { isPlausibleCode } from '../alias';
import { ShortUrlIdentifier } from '../link';
import { CachedLink, LinkCache, linkCacheKey, toCachedLink } from '../link-cache';
import { ShardedLinkRepository } from '../sharded-link-repository';
import { bloomItem, BloomFilter } from './bloom-filter';
import { cappedTtlMs, CachePolicy } from './cache-policy';
import { HotKeyDetector } from './hot-key-detector';
import { L1Cache } from './l1-cache';
import { SingleFlight } from './single-flight';
import { CacheStore } from '../ports';

export type LookupSource = 'l1' | 'l1_negative' | 'redis' | 'redis_null' | 'bloom_reject' | 'db' | 'db_miss' | 'snapshot' | 'rejected';

export interface RedirectPipelineOptions {
  readonly l1Enabled: boolean;
  readonly sharedCacheEnabled: boolean;
  readonly bloomEnabled: boolean;
  readonly lockTtlMs: number;
  /** Longest a request waits for another instance's lookup before querying the shard itself. */
  readonly lockWaitMs: number;
  readonly lockPollMs: number;
  /** Concurrent shard queries per instance; beyond it a request gets 503 at once. */
  readonly dbConcurrency: number;
  /** Consecutive Redis failures that open the breaker, and how long it stays open. */
  readonly breakerFailures: number;
  readonly breakerHalfOpenAfterMs: number;
  readonly nullTtlMs: number;
}

export interface RedirectObserver {
  lookup(source: LookupSource): void;
  dbQuery(): void;
  lockWait(seconds: number): void;
  breakerState(state: 'closed' | 'open' | 'half_open'): void;
}

export interface Resolved {
  readonly link: CachedLink;
  readonly source: LookupSource;
}

/** Read-only view of what the snapshot store kept of hot links (loaded at start). */
export interface HotLinkSnapshot {
  get(key: string): CachedLink | undefined;
}

const noop: RedirectObserver = { lookup: () => undefined, dbQuery: () => undefined, lockWait: () => undefined, breakerState: () => undefined };

class RedisUnavailable extends Error {}

/**
 * The redirect read path (docs/design.md, "Redirect read path"):
 * L1 → Redis (value or null sentinel) → Bloom "no" → single flight → distributed lock with double
 * check → shard → write back (policy TTL) or null sentinel. Redis failures open a breaker and
 * send lookups to the shard through a bulkhead; with the shard down too, hot links are answered
 * from the snapshot.
 */
export class RedirectPipeline {
  private readonly flights = new SingleFlight<Resolved | null>();
  private readonly breaker: CircuitBreakerPolicy;
  private readonly dbLimiter: BulkheadPolicy;
  private readonly shardLimiters = new Map<string, BulkheadPolicy>();
  private readonly linkCache: LinkCache;

  constructor(
    private readonly cacheStore: CacheStore,
    private readonly links: ShardedLinkRepository,
    private readonly l1: L1Cache,
    private readonly hot: HotKeyDetector,
    private readonly policy: CachePolicy,
    private readonly bloom: BloomFilter | null,
    private readonly snapshot: HotLinkSnapshot,
    private readonly options: RedirectPipelineOptions,
    private readonly observer: RedirectObserver = noop,
    private readonly clock: Clock = systemClock,
  ) {
    this.breaker = circuitBreaker(handleAll, { halfOpenAfter: options.breakerHalfOpenAfterMs, breaker: new ConsecutiveBreaker(options.breakerFailures) });
    this.breaker.onStateChange((s) => observer.breakerState(s === CircuitState.Open ? 'open' : s === CircuitState.HalfOpen ? 'half_open' : 'closed'));
    this.dbLimiter = bulkhead(options.dbConcurrency, 0);
    this.linkCache = new LinkCache(cacheStore);
  }

  get breakerState(): 'closed' | 'open' | 'half_open' {
    const s = this.breaker.state;
    return s === CircuitState.Closed ? 'closed' : s === CircuitState.HalfOpen ? 'half_open' : 'open';
  }

  /**
   * The L1 answer without a promise hop, or undefined when the lookup needs the slower levels
   * (the hot route answers L1 hits synchronously). Throws like resolve() for L1 negatives.
   */
  resolveLocal(id: ShortUrlIdentifier): Resolved | undefined {
    if (!this.options.l1Enabled) return undefined;
    if (!isPlausibleCode(id.code)) throw this.notFound(id, 'rejected');
    const key = linkCacheKey(id);
    const entry = this.l1.get(key, this.clock.now());
    if (!entry) return undefined;
    if ('link' in entry) return this.served(key, entry.link, 'l1');
    throw this.notFound(id, 'l1_negative');
  }

  /**
   * A link changed (docs/design.md, "Edits reach every instance"): its L1 entry goes, pinned or not,
   * no value older than `version` may enter L1 again, and requests from now on do not join a lookup
   * that began before the change.
   */
  applyChange(change: ShortUrlIdentifier & { readonly version: number }): void {
    const key = linkCacheKey(change);
    this.l1.invalidate(key, change.version);
    this.flights.forget(key);
  }

  /** The change channel was interrupted: any link may have changed, so L1 keeps no link. */
  dropLocalLinks(): void {
    this.l1.clearPositives();
    this.flights.forgetAll();
  }

  async resolve(id: ShortUrlIdentifier): Promise<Resolved> {
    const local = this.resolveLocal(id);
    if (local) return local;
    // resolveLocal already rejected implausible codes when L1 is on.
    if (!this.options.l1Enabled && !isPlausibleCode(id.code)) throw this.notFound(id, 'rejected');
    const key = linkCacheKey(id);
    // What L1 may store when this lookup ends: nothing, if the channel was interrupted meanwhile.
    const epoch = this.l1.epoch;

    if (this.options.sharedCacheEnabled) {
      let cached: Awaited<ReturnType<LinkCache['get']>> | null = null;
      try {
        cached = await this.redis(() => this.linkCache.get(id));
      } catch {
        cached = null; // Redis down or breaker open: degrade to the shard below
      }
      if (cached?.kind === 'hit') {
        this.remember(key, cached.link, epoch);
        return this.served(key, cached.link, 'redis', epoch);
      }
      if (cached?.kind === 'null') {
        if (this.options.l1Enabled) this.l1.setNegative(key);
        throw this.notFound(id, 'redis_null');
      }
      if (cached?.kind === 'miss') {
        if (this.bloom && this.options.bloomEnabled) {
          const answer = await this.redis(() => this.bloom!.check(bloomItem(id.domain, id.code))).catch(() => 'unknown' as const);
          if (answer === 'no') {
            if (this.options.l1Enabled) this.l1.setNegative(key);
            throw this.notFound(id, 'bloom_reject');
          }
        }
        const resolved = await this.flights.run(key, () => this.loadWithLock(id, key, epoch));
        if (!resolved) throw this.notFound(id, 'db_miss');
        return this.served(key, resolved.link, resolved.source, epoch);
      }
    }

    // Redis disabled or unavailable.
    const resolved = await this.flights.run(key, () => this.loadFromShard(id, key, false, epoch));
    if (!resolved) throw this.notFound(id, 'db_miss');
    return this.served(key, resolved.link, resolved.source, epoch);
  }

  /** Seed 001: only the lock holder queries the shard; the others re-check Redis while waiting. */
  private async loadWithLock(id: ShortUrlIdentifier, key: string, epoch: number): Promise<Resolved | null> {
    const lockKey = `shortlink:lock:${id.domain}:${id.code}`;
    const token = randomUUID();
    const started = this.clock.now();
    const deadline = started + this.options.lockWaitMs;
    try {
      for (;;) {
        const acquired = await this.redis(() => this.cacheStore.setIfAbsent(lockKey, token, this.options.lockTtlMs));
        if (acquired) {
          this.observer.lockWait((this.clock.now() - started) / 1000);
          try {
            // Double check: the previous holder may have filled the cache just before we got here.
            const again = await this.redis(() => this.linkCache.get(id));
            if (again.kind === 'hit') return { link: again.link, source: 'redis' };
            if (again.kind === 'null') return null;
            return await this.loadFromShard(id, key, true, epoch);
          } finally {
            await this.redis(() => this.cacheStore.deleteIfEquals(lockKey, token)).catch(() => undefined);
          }
        }
        await new Promise((r) => setTimeout(r, this.options.lockPollMs));
        const seen = await this.redis(() => this.linkCache.get(id));
        if (seen.kind === 'hit') {
          this.observer.lockWait((this.clock.now() - started) / 1000);
          return { link: seen.link, source: 'redis' };
        }
        if (seen.kind === 'null') return null;
        if (this.clock.now() >= deadline) break;
      }
    } catch (error) {
      if (error instanceof DomainError) throw error;
      // Redis failed mid-way: fall through to an unlocked shard read (bounded by the bulkhead).
    }
    this.observer.lockWait((this.clock.now() - started) / 1000);
    return this.loadFromShard(id, key, this.breakerState === 'closed', epoch);
  }

  private async loadFromShard(id: ShortUrlIdentifier, key: string, writeBack: boolean, epoch: number): Promise<Resolved | null> {
    let found: CachedLink | null;
    try {
      found = await this.dbLimiter.execute(() => this.onShard(id, async () => {
        this.observer.dbQuery();
        const link = await this.links.findByCode(id);
        return link ? toCachedLink(link) : null;
      }));
    } catch (error) {
      if (error instanceof BulkheadRejectedError) {
        throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'too many lookups are waiting on the database; retry shortly', { retryAfterSeconds: 1 });
      }
      const fromSnapshot = this.snapshot.get(key);
      if (fromSnapshot) return { link: fromSnapshot, source: 'snapshot' };
      throw error;
    }
    if (!found) {
      if (this.options.l1Enabled) this.l1.setNegative(key);
      if (writeBack) await this.redis(() => this.linkCache.putNull(id, this.options.nullTtlMs)).catch(() => undefined);
      return null;
    }
    this.remember(key, found, epoch);
    if (writeBack) await this.redis(() => this.linkCache.put(id, found!, this.writeBackTtlMs(key, found!))).catch(() => undefined);
    return { link: found, source: 'db' };
  }

  /**
   * Within the bulkhead, each shard may hold at most a quarter of DB_CONCURRENCY: a shard that
   * hangs (or the two of an instance that hangs) cannot take the permits the other shards' lookups
   * need (docs/design.md, "Failure containment").
   */
  private async onShard<T>(id: ShortUrlIdentifier, lookup: () => Promise<T>): Promise<T> {
    const shard = this.links.shardNameFor(id.code);
    let limiter = this.shardLimiters.get(shard);
    if (!limiter) {
      limiter = bulkhead(Math.max(1, Math.ceil(this.options.dbConcurrency / 4)), 0);
      this.shardLimiters.set(shard, limiter);
    }
    try {
      return await limiter.execute(lookup);
    } catch (error) {
      if (error instanceof BulkheadRejectedError) throw new DomainError(ErrorCode.SHARD_UNAVAILABLE, `too many lookups are waiting on shard ${shard}; retry shortly`, { shard, retryAfterSeconds: 1 });
      throw error;
    }
  }

  /** The policy's TTL (longer for hot keys), capped for a link that expires (cappedTtlMs). */
  private writeBackTtlMs(key: string, link: CachedLink): number | undefined {
    const now = this.clock.now();
    return cappedTtlMs(this.policy.ttlMsFor(this.hot.isHot(key, now)), link, now, this.options.nullTtlMs);
  }

  private remember(key: string, link: CachedLink, epoch: number): void {
    if (this.options.l1Enabled) this.l1.setPositive(key, link, this.hot.isHot(key, this.clock.now()), this.clock.now(), epoch);
  }

  /** Counts a successful read (only those: docs/design.md, "Redirect read path"), pins hot keys in L1, checks status and expiry. */
  private served(key: string, link: CachedLink, source: LookupSource, epoch?: number): Resolved {
    const now = this.clock.now();
    this.observer.lookup(source);
    if (link.status === 'disabled') throw new DomainError(ErrorCode.LINK_DISABLED, 'link is disabled', { source });
    if (link.expiresAt !== null && link.expiresAt <= now) throw new DomainError(ErrorCode.LINK_EXPIRED, 'link has expired', { source });
    const reads = this.hot.record(key, now);
    if (this.options.l1Enabled && reads >= this.hot.options.threshold) this.l1.pin(key, link, now, epoch);
    return { link, source };
  }

  /** Hot links with their cached values, hottest first (for /internal/hot-links and the snapshot). */
  hotLinks(limit = 1000): Array<{ key: string; reads: number; link: CachedLink | null }> {
    const now = this.clock.now();
    return this.hot.hotKeys(now).slice(0, limit).map(({ key, reads }) => {
      const entry = this.l1.get(key, now);
      return { key, reads, link: entry && 'link' in entry ? entry.link : null };
    });
  }

  private redis<T>(op: () => Promise<T>): Promise<T> {
    return this.breaker.execute(op).catch((error) => {
      throw error instanceof RedisUnavailable ? error : new RedisUnavailable((error as Error)?.message);
    });
  }

  private notFound(id: ShortUrlIdentifier, source: LookupSource): DomainError {
    this.observer.lookup(source);
    return unknownLink(id, source);
  }
}

/** LINK_NOT_FOUND as a visitor sees it; `source` (where the lookup ended) never leaves the process. */
export function unknownLink(id: ShortUrlIdentifier, source?: LookupSource): DomainError {
  const details = { shortCode: id.code, domain: id.domain, ...(source ? { source } : {}) };
  return new DomainError(ErrorCode.LINK_NOT_FOUND, `no link ${id.code} on ${id.domain}`, details);
}
