import { DynamicModule, Inject, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import type { AppConfig } from '@shortlink/config';
import { CLICK_AGGREGATE_STORE, CLICK_EVENT_SOURCE, ClickAggregateStore, ClickEventSource } from '@shortlink/clicks-domain';
import { UserAgentClassifier } from '@shortlink/visitors-domain';
import { API_ACCESS_PORTS, API_ACCESS_PROVIDERS, APP_CONFIG, APP_LOGGER, ContextLogger, METRICS_REGISTRY, PinoNestLogger } from '@shortlink/nest-platform';
import { CLICK_CONSUMER_OPTIONS, ClickConsumer, ClickConsumerOptions } from './click-consumer';
import { DashboardController } from './dashboard.controller';
import { StatsController } from './stats.controller';

/** The ports the analytics app injects; the composition binds them (wiring, or a shared bridge). */
export const ANALYTICS_PORTS: readonly symbol[] = [...API_ACCESS_PORTS, CLICK_EVENT_SOURCE, CLICK_AGGREGATE_STORE];

/** The analytics app's OpenAPI document (/docs): every query endpoint with its contract. */
export const ANALYTICS_OPENAPI = {
  title: 'shortlink analytics API',
  version: '1',
  description: 'Tenant-scoped click analytics: series at minute, hour and day granularity, unique visitors over any range, breakdowns, top links, orphan visits; JSON or CSV (?format=csv). Dashboard at /dashboard.',
} as const;

/** Retention runs at start and then every hour (dropping a partition is cheap; nothing waits on it). */
const RETENTION_EVERY_MS = 3600_000;
/** A lag read that takes longer is skipped for this scrape (the broker may be down). */
const LAG_TIMEOUT_MS = 2000;

@Module({})
export class AnalyticsFeatureModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: ContextLogger;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(CLICK_AGGREGATE_STORE) private readonly store: ClickAggregateStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(APP_LOGGER) logger: PinoNestLogger,
  ) {
    this.logger = logger.scoped('Analytics');
  }

  static forRoot(): DynamicModule {
    return {
      module: AnalyticsFeatureModule,
      // ClickConsumer is the click bus's event handler (connectClickConsumer, click-transport.ts).
      controllers: [StatsController, DashboardController, ClickConsumer],
      providers: [
        ...API_ACCESS_PROVIDERS,
        { provide: UserAgentClassifier, useValue: new UserAgentClassifier() },
        {
          provide: CLICK_CONSUMER_OPTIONS,
          inject: [APP_CONFIG],
          useFactory: (config: AppConfig): ClickConsumerOptions => ({ allowedLatenessSeconds: config.analytics.allowedLatenessSeconds }),
        },
        ConsumerLagMetric,
      ],
    };
  }

  /** The consumer itself runs as a microservice over the click bus (connectClickConsumer); this module keeps the data in bounds. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.analytics.consumerEnabled) return;
    const run = () =>
      this.store.dropExpired(Math.floor(Date.now() / 1000), this.config.analytics.retention).then(
        (dropped) => dropped.length > 0 && this.logger.log(`retention dropped ${dropped.length} partitions: ${dropped.join(', ')}`),
        (error: Error) => this.logger.warn(`retention failed: ${error.message}`),
      );
    void run();
    this.timer = setInterval(run, RETENTION_EVERY_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

/** shortlink_analytics_consumer_lag{partition}: messages behind the log end, read from the bus at scrape time. */
@Injectable()
class ConsumerLagMetric {
  constructor(@Inject(METRICS_REGISTRY) registry: Registry, @Inject(CLICK_EVENT_SOURCE) source: ClickEventSource) {
    new Gauge({
      name: 'shortlink_analytics_consumer_lag',
      help: 'Click messages (records) of the topic not yet consumed by the analytics group, per partition',
      labelNames: ['partition'],
      registers: [registry],
      async collect() {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), LAG_TIMEOUT_MS)));
        const lag = await Promise.race([source.lag().catch(() => null), timeout]);
        clearTimeout(timer);
        if (lag) for (const [partition, n] of lag) this.set({ partition: String(partition) }, n);
      },
    });
  }
}
