export { describeWebhookStoreContract } from './webhook-store.contract';
