// Webhooks: a tenant's endpoints, signed deliveries of the platform's events (docs/design.md, "Webhooks").
export { clickEventsOf, type DelivererOptions, deliveryIdOf, WebhookDeliverer } from './deliverer';
export {
  type AttemptRecord,
  type DeliveryPosition,
  PLATFORM_EVENT_SINK,
  PLATFORM_EVENT_SOURCE,
  type PlatformEventSink,
  type PlatformEventSource,
  type SendResult,
  WEBHOOK_STORE,
  WEBHOOK_CLICK_SOURCE,
  WEBHOOK_TRANSPORT,
  WEBHOOK_URL_GUARD,
  type WebhookStore,
  type WebhookTransport,
} from './ports';
export { nextAttemptAt, type RetrySchedule } from './retry-schedule';
export { newSigningSecret, SecretBox } from './secret-box';
export { signedHeaders } from './signing';
export { type Delivery, type DeliveryStatus, type PlatformEvent, type Webhook, WEBHOOK_EVENTS, type WebhookEventType } from './webhook';
export { type DeliveryPage, type WebhookEdit, type WebhookInput, WebhookService, type WebhookServiceOptions } from './webhook-service';
export { WebhookUrlGuard } from './webhook-url';
export { EventPublisher, type EventPublisherOptions } from './event-publisher';
