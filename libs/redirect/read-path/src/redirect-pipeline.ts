import { randomUUID } from 'crypto';
import { circuitBreaker, CircuitBreakerPolicy, CircuitState, ConsecutiveBreaker, handleAll } from 'cockatiel';
import { BulkheadFullError, Clock, DomainError, ErrorCode, systemClock, WaitingBulkhead } from '@shortlink/core';
import {
  CachedLink,
  isPlausibleCode,
  LinkRepository,
  LinkResolver,
  ResolvedLink,
  ShortUrlIdentifier,
  toCachedLink,
  unknownLink,
} from '@shortlink/links-domain';
import { CacheKeys } from './cache-keys';
import { LinkCache } from './link-cache';
import { bloomItem, BloomFilter } from './bloom-filter';
import { cappedTtlMs, CachePolicy } from './cache-policy';
import { HotKeyDetector } from './hot-key-detector';
import { L1Cache } from './l1-cache';
import { SingleFlight } from './single-flight';
import { CacheStore } from './ports';

export type LookupSource = 'l1' | 'l1_negative' | 'redis' | 'redis_null' | 'bloom_reject' | 'db' | 'db_miss' | 'snapshot' | 'rejected';

export interface RedirectPipelineOptions {
  readonly l1Enabled: boolean;
  readonly sharedCacheEnabled: boolean;
  readonly bloomEnabled: boolean;
  readonly lockTtlMs: number;
  /** Longest a request waits for another instance's lookup before querying the shard itself. */
  readonly lockWaitMs: number;
  readonly lockPollMs: number;
  /**
   * Shard queries per instance (each shard runs its share of them at once and queues the rest:
   * LinkRepository.findForRedirect); with dbQueue.max, the bound on lookups outstanding, beyond
   * which a request gets 503 at once.
   */
  readonly dbConcurrency: number;
  /** Lookups that may wait for a shard permit, and for how long (max 0: refuse beyond dbConcurrency at once). */
  readonly dbQueue: { readonly max: number; readonly waitMs: number };
  /** Consecutive Redis failures that open the Redis breaker, and how long it stays open. */
  readonly redisBreakerFailures: number;
  readonly redisBreakerHalfOpenAfterMs: number;
  readonly nullTtlMs: number;
}

export interface RedirectObserver {
  lookup(source: LookupSource): void;
  dbQuery(): void;
  lockWait(seconds: number): void;
  redisBreakerState(state: 'closed' | 'open' | 'half_open'): void;
}

/** A link found, and where the lookup ended. */
export interface Resolved extends ResolvedLink {
  readonly source: LookupSource;
}

/** Read-only view of what the snapshot store kept of hot links (loaded at start). */
export interface HotLinkSnapshot {
  get(key: string): CachedLink | undefined;
}

/** What the pipeline reads from and writes to. */
export interface RedirectPipelineParts {
  readonly cache: CacheStore;
  readonly links: LinkRepository;
  readonly l1: L1Cache;
  readonly hot: HotKeyDetector;
  readonly policy: CachePolicy;
  /** Null: no Bloom filter (BLOOM_ENABLED=false). */
  readonly bloom: BloomFilter | null;
  readonly snapshot: HotLinkSnapshot;
  readonly observer?: RedirectObserver;
  readonly clock?: Clock;
}

const noop: RedirectObserver = { lookup: () => undefined, dbQuery: () => undefined, lockWait: () => undefined, redisBreakerState: () => undefined };

class RedisUnavailable extends Error {}

/**
 * The redirect read path (docs/design.md, "Redirect read path"):
 * L1 → Redis (value or null sentinel) → Bloom "no" → single flight → distributed lock with double
 * check → shard → write back (policy TTL) or null sentinel. Redis failures open the Redis
 * breaker and send lookups to the shard through the instance's bulkhead of DB_CONCURRENCY (each
 * shard's share of it is the shard's guard, in the sharding lib, where a burst waits up to
 * DB_QUEUE_WAIT_MS for a permit); with the shard down too, hot
 * links are answered from the snapshot.
 */
export class RedirectPipeline implements LinkResolver {
  private readonly flights = new SingleFlight<Resolved | null>();
  private readonly redisBreaker: CircuitBreakerPolicy;
  private readonly dbLimiter: WaitingBulkhead;
  private readonly cacheStore: CacheStore;
  private readonly linkCache: LinkCache;
  private readonly links: LinkRepository;
  private readonly l1: L1Cache;
  private readonly hot: HotKeyDetector;
  private readonly policy: CachePolicy;
  private readonly bloom: BloomFilter | null;
  private readonly snapshot: HotLinkSnapshot;
  private readonly observer: RedirectObserver;
  private readonly countQuery = () => this.observer.dbQuery();
  private readonly clock: Clock;

  constructor(
    parts: RedirectPipelineParts,
    private readonly options: RedirectPipelineOptions,
  ) {
    ({ cache: this.cacheStore, links: this.links, l1: this.l1, hot: this.hot, policy: this.policy, bloom: this.bloom, snapshot: this.snapshot } = parts);
    this.observer = parts.observer ?? noop;
    this.clock = parts.clock ?? systemClock;
    const breaker = new ConsecutiveBreaker(options.redisBreakerFailures);
    this.redisBreaker = circuitBreaker(handleAll, { halfOpenAfter: options.redisBreakerHalfOpenAfterMs, breaker });
    this.redisBreaker.onStateChange(() => this.observer.redisBreakerState(this.redisBreakerState));
    // Waiting happens in the shard's queue, so that a hung shard's waiters hold nothing the other
    // shards need (docs/design.md, "Failure containment"); here only what is outstanding is bounded.
    this.dbLimiter = new WaitingBulkhead(options.dbConcurrency + options.dbQueue.max, 0, 0);
    this.linkCache = new LinkCache(this.cacheStore, this.policy.maxTtlMs);
  }

