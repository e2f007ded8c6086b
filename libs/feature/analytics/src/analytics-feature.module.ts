import { DynamicModule, Inject, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Registry } from 'prom-client';
import type { AppConfig } from '@shortlink/config';
import { CLICK_AGGREGATE_STORE, CLICK_EVENT_SOURCE, ClickAggregateStore, ClickEventSource, VISITOR_SECRET } from '@shortlink/clicks-domain';
import { API_ACCESS_PORTS, API_ACCESS_PROVIDERS, APP_CONFIG, METRICS_REGISTRY } from '@shortlink/nest-platform';
import { ClickConsumer } from './click-consumer.service';
import { StatsController } from './stats.controller';

/** The ports the analytics app injects; the composition binds them (wiring, or a shared bridge). */
export const ANALYTICS_PORTS: readonly symbol[] = [...API_ACCESS_PORTS, CLICK_EVENT_SOURCE, CLICK_AGGREGATE_STORE, VISITOR_SECRET];

@Module({})
export class AnalyticsFeatureModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(ClickConsumer) private readonly consumer: ClickConsumer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  static forRoot(): DynamicModule {
    return {
      module: AnalyticsFeatureModule,
      controllers: [StatsController],
      providers: [
        ...API_ACCESS_PROVIDERS,
        {
          provide: ClickConsumer,
          inject: [CLICK_EVENT_SOURCE, CLICK_AGGREGATE_STORE, VISITOR_SECRET, METRICS_REGISTRY],
          useFactory: (source: ClickEventSource, store: ClickAggregateStore, visitorSecret: string, registry: Registry) => new ClickConsumer(source, store, visitorSecret, registry),
        },
      ],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.analytics.consumerEnabled) await this.consumer.start();
  }

  /** After the HTTP server closed; the source drains what it can, then the ports close. */
  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }
}
