export { DnsHostResolver } from './dns-host-resolver';
export { FileDomainBlockList } from './file-domain-block-list';
export { PinnedWebhookTransport } from './pinned-webhook-transport';
