export { DnsHostResolver } from './dns-host-resolver';
export { FileDomainBlockList } from './file-domain-block-list';
export { type PinnedAnswer, PinnedHttpClient, type PinnedHttpClientOptions, type PinnedRequest } from './pinned-http-client';
export { PinnedWebhookTransport } from './pinned-webhook-transport';
