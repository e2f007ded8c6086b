import { DynamicModule, Inject, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Registry } from 'prom-client';
import { AppConfig } from '@shortlink/config';
import { Infrastructure } from '@shortlink/infrastructure';
import { KeyedWindowLimiter } from '@shortlink/core';
import { GlobalRateLimiter, HotLinkSnapshotKeeper, RedirectPipeline } from '@shortlink/links-domain';
import { ClickBuffer } from '@shortlink/clicks-domain';
import { AdminRoutes, APP_CONFIG, ClientAddressResolver, createFastifyApp, FrontHandler, HealthModule, METRICS_REGISTRY, plainLoggingModule, PlatformModule } from '@shortlink/nest-platform';
import { hotLinksRoute } from './internal.routes';
import { RedirectHttpHandler } from './redirect-http.handler';
import { RedirectMetrics } from './redirect.metrics';

const PIPELINE_PARTS = Symbol('PIPELINE_PARTS');
const PER_IP_LIMITER = Symbol('PER_IP_LIMITER');
type PipelineParts = Awaited<ReturnType<Infrastructure['redirectPipeline']>>;

@Module({})
export class RedirectModule implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Redirect');
  private timers: NodeJS.Timeout[] = [];

  constructor(
    @Inject(ClickBuffer) private readonly clicks: ClickBuffer,
    @Inject(PIPELINE_PARTS) private readonly parts: PipelineParts,
    @Inject(GlobalRateLimiter) private readonly global: GlobalRateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(AdminRoutes) private readonly adminRoutes: AdminRoutes,
  ) {}

  static forRoot(config: AppConfig, infra: Infrastructure): DynamicModule {
    const r = config.redirect;
    return {
      module: RedirectModule,
      imports: [plainLoggingModule('redirect', config.runtime.logLevel), PlatformModule.forApp('redirect', config), HealthModule.withProbes(() => infra.healthProbes(['shard-', 'cache']))],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: RedirectMetrics, useFactory: (registry: Registry) => new RedirectMetrics(registry), inject: [METRICS_REGISTRY] },
        { provide: PIPELINE_PARTS, useFactory: (metrics: RedirectMetrics) => infra.redirectPipeline(metrics), inject: [RedirectMetrics] },
        { provide: RedirectPipeline, useFactory: (parts: PipelineParts) => parts.pipeline, inject: [PIPELINE_PARTS] },
        { provide: HotLinkSnapshotKeeper, useFactory: (parts: PipelineParts) => parts.snapshot, inject: [PIPELINE_PARTS] },
        {
          provide: PER_IP_LIMITER,
          inject: [RedirectMetrics],
          useFactory: (metrics: RedirectMetrics) => {
            const limiter = new KeyedWindowLimiter({ limit: r.rateLimit.perIpPerMinute, windowMs: 60_000 });
            metrics.readRateLimiter(() => limiter.usage);
            return limiter;
          },
        },
        { provide: GlobalRateLimiter, useFactory: async () => new GlobalRateLimiter(await infra.cacheStore(), r.rateLimit.globalPerSecond, r.rateLimit.localFallbackPerSecond) },
        {
          provide: ClickBuffer,
          inject: [RedirectMetrics],
          useFactory: async (metrics: RedirectMetrics) => {
            const buffer = new ClickBuffer(await infra.clickSink(), config.clickBuffer, {
              dropped: (n) => metrics.clicksDropped.inc(n),
              sendFailed: () => metrics.clickSendFailures.inc(),
            });
            metrics.readClickBufferSize(() => buffer.size);
            buffer.start();
            return buffer;
          },
        },
        {
          provide: RedirectHttpHandler,
          inject: [RedirectPipeline, ClickBuffer, RedirectMetrics, PER_IP_LIMITER, GlobalRateLimiter, ClientAddressResolver],
          useFactory: (p: RedirectPipeline, c: ClickBuffer, m: RedirectMetrics, ip: KeyedWindowLimiter, g: GlobalRateLimiter, addresses: ClientAddressResolver) => new RedirectHttpHandler(p, c, m, ip, g, addresses, config),
        },
      ],
    };
  }

  onModuleInit(): void {
    this.adminRoutes.add('/internal/hot-links', hotLinksRoute(this.parts.pipeline));
  }

  async onApplicationBootstrap(): Promise<void> {
    this.global.start();
    const { bloom, snapshot, pipeline } = this.parts;
    if (this.config.redirect.bloom.enabled && this.config.redirect.redisEnabled) {
      const ensure = () =>
        bloom.ensureBuilt().then(
          (r) => r === 'built' && this.logger.log('Bloom filter rebuilt from the shards'),
          (e) => this.logger.warn(`Bloom filter check failed: ${(e as Error).message}`),
        );
      void ensure();
      // A partition evicted or lost in a failover answers "unknown" until the next rebuild.
      this.timers.push(setInterval(ensure, 60_000));
    }
    const s = this.config.redirect.snapshot;
    this.timers.push(setInterval(() => void snapshot.refresh(pipeline.hotLinks(s.maxLinks), s.maxLinks).catch(() => undefined), s.intervalMs));
    this.timers.forEach((t) => t.unref());
  }

  async onApplicationShutdown(): Promise<void> {
    this.timers.forEach((t) => clearInterval(t));
    this.global.stop();
    const s = this.config.redirect.snapshot;
    await this.parts.snapshot.refresh(this.parts.pipeline.hotLinks(s.maxLinks), s.maxLinks).catch(() => undefined);
    await this.clicks.close();
  }
}

export async function createRedirectApp(config: AppConfig, infra: Infrastructure) {
  // Redirects are answered at the node:http level, before Fastify sees them; the rest goes on.
  const front: { handle: FrontHandler | null } = { handle: null };
  const app = await createFastifyApp(RedirectModule.forRoot(config, infra), config, { plainLogger: true, front });
  front.handle = app.get(RedirectHttpHandler).tryHandle;
  return app;
}
