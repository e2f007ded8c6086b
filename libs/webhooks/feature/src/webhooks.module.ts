import { Module } from '@nestjs/common';
import { AUDIT_LOG_STORE, AuditLog, AuditLogStore } from '@shortlink/audit-domain';
import type { AppConfig } from '@shortlink/config';
import type { ClickEventSource } from '@shortlink/clicks-domain';
import { CODE_SECRET } from '@shortlink/links-domain';
import { APP_CONFIG, APP_LOGGER, Lifecycle, PinoNestLogger } from '@shortlink/nest-platform';
import {
  EventPublisher,
  PLATFORM_EVENT_SINK,
  PLATFORM_EVENT_SOURCE,
  PlatformEventSink,
  PlatformEventSource,
  SecretBox,
  WEBHOOK_CLICK_SOURCE,
  WEBHOOK_STORE,
  WEBHOOK_TRANSPORT,
  WEBHOOK_URL_GUARD,
  WebhookService,
  WebhookStore,
  WebhookTransport,
  WebhookUrlGuard,
} from '@shortlink/webhooks-domain';
import { DomainWebhookEvents } from './domain-webhook-events';
import { LinkWebhookEvents } from './link-webhook-events';
import { WebhookDelivery } from './webhook-delivery';
import { WebhooksController } from './webhooks.controller';

/** The ports the webhooks API injects (the generation app). */
export const WEBHOOKS_PORTS: readonly symbol[] = [WEBHOOK_STORE, CODE_SECRET, WEBHOOK_URL_GUARD, PLATFORM_EVENT_SINK];

/**
 * Webhooks (docs/design.md, "Webhooks"): the endpoints API, and the platform events of link
 * changes (LinkWebhookEvents, one of the hooks the app binds to LINK_CHANGE_HOOKS) and of domains'
 * ownership (DomainWebhookEvents, which the app binds to DOMAIN_OWNERSHIP_EVENTS), published to the
 * events topic for the deliverer.
 */
@Module({
  controllers: [WebhooksController],
  providers: [
    Lifecycle,
    {
      provide: EventPublisher,
      inject: [PLATFORM_EVENT_SINK, Lifecycle, APP_LOGGER],
      useFactory: (sink: PlatformEventSink, lifecycle: Lifecycle, appLogger: PinoNestLogger) => {
        const logger = appLogger.scoped('Events');
        const publisher = new EventPublisher(sink, {
          onDeferred: (error, pending) => logger.warn(`events wait for the bus (${pending} in memory, retried every second): ${(error as Error)?.message}`),
          onDropped: (count) => logger.error(`${count} events dropped: the bus did not take them`),
        });
        lifecycle.manage({ stop: () => publisher.stop() });
        return publisher;
      },
    },
    { provide: LinkWebhookEvents, inject: [EventPublisher], useFactory: (events: EventPublisher) => new LinkWebhookEvents(events) },
    { provide: DomainWebhookEvents, inject: [EventPublisher], useFactory: (events: EventPublisher) => new DomainWebhookEvents(events) },
    {
      // The signing secrets are sealed under a key derived from the code secret.
      provide: WebhookService,
      inject: [WEBHOOK_STORE, CODE_SECRET, WEBHOOK_URL_GUARD, AuditLog],
      useFactory: (store: WebhookStore, codeSecret: string, guard: WebhookUrlGuard, audit: AuditLog) =>
        new WebhookService({ store, box: new SecretBox(codeSecret), guard, audit }),
    },
  ],
  exports: [LinkWebhookEvents, DomainWebhookEvents, EventPublisher],
})
export class WebhooksModule {}

/** The webhook deliverer's ports, in the order its factory takes them. */
const DELIVERY_PORTS = [WEBHOOK_STORE, WEBHOOK_TRANSPORT, WEBHOOK_URL_GUARD, CODE_SECRET, AUDIT_LOG_STORE, PLATFORM_EVENT_SOURCE, WEBHOOK_CLICK_SOURCE];
export const WEBHOOK_DELIVERY_PORTS: readonly symbol[] = DELIVERY_PORTS;

/**
 * The deliverer, where the analytics consumer runs: it consumes Kafka already, and no API request
 * waits on it (docs/design.md, "Webhooks").
 */
@Module({
  providers: [
    Lifecycle,
    {
      provide: WebhookDelivery,
      inject: [...DELIVERY_PORTS, APP_CONFIG, APP_LOGGER, Lifecycle],
      useFactory: (
        store: WebhookStore,
        transport: WebhookTransport,
        guard: WebhookUrlGuard,
        codeSecret: string,
        audit: AuditLogStore,
        events: PlatformEventSource,
        clicks: ClickEventSource,
        config: AppConfig,
        logger: PinoNestLogger,
        lifecycle: Lifecycle,
      ) => {
        const delivery = new WebhookDelivery({ store, transport, guard, codeSecret, audit, events, clicks }, config, logger.scoped('Webhooks'));
        if (config.analytics.consumerEnabled) lifecycle.manage({ start: () => delivery.start(), stop: () => delivery.stop() });
        return delivery;
      },
    },
  ],
  exports: [WebhookDelivery],
})
export class WebhookDeliveryModule {}
