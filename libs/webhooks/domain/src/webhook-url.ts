import { DomainError, ErrorCode } from '@shortlink/core';
import { checkedAddressesOf, CheckedDestination, DestinationGuard, HostResolver, MAX_URL_LENGTH } from '@shortlink/url-policy';

const refuse = (reason: string, detail: string) => new DomainError(ErrorCode.URL_NOT_ALLOWED, detail, { reason, field: 'url' });

/**
 * The SSRF guard of webhook URLs (docs/design.md, "Webhooks"), at creation and before every
 * attempt: http(s), no credentials, and every address the host resolves to is public, unless
 * WEBHOOK_ALLOW_PRIVATE=true (tests, private deployments). `resolve` answers the addresses it
 * checked: the transport connects to one of those, so DNS cannot switch it after the check.
 */
export class WebhookUrlGuard implements DestinationGuard {
  constructor(
    private readonly resolver: HostResolver,
    private readonly allowPrivate: boolean,
  ) {}

  /** The URL normalised, or a 400 INVALID_URL / URL_NOT_ALLOWED. */
  parse(raw: string): URL {
    if (/[\u0000-\u001f\u007f]/.test(raw)) throw refuse('control-characters', 'url contains control characters');
    let url: URL;
    try {
      url = new URL(raw.trim());
    } catch {
      throw new DomainError(ErrorCode.INVALID_URL, 'url is not an absolute URL', { field: 'url' });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DomainError(ErrorCode.INVALID_URL, 'url must be http or https', { field: 'url' });
    if (url.username || url.password) throw refuse('credentials', 'url: embedded credentials are not accepted; authenticate with the signature');
    if (url.toString().length > MAX_URL_LENGTH)
      throw new DomainError(ErrorCode.INVALID_URL, `url is longer than ${MAX_URL_LENGTH} characters`, { field: 'url' });
    return url;
  }

  /** The checked addresses of the URL's host (a literal address is its own). */
  async resolve(raw: string): Promise<CheckedDestination> {
    const url = this.parse(raw);
    const addresses = await checkedAddressesOf(url, this.resolver, {
      allowPrivate: this.allowPrivate,
      field: 'url',
      privateHint: 'WEBHOOK_ALLOW_PRIVATE=true allows it',
    });
    return { url, addresses };
  }
}
