import { DynamicModule, Module, Provider } from '@nestjs/common';
import { Registry } from 'prom-client';
import type { AppConfig } from '@shortlink/config';
import { LINK_CACHE_WRITER, LINK_REPOSITORY, LINK_RESOLVER, LinkRepository } from '@shortlink/links-domain';
import { AdminRoutes, APP_LOGGER, Lifecycle, METRICS_REGISTRY, PinoNestLogger } from '@shortlink/nest-platform';
import { BloomFilter } from './bloom-filter';
import { BloomMaintainer } from './bloom-maintainer';
import { CachedLinkWriter } from './cached-link-writer';
import { CachePolicy } from './cache-policy';
import { CLICK_LEASE_STORE, ClickLeaseStore } from './click-leases';
import { ClickQuota } from './click-quota';
import { GlobalRateLimiter } from './global-rate-limiter';
import { HotKeyDetector } from './hot-key-detector';
import { hotLinksRoute } from './hot-links.route';
import { L1Cache } from './l1-cache';
import { NULL_TTL_MS } from './link-cache';
import { PasswordAttempts } from './password-attempts';
import { PasswordCheckGate } from './password-check-gate';
import { CACHE_STORE, CacheStore, SNAPSHOT_STORE, SnapshotStore } from './ports';
import { ReadPathMetrics } from './read-path.metrics';
import { RedirectPipeline } from './redirect-pipeline';
import { HotLinkSnapshotKeeper } from './snapshot';

/** How often the redirect checks that the Bloom filter is still built. */
const BLOOM_CHECK_MS = 60_000;
/**
 * How long a starting redirect waits for its Bloom filter before it listens anyway (a first build
 * that scans millions of links takes longer; until it ends, unknown codes go to the shards, behind the bulkhead).
 */
const BLOOM_BOOT_WAIT_MS = 30_000;

/** The Bloom filter of existing links: written by the generation app's creates, read and rebuilt by the redirect. */
const bloomMaintainer = (config: AppConfig): Provider => ({
  provide: BloomMaintainer,
  inject: [CACHE_STORE, LINK_REPOSITORY, Lifecycle],
  useFactory: (cache: CacheStore, links: LinkRepository, lifecycle: Lifecycle) => {
    const storeInProcess = config.cache.driver === 'memory';
    const bloom = new BloomMaintainer(new BloomFilter(cache, config.redirect.bloom), cache, links, { storeInProcess });
    lifecycle.manage({ stop: () => bloom.close() });
    return bloom;
  },
});

/**
 * The read path of one app (docs/design.md, "Redirect read path"), built over the ports CACHE_STORE,
 * SNAPSHOT_STORE and LINK_REPOSITORY; each object's start and stop are registered where it is made.
 */
@Module({})
export class ReadPathModule {
  /** What the generation app needs: LINK_CACHE_WRITER (values written through, tombstones, the Bloom marks of new links). */
  static forWrites(config: AppConfig): DynamicModule {
    return {
      module: ReadPathModule,
      providers: [
        Lifecycle,
        bloomMaintainer(config),
        {
          provide: LINK_CACHE_WRITER,
          inject: [CACHE_STORE, BloomMaintainer, Lifecycle],
          useFactory: (cache: CacheStore, bloom: BloomMaintainer, lifecycle: Lifecycle) => {
            // Creates write their Bloom bits into the generations of the layout this instance reads.
            lifecycle.manage({ start: () => bloom.follow() });
            return new CachedLinkWriter(cache, bloom, new CachePolicy(config.redirect.policy, { maxTtlMs: config.redirect.maxTtlMs }));
          },
        },
      ],
      exports: [LINK_CACHE_WRITER],
    };
  }

