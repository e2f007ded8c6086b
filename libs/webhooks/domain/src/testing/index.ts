export { InMemoryWebhookStore } from './in-memory-webhook-store';
