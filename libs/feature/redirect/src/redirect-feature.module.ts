import { DynamicModule, Inject, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Registry } from 'prom-client';
import type { AppConfig } from '@shortlink/config';
import { KeyedWindowLimiter } from '@shortlink/core';
import {
  BloomFilter, BloomMaintainer, CACHE_STORE, CachePolicy, CacheStore, ClickQuota, GlobalRateLimiter, HotKeyDetector, HotLinkSnapshotKeeper, L1Cache, LINK_CHANGE_FEED, LINK_REPOSITORY,
  LinkChangeFeed, LinkRules, NULL_TTL_MS, PASSWORD_HASHER, PasswordAttempts, PasswordCheckGate, PasswordHasher, RedirectPipeline, ShardedLinkRepository,
  SNAPSHOT_STORE, SnapshotStore,
} from '@shortlink/links-domain';
import { CLICK_EVENT_SINK, ClickEventSink, VISITOR_SECRET } from '@shortlink/clicks-domain';
import { GEO_LOOKUP, GeoLookup } from '@shortlink/visitors-domain';
import { TENANT_STORE, TenantDirectory, TenantStore } from '@shortlink/tenants-domain';
import { AdminRoutes, APP_CONFIG, ClientAddressResolver, FrontDoor, METRICS_REGISTRY } from '@shortlink/nest-platform';
import { ClickRecorder } from './click-recorder';
import { hotLinksRoute } from './internal.routes';
import { LinkChangeListener } from './link-changes';
import { LinkOptionParts, RedirectHttpHandler } from './redirect-http.handler';
import { RedirectMetrics } from './redirect.metrics';

/** The ports the redirect app injects; the composition binds them (wiring, or a shared bridge). */
export const REDIRECT_PORTS: readonly symbol[] = [LINK_REPOSITORY, CACHE_STORE, CLICK_EVENT_SINK, SNAPSHOT_STORE, LINK_CHANGE_FEED, GEO_LOOKUP, VISITOR_SECRET, PASSWORD_HASHER, TENANT_STORE];

const PER_IP_LIMITER = Symbol('PER_IP_LIMITER');
const LINK_OPTION_PARTS = Symbol('LINK_OPTION_PARTS');