  /** The redirect app's read path: LINK_RESOLVER, and the limits, the maxClicks quota and the password budgets beside it. */
  static forRedirect(config: AppConfig): DynamicModule {
    const r = config.redirect;
    return {
      module: ReadPathModule,
      providers: [
        Lifecycle,
        bloomMaintainer(config),
        { provide: ReadPathMetrics, inject: [METRICS_REGISTRY], useFactory: (registry: Registry) => new ReadPathMetrics(registry) },
        {
          provide: HotLinkSnapshotKeeper,
          inject: [SNAPSHOT_STORE],
          useFactory: async (store: SnapshotStore) => {
            const keeper = new HotLinkSnapshotKeeper(store);
            await keeper.load();
            return keeper;
          },
        },
        {
          provide: RedirectPipeline,
          inject: [CACHE_STORE, LINK_REPOSITORY, BloomMaintainer, HotLinkSnapshotKeeper, ReadPathMetrics, Lifecycle, APP_LOGGER, AdminRoutes],
          useFactory: (
            cache: CacheStore,
            links: LinkRepository,
            bloom: BloomMaintainer,
            snapshot: HotLinkSnapshotKeeper,
            metrics: ReadPathMetrics,
            lifecycle: Lifecycle,
            appLogger: PinoNestLogger,
            admin: AdminRoutes,
          ) => {
            const logger = appLogger.scoped('ReadPath');
            const l1 = new L1Cache(r.l1);
            metrics.readL1Size(() => l1.size);
            metrics.readBloom(() => bloom.filter.describe());
            const pipeline = new RedirectPipeline(
              {
                cache,
                links,
                snapshot,
                observer: metrics,
                l1,
                hot: new HotKeyDetector(r.hot),
                policy: new CachePolicy(r.policy, { maxTtlMs: r.maxTtlMs }),
                bloom: r.bloom.enabled ? bloom.filter : null,
              },
              {
                l1Enabled: r.l1.enabled,
                sharedCacheEnabled: r.sharedCacheEnabled,
                bloomEnabled: r.bloom.enabled,
                lockTtlMs: r.lock.ttlMs,
                lockWaitMs: r.lock.waitMs,
                lockPollMs: r.lock.pollMs,
                dbConcurrency: r.dbConcurrency,
                dbQueue: r.dbQueue,
                redisBreakerFailures: r.redisBreaker.failures,
                redisBreakerHalfOpenAfterMs: r.redisBreaker.halfOpenAfterMs,
                nullTtlMs: NULL_TTL_MS,
              },
            );
            admin.add('/internal/hot-links', hotLinksRoute(pipeline));
            // The hot links are kept on disk, for when Redis and the shard are both down.
            const saveHotLinks = () => snapshot.refresh(pipeline.hotLinks(r.snapshot.maxLinks), r.snapshot.maxLinks).catch(() => undefined);
            let saving: NodeJS.Timeout | undefined;
            lifecycle.manage({
              start: async () => {
                saving = setInterval(saveHotLinks, r.snapshot.intervalMs);
                saving.unref();
                if (r.bloom.enabled && r.sharedCacheEnabled) {
                  bloom.keepBuilt(BLOOM_CHECK_MS, (outcome) => {
                    if (outcome === 'rebuilt') logger.log('Bloom filter rebuilt from the shards');
                    else if (outcome === 'grown') logger.log(`Bloom filter grown: ${JSON.stringify(bloom.filter.describe())}`);
                    else logger.warn(`Bloom filter check failed: ${outcome.message}`);
                  });
                  // Ready before the listener opens: a scan right after a start or a deploy meets a filter, not the shards.
                  if (!(await bloom.filter.whenReady(BLOOM_BOOT_WAIT_MS)))
                    logger.warn(`Bloom filter not built within ${BLOOM_BOOT_WAIT_MS} ms of the start: unknown codes go to the shards until it is`);
                }
              },
              stop: () => {
                clearInterval(saving);
                return saveHotLinks();
              },
            });
            return pipeline;
          },
        },
        { provide: LINK_RESOLVER, useExisting: RedirectPipeline },
        {
          provide: ClickQuota,
          inject: [CLICK_LEASE_STORE, LINK_REPOSITORY, ReadPathMetrics, Lifecycle],
          useFactory: (leases: ClickLeaseStore, links: LinkRepository, metrics: ReadPathMetrics, lifecycle: Lifecycle) => {
            const options = { flushIntervalMs: r.clickCountFlushMs, syncIntervalMs: r.counterSyncMs, leaseMs: r.clickLeaseMs };
            const quota = new ClickQuota({ store: leases, counts: links, observer: metrics }, options);
            metrics.readUnflushedClicks(() => quota.unflushedClicks);
            metrics.readReservedClicks(() => quota.reservedClicks);
            // Closed before the ports: the unused leases go back and the clicks granted against maxClicks reach the shards.
            lifecycle.manage({ start: () => quota.start(), stop: () => quota.close() });
            return quota;
          },
        },
        {
          provide: GlobalRateLimiter,
          inject: [CACHE_STORE, Lifecycle],
          useFactory: (cache: CacheStore, lifecycle: Lifecycle) => {
            const limiter = new GlobalRateLimiter(cache, r.rateLimit.globalPerSecond, r.rateLimit.localFallbackPerSecond);
            lifecycle.manage({ start: () => limiter.start(), stop: () => limiter.stop() });
            return limiter;
          },
        },
        {
          provide: PasswordAttempts,
          inject: [CACHE_STORE],
          useFactory: (cache: CacheStore) => new PasswordAttempts(cache, { attempts: r.password.attempts, windowMs: r.password.windowMs }),
        },
        {
          provide: PasswordCheckGate,
          useValue: new PasswordCheckGate({ concurrency: r.password.concurrency, perVisitorPerMinute: r.password.checksPerVisitorPerMinute }),
        },
      ],
      exports: [LINK_RESOLVER, RedirectPipeline, ClickQuota, GlobalRateLimiter, PasswordAttempts, PasswordCheckGate],
    };
  }
}
