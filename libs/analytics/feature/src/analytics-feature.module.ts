import { DynamicModule, Inject, Injectable, Module } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import type { AppConfig } from '@shortlink/config';
import {
  CLICK_AGGREGATE_STORE,
  CLICK_EVENT_SOURCE,
  ClickAggregateStore,
  ClickEventSource,
  CONVERSION_EVENT_SOURCE,
  ConversionEventSource,
  LIVE_CLICK_SOURCE,
  LIVE_CONVERSION_SOURCE,
} from '@shortlink/clicks-domain';
import { UserAgentClassifier } from '@shortlink/visitors-domain';
import { LINK_REPOSITORY, LinkRepository } from '@shortlink/links-domain';
import { APP_CONFIG, APP_LOGGER, Lifecycle, METRICS_REGISTRY, PinoNestLogger } from '@shortlink/nest-platform';
import { CLICK_CONSUMER_OPTIONS, ClickConsumer, ClickConsumerOptions } from './click-consumer';
import { ConversionConsumer } from './conversion-consumer';
import { DashboardController } from './dashboard.controller';
import { LiveClickHub } from './live/live-click-hub';
import { LinkTagCache } from './live/live-filter';
import { LIVE_TAG_LOOKUP, StreamController } from './live/stream.controller';
import { OverviewController } from './overview.controller';
import { RetentionJob } from './retention-job';
import { StatsController } from './stats.controller';

/** The ports the analytics feature injects (the app adds those of its other modules). */
export const ANALYTICS_FEATURE_PORTS: readonly symbol[] = [
  CLICK_EVENT_SOURCE,
  CLICK_AGGREGATE_STORE,
  // The live click stream: its consumer, and the links whose tags its tag filter reads.
  LIVE_CLICK_SOURCE,
  LINK_REPOSITORY,
  // Leads and sales (docs/analytics.md, "Conversions"), counted and streamed live.
  CONVERSION_EVENT_SOURCE,
  LIVE_CONVERSION_SOURCE,
];

/** The analytics app's OpenAPI document (/docs): every query endpoint with its contract. */
export const ANALYTICS_OPENAPI = {
  title: 'shortlink analytics API',
  version: '1',
  description:
    'Tenant-scoped click analytics: series at minute, hour and day granularity, unique visitors over any range, breakdowns, top links, orphan visits; JSON or CSV (?format=csv); the live stream of clicks, leads and sales (Server-Sent Events). Dashboard at /dashboard. Every route needs an `x-api-key` with the analytics scope, or a person’s session cookie (`POST /api/v1/auth/login`, here or on the generation app) whose role allows it, with `x-csrf-token` on writes.',
  tags: { analytics: 'Clicks, visitors, breakdowns and raw visits of your links', auth: 'Sign in with an email and password, sign out, who is calling' },
  sessions: true,
} as const;

/** A lag read that takes longer is skipped for this scrape (the broker may be down). */
const LAG_TIMEOUT_MS = 2000;

/**
 * The analytics app: the query API, the dashboard and the consumer (the click bus's handler,
 * ClickConsumer, reached through connectClickConsumer), with the retention job that keeps the data in bounds.
 */
@Module({})
export class AnalyticsFeatureModule {
  static forRoot(): DynamicModule {
    return {
      module: AnalyticsFeatureModule,
      // ClickConsumer is the click bus's event handler (connectClickConsumer, click-transport.ts).
      controllers: [StatsController, OverviewController, StreamController, DashboardController, ClickConsumer],
      providers: [
        Lifecycle,
        { provide: UserAgentClassifier, useValue: new UserAgentClassifier() },
        {
          provide: CLICK_CONSUMER_OPTIONS,
          inject: [APP_CONFIG],
          useFactory: (config: AppConfig): ClickConsumerOptions => ({ allowedLatenessSeconds: config.analytics.allowedLatenessSeconds }),
        },
        {
          provide: RetentionJob,
          inject: [CLICK_AGGREGATE_STORE, APP_CONFIG, APP_LOGGER, Lifecycle],
          useFactory: (store: ClickAggregateStore, config: AppConfig, logger: PinoNestLogger, lifecycle: Lifecycle) => {
            const job = new RetentionJob(store, config.analytics.retention, logger.scoped('Analytics'));
            // Where the consumer runs: it writes the data the job drops.
            if (config.analytics.consumerEnabled) lifecycle.manage({ start: () => job.start(), stop: () => job.stop() });
            return job;
          },
        },
        {
          // Where the click consumer runs: leads and sales are counted beside the clicks.
          provide: ConversionConsumer,
          inject: [CLICK_AGGREGATE_STORE, CONVERSION_EVENT_SOURCE, APP_CONFIG, APP_LOGGER, Lifecycle],
          useFactory: (store: ClickAggregateStore, source: ConversionEventSource, config: AppConfig, logger: PinoNestLogger, lifecycle: Lifecycle) => {
            const consumer = new ConversionConsumer(store, source, logger.scoped('Conversions'), {
              dimensionsWaitMs: config.conversions.dimensionsWaitMs,
            });
            if (config.analytics.consumerEnabled) lifecycle.manage({ start: async () => consumer.start(), stop: () => consumer.stop() });
            return consumer;
          },
        },
        ConsumerLagMetric,
        LiveStreamMetrics,
        {
          // Wherever the API runs (the consumer setting is about the rollups): each instance streams what its own group reads.
          provide: LiveClickHub,
          inject: [LIVE_CLICK_SOURCE, LIVE_CONVERSION_SOURCE, UserAgentClassifier, APP_CONFIG, APP_LOGGER, Lifecycle],
          useFactory: (
            source: ClickEventSource,
            conversions: ConversionEventSource,
            classifier: UserAgentClassifier,
            config: AppConfig,
            logger: PinoNestLogger,
            lifecycle: Lifecycle,
          ) => {
            const scoped = logger.scoped('LiveStream');
            const hub = new LiveClickHub(source, classifier, { ...config.analytics.stream, onError: (message) => scoped.warn(message) }, conversions);
            lifecycle.manage({ start: () => hub.start(), stop: () => hub.stop() });
            return hub;
          },
        },
        { provide: LIVE_TAG_LOOKUP, inject: [LINK_REPOSITORY], useFactory: (links: LinkRepository) => new LinkTagCache(links) },
      ],
    };
  }
}

/** shortlink_analytics_live_streams, shortlink_analytics_live_clicks_total and shortlink_analytics_live_conversions_total: the live stream of this instance, read at scrape time. */
@Injectable()
class LiveStreamMetrics {
  constructor(@Inject(METRICS_REGISTRY) registry: Registry, @Inject(LiveClickHub) hub: LiveClickHub) {
    new Gauge({
      name: 'shortlink_analytics_live_streams',
      help: 'Live click streams (GET /api/v1/events/stream) open on this instance',
      registers: [registry],
      collect() {
        this.set(hub.openStreamCount);
      },
    });
    new Counter({
      name: 'shortlink_analytics_live_clicks_total',
      help: "Clicks of tenants this instance's live consumer read since it started",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(hub.streamedClicks);
      },
    });
    new Counter({
      name: 'shortlink_analytics_live_conversions_total',
      help: "Leads and sales of tenants this instance's live consumer read since it started (each event key once)",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(hub.streamedConversions);
      },
    });
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