@Module({})
export class RedirectFeatureModule implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Redirect');
  private timers: NodeJS.Timeout[] = [];

  constructor(
    @Inject(ClickRecorder) private readonly clicks: ClickRecorder,
    @Inject(RedirectPipeline) private readonly pipeline: RedirectPipeline,
    @Inject(HotLinkSnapshotKeeper) private readonly snapshot: HotLinkSnapshotKeeper,
    @Inject(BloomMaintainer) private readonly bloom: BloomMaintainer,
    @Inject(GlobalRateLimiter) private readonly global: GlobalRateLimiter,
    @Inject(RedirectHttpHandler) private readonly handler: RedirectHttpHandler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(AdminRoutes) private readonly adminRoutes: AdminRoutes,
    @Inject(FrontDoor) private readonly frontDoor: FrontDoor,
    @Inject(ClickQuota) private readonly quota: ClickQuota,
    @Inject(LinkChangeListener) private readonly changes: LinkChangeListener,
    @Inject(TenantDirectory) private readonly tenants: TenantDirectory,
  ) {}

  static forRoot(config: AppConfig): DynamicModule {
    const r = config.redirect;
    return {
      module: RedirectFeatureModule,
      providers: [
        { provide: RedirectMetrics, inject: [METRICS_REGISTRY], useFactory: (registry: Registry) => new RedirectMetrics(registry) },
        {
          provide: BloomMaintainer,
          inject: [CACHE_STORE, LINK_REPOSITORY],
          useFactory: (cache: CacheStore, repository: ShardedLinkRepository) => new BloomMaintainer(new BloomFilter(cache, r.bloom), cache, repository),
        },
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
          inject: [CACHE_STORE, LINK_REPOSITORY, BloomMaintainer, HotLinkSnapshotKeeper, RedirectMetrics],
          useFactory: (cache: CacheStore, repository: ShardedLinkRepository, bloom: BloomMaintainer, snapshot: HotLinkSnapshotKeeper, metrics: RedirectMetrics) =>
            new RedirectPipeline(
              cache,
              repository,
              new L1Cache(r.l1),
              new HotKeyDetector(r.hot),
              new CachePolicy(r.policy),
              r.bloom.enabled ? bloom.filter : null,
              snapshot,
              {
                l1Enabled: r.l1.enabled,
                sharedCacheEnabled: r.sharedCacheEnabled,
                bloomEnabled: r.bloom.enabled,
                lockTtlMs: r.lock.ttlMs,
                lockWaitMs: r.lock.waitMs,
                lockPollMs: r.lock.pollMs,
                dbConcurrency: r.dbConcurrency,
                breakerFailures: r.breaker.failures,
                breakerHalfOpenAfterMs: r.breaker.halfOpenAfterMs,
                nullTtlMs: NULL_TTL_MS,
              },
              metrics,
            ),
        },
        {
          provide: PER_IP_LIMITER,
          inject: [RedirectMetrics],
          useFactory: (metrics: RedirectMetrics) => {
            const limiter = new KeyedWindowLimiter({ limit: r.rateLimit.perIpPerMinute, windowMs: 60_000 });
            metrics.readRateLimiter(() => limiter.usage);
            return limiter;
          },
        },
        { provide: GlobalRateLimiter, inject: [CACHE_STORE], useFactory: (cache: CacheStore) => new GlobalRateLimiter(cache, r.rateLimit.globalPerSecond, r.rateLimit.localFallbackPerSecond) },
        {
          provide: ClickRecorder,
          inject: [CLICK_EVENT_SINK, GEO_LOOKUP, VISITOR_SECRET, RedirectMetrics],
          useFactory: (sink: ClickEventSink, geo: GeoLookup, visitorSecret: string, metrics: RedirectMetrics) => {
            const recorder = new ClickRecorder(sink, geo, visitorSecret, config.clickBuffer, { dropped: (n) => metrics.clicksDropped.inc(n), sendFailed: () => metrics.clickSendFailures.inc() });
            metrics.readClickBufferSize(() => recorder.buffer.size);
            return recorder;
          },
        },
        {
          provide: ClickQuota,
          inject: [CACHE_STORE, LINK_REPOSITORY, RedirectMetrics],
          useFactory: (cache: CacheStore, repository: ShardedLinkRepository, metrics: RedirectMetrics) => {
            const quota = new ClickQuota(cache, repository, { flushIntervalMs: r.clickCountFlushMs }, metrics);
            metrics.readUnflushedClicks(() => quota.unflushedClicks);
            return quota;
          },
        },
        {
          provide: LINK_OPTION_PARTS,
          inject: [GEO_LOOKUP, ClickQuota, CACHE_STORE, PASSWORD_HASHER],
          useFactory: (geo: GeoLookup, quota: ClickQuota, cache: CacheStore, passwords: PasswordHasher): LinkOptionParts => ({
            rules: new LinkRules(geo, quota),
            quota,
            attempts: new PasswordAttempts(cache, { attempts: r.password.attempts, windowMs: r.password.windowMs }),
            passwords,
            checks: new PasswordCheckGate({ concurrency: r.password.concurrency, perVisitorPerMinute: r.password.checksPerVisitorPerMinute }),
          }),
        },
        {
          provide: LinkChangeListener,
          inject: [RedirectPipeline, LINK_CHANGE_FEED, RedirectMetrics],
          useFactory: (pipeline: RedirectPipeline, feed: LinkChangeFeed, metrics: RedirectMetrics) => new LinkChangeListener(pipeline, feed, metrics),
        },
        {
          provide: TenantDirectory,
          inject: [TENANT_STORE],
          useFactory: (store: TenantStore) => {
            const logger = new Logger('TenantDirectory');
            return new TenantDirectory(store, {
              refreshMs: r.tenantRefreshMs,
              onOutage: (error) => logger.warn(`tenant domains and suspensions not refreshed, the last ones stay in use: ${(error as Error).message}`),
            });
          },
        },
        {
          provide: RedirectHttpHandler,
          inject: [RedirectPipeline, ClickRecorder, RedirectMetrics, PER_IP_LIMITER, GlobalRateLimiter, ClientAddressResolver, LINK_OPTION_PARTS, TenantDirectory],
          useFactory: (p: RedirectPipeline, c: ClickRecorder, m: RedirectMetrics, ip: KeyedWindowLimiter, g: GlobalRateLimiter, addresses: ClientAddressResolver, parts: LinkOptionParts, tenants: TenantDirectory) =>
            new RedirectHttpHandler(p, c, m, ip, g, addresses, config, parts, tenants),
        },
      ],
    };
  }

  onModuleInit(): void {
    // Redirects are answered at the node:http level, before Fastify sees them; the rest goes on.
    this.frontDoor.use(this.handler.tryHandle);
    this.adminRoutes.add('/internal/hot-links', hotLinksRoute(this.pipeline));
    this.adminRoutes.add('/internal/link-changes', this.changes.route());
  }

  async onApplicationBootstrap(): Promise<void> {
    // Before the listener opens: edits made from now on reach this instance's L1.
    await this.changes.start();
    await this.tenants.start();
    this.clicks.buffer.start();
    this.global.start();
    this.quota.start();
    if (this.config.redirect.bloom.enabled && this.config.redirect.sharedCacheEnabled) {
      const ensure = () =>
        this.bloom.ensureBuilt().then(
          (r) => r === 'built' && this.logger.log('Bloom filter rebuilt from the shards'),
          (e) => this.logger.warn(`Bloom filter check failed: ${(e as Error).message}`),
        );
      void ensure();
      // A partition evicted or lost in a failover answers "unknown" until the next rebuild.
      this.timers.push(setInterval(ensure, 60_000));
    }
    const s = this.config.redirect.snapshot;
    this.timers.push(setInterval(() => void this.snapshot.refresh(this.pipeline.hotLinks(s.maxLinks), s.maxLinks).catch(() => undefined), s.intervalMs));
    this.timers.forEach((t) => t.unref());
  }

  /** After the HTTP server closed (no more clicks): keep the snapshot, flush the clicks and click counts. The ports close after this. */
  async onApplicationShutdown(): Promise<void> {
    this.timers.forEach((t) => clearInterval(t));
    this.global.stop();
    this.tenants.stop();
    await this.changes.stop();
    // The clicks granted against maxClicks reach the shards before the ports close.
    await this.quota.close();
    await this.bloom.close();
    const s = this.config.redirect.snapshot;
    await this.snapshot.refresh(this.pipeline.hotLinks(s.maxLinks), s.maxLinks).catch(() => undefined);
    await this.clicks.buffer.close();
  }
}
