import { DynamicModule, Inject, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, IncomingMessage, ServerResponse } from 'http';
import { Registry } from 'prom-client';
import { AppConfig } from '@shortlink/config';
import { Infrastructure } from '@shortlink/infrastructure';
import { GlobalRateLimiter, HotLinkSnapshotKeeper, PerIpRateLimiter, RedirectPipeline } from '@shortlink/links-domain';
import { ClickBuffer } from '@shortlink/clicks-domain';
import { APP_CONFIG, createFastifyApp, HealthModule, METRICS_REGISTRY, plainLoggingModule, MetricsModule } from '@shortlink/nest-platform';
import { InternalController } from './internal.controller';
import { RedirectHttpHandler } from './redirect-http.handler';
import { RedirectMetrics } from './redirect.metrics';

const PIPELINE_PARTS = Symbol('PIPELINE_PARTS');
type PipelineParts = Awaited<ReturnType<Infrastructure['redirectPipeline']>>;

@Module({})
export class RedirectModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Redirect');
  private timers: NodeJS.Timeout[] = [];

  constructor(
    @Inject(ClickBuffer) private readonly clicks: ClickBuffer,
    @Inject(PIPELINE_PARTS) private readonly parts: PipelineParts,
    @Inject(GlobalRateLimiter) private readonly global: GlobalRateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  static forRoot(config: AppConfig, infra: Infrastructure): DynamicModule {
    const r = config.redirect;
    return {
      module: RedirectModule,
      imports: [plainLoggingModule('redirect', config.runtime.logLevel), MetricsModule.forApp('redirect'), HealthModule.withProbes(() => infra.healthProbes(['shard-', 'cache']))],
      controllers: [InternalController],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: RedirectMetrics, useFactory: (registry: Registry) => new RedirectMetrics(registry), inject: [METRICS_REGISTRY] },
        { provide: PIPELINE_PARTS, useFactory: (metrics: RedirectMetrics) => infra.redirectPipeline(metrics), inject: [RedirectMetrics] },
        { provide: RedirectPipeline, useFactory: (parts: PipelineParts) => parts.pipeline, inject: [PIPELINE_PARTS] },
        { provide: HotLinkSnapshotKeeper, useFactory: (parts: PipelineParts) => parts.snapshot, inject: [PIPELINE_PARTS] },
        { provide: PerIpRateLimiter, useValue: new PerIpRateLimiter(r.rateLimit.perIpPerMinute, 60_000) },
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
          inject: [RedirectPipeline, ClickBuffer, RedirectMetrics, PerIpRateLimiter, GlobalRateLimiter],
          useFactory: (p: RedirectPipeline, c: ClickBuffer, m: RedirectMetrics, ip: PerIpRateLimiter, g: GlobalRateLimiter) => new RedirectHttpHandler(p, c, m, ip, g, config),
        },
      ],
    };
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

/** The server options Fastify passes to a serverFactory (its defaults filled in). */
interface FastifyServerTimeouts {
  readonly keepAliveTimeout: number;
  readonly requestTimeout: number;
  readonly connectionTimeout: number;
  readonly maxRequestsPerSocket: number;
}

export async function createRedirectApp(config: AppConfig, infra: Infrastructure) {
  // The HTTP server is ours: redirects are answered before Fastify sees them, the rest goes on.
  let redirects: RedirectHttpHandler['tryHandle'] | null = null;
  const serverFactory = (handler: (req: IncomingMessage, res: ServerResponse) => void, fastifyOptions: Record<string, unknown>) => {
    const options = fastifyOptions as unknown as FastifyServerTimeouts;
    const server = createServer((req, res) => {
      if (!redirects || !redirects(req, res)) handler(req, res);
    });
    // Fastify applies its server options only to servers it creates; for a factory's server they
    // are ours to apply. Without this the keep-alive timeout fell to Node's 5 s, shorter than a load
    // balancer's idle timeout, so a pooled connection could be closed just as a request went out on it.
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };
  const app = await createFastifyApp(RedirectModule.forRoot(config, infra), { plainLogger: true, serverFactory });
  redirects = app.get(RedirectHttpHandler).tryHandle;
  return app;
}
