// The webhooks context's API and deliverer (docs/design.md, "Webhooks").
export { DomainWebhookEvents } from './domain-webhook-events';
export { LinkWebhookEvents } from './link-webhook-events';
export { WEBHOOK_DELIVERY_PORTS, WebhookDeliveryModule, WEBHOOKS_PORTS, WebhooksModule } from './webhooks.module';
