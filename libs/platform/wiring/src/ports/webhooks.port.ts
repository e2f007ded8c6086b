import { WEBHOOK_TRANSPORT, WEBHOOK_URL_GUARD, WebhookUrlGuard } from '@shortlink/webhooks-domain';
import { DnsHostResolver, PinnedWebhookTransport } from '@shortlink/url-safety';
import { portSpec } from '../port';

/**
 * The webhook URL guard (the system resolver, always: the DNS check of webhook URLs does not
 * depend on URL_DNS_CHECK) and the transport that connects to the address it checked
 * (docs/design.md, "Webhooks"). WEBHOOK_ALLOW_PRIVATE lets both reach private addresses.
 */
export const webhooksPort = portSpec({
  name: 'webhook-transport',
  open: (config) => {
    const guard = new WebhookUrlGuard(new DnsHostResolver(config.links.urlSafety.dnsTimeoutMs), config.webhooks.allowPrivate);
    return { guard, transport: new PinnedWebhookTransport(guard, config.webhooks.timeoutMs) };
  },
  provides: [
    [WEBHOOK_URL_GUARD, (w) => w.guard],
    [WEBHOOK_TRANSPORT, (w) => w.transport],
  ],
});