  get redisBreakerState(): 'closed' | 'open' | 'half_open' {
    const s = this.redisBreaker.state;
    return s === CircuitState.Closed ? 'closed' : s === CircuitState.HalfOpen ? 'half_open' : 'open';
  }

  /**
   * The L1 answer without a promise hop, or undefined when the lookup needs the slower levels
   * (the hot route answers L1 hits synchronously). Throws like resolve() for L1 negatives. A hit
   * returns L1's own entry: nothing is allocated for it.
   */
  resolveLocal(id: ShortUrlIdentifier): ResolvedLink | undefined {
    if (!this.options.l1Enabled) return undefined;
    if (!isPlausibleCode(id.code)) throw this.notFound(id, 'rejected');
    const key = CacheKeys.link(id);
    const entry = this.l1.get(key, this.clock.now());
    if (!entry) return undefined;
    if ('link' in entry) {
      this.serve(key, entry.link, 'l1');
      return entry;
    }
    throw this.notFound(id, 'l1_negative');
  }

  /**
   * A link changed (docs/design.md, "Edits reach every instance"): its L1 entry goes, pinned or not,
   * no value older than `version` may enter L1 again, and requests from now on do not join a lookup
   * that began before the change.
   */
  applyChange(change: ShortUrlIdentifier & { readonly version: number }): void {
    const key = CacheKeys.link(change);
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
    if (local) return { link: local.link, source: 'l1' };
    // resolveLocal already rejected implausible codes when L1 is on.
    if (!this.options.l1Enabled && !isPlausibleCode(id.code)) throw this.notFound(id, 'rejected');
    const key = CacheKeys.link(id);
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

  /** Only the lock holder queries the shard; the others re-check Redis while waiting (the stampede lock: docs/design.md, "Redirect read path"). */
  private async loadWithLock(id: ShortUrlIdentifier, key: string, epoch: number): Promise<Resolved | null> {
    const lockKey = CacheKeys.linkLock(id);
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
    return this.loadFromShard(id, key, this.redisBreakerState === 'closed', epoch);
  }

  private async loadFromShard(id: ShortUrlIdentifier, key: string, writeBack: boolean, epoch: number): Promise<Resolved | null> {
    let found: CachedLink | null;
    try {
      found = await this.dbLimiter.execute(async () => {
        // Counted when a shard is asked: a look-up the shard's share or breaker refused made no query.
        const link = await this.links.findForRedirect(id, this.countQuery);
        return link ? toCachedLink(link) : null;
      });
    } catch (error) {
      if (error instanceof BulkheadFullError) {
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

  /** The policy's TTL (longer for hot keys, never beyond CACHE_MAX_TTL_SECONDS), capped for a link that expires (cappedTtlMs). */
  private writeBackTtlMs(key: string, link: CachedLink): number {
    const now = this.clock.now();
    return cappedTtlMs(this.policy.ttlMsFor(this.hot.isHot(key, now)), link, now, this.options.nullTtlMs);
  }

  private remember(key: string, link: CachedLink, epoch: number): void {
    if (this.options.l1Enabled) this.l1.setPositive(key, link, this.hot.isHot(key, this.clock.now()), this.clock.now(), epoch);
  }

  private served(key: string, link: CachedLink, source: LookupSource, epoch?: number): Resolved {
    this.serve(key, link, source, epoch);
    return { link, source };
  }

  /** Counts a successful read (only those: docs/design.md, "Redirect read path"), pins hot keys in L1, checks status and expiry. */
  private serve(key: string, link: CachedLink, source: LookupSource, epoch?: number): void {
    const now = this.clock.now();
    this.observer.lookup(source);
    if (link.status === 'disabled') throw new DomainError(ErrorCode.LINK_DISABLED, 'link is disabled', { source });
    if (link.expiresAt !== null && link.expiresAt <= now) throw new DomainError(ErrorCode.LINK_EXPIRED, 'link has expired', { source });
    const reads = this.hot.record(key, now);
    if (this.options.l1Enabled && reads >= this.hot.options.threshold) this.l1.pin(key, link, now, epoch);
  }

  /** Hot links with their cached values, hottest first (for /internal/hot-links and the snapshot). */
  hotLinks(limit = 1000): Array<{ key: string; reads: number; link: CachedLink | null }> {
    const now = this.clock.now();
    return this.hot
      .hotKeys(now)
      .slice(0, limit)
      .map(({ key, reads }) => {
        const entry = this.l1.get(key, now);
        return { key, reads, link: entry && 'link' in entry ? entry.link : null };
      });
  }

  private redis<T>(op: () => Promise<T>): Promise<T> {
    return this.redisBreaker.execute(op).catch((error) => {
      throw error instanceof RedisUnavailable ? error : new RedisUnavailable((error as Error)?.message);
    });
  }

  private notFound(id: ShortUrlIdentifier, source: LookupSource): DomainError {
    this.observer.lookup(source);
    return unknownLink(id, source);
  }
}
