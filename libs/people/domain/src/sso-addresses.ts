import { DomainError, ErrorCode } from '@shortlink/core';
import { checkedAddressesOf, CheckedDestination, DestinationGuard, HostResolver, UrlPolicy } from '@shortlink/url-policy';

/** The SsoAddresses of the app: SsoService checks issuers with it, the OIDC client every address discovery gives. */
export const SSO_ADDRESSES = Symbol('SSO_ADDRESSES');

const invalid = (field: string, message: string) => new DomainError(ErrorCode.VALIDATION_FAILED, message, { field });

/**
 * Where single sign-on may connect (docs/design.md, "Single sign-on"): a provider's issuer and each
 * address its discovery document gives (authorization, token, keys, userinfo) must be https, pass
 * the URL policy's host rules (no IP literal in any spelling, no local or internal name, none of our
 * domains) and resolve to public addresses only (isPublicAddress: `::ffff:0:7f00:1` is 127.0.0.1);
 * the connection then goes to the address checked (the pinned HTTP client), never to a fresh
 * lookup. SSO_ALLOW_INSECURE_ISSUERS (tests, closed networks) allows http, literals and internal
 * addresses; the lookup is pinned all the same.
 */
export class SsoAddresses implements DestinationGuard {
  constructor(
    private readonly resolver: HostResolver,
    /** The URL policy's host rules (its `inspect`: no DNS). */
    private readonly policy: Pick<UrlPolicy, 'inspect'>,
    private readonly options: { readonly allowInsecure: boolean },
  ) {}

  /** The URL, checked without DNS: 400 VALIDATION_FAILED for a scheme or credentials, the URL policy's refusals for the host. */
  parse(raw: unknown, field = 'issuer'): URL {
    let url: URL;
    try {
      url = new URL(typeof raw === 'string' ? raw.trim() : '');
    } catch {
      throw invalid(field, `${field} must be an https URL, such as https://accounts.example.com`);
    }
    const insecure = url.protocol === 'http:';
    if ((url.protocol !== 'https:' && !insecure) || url.username || url.password) throw invalid(field, `${field} must be an https URL without credentials`);
    if (insecure && !this.options.allowInsecure) throw invalid(field, `${field} must be https (SSO_ALLOW_INSECURE_ISSUERS allows http for tests)`);
    if (!this.options.allowInsecure) {
      try {
        this.policy.inspect(url.href, field);
      } catch (error) {
        // The policy's refusal, naming the field as every refusal of a request does.
        if (error instanceof DomainError) throw new DomainError(error.code, error.message, { ...error.details, field });
        throw error;
      }
    }
    return url;
  }

  /** The URL checked, its host resolved once and each address checked: connect to one of these. */
  async resolve(raw: string, field = 'issuer'): Promise<CheckedDestination> {
    const url = this.parse(raw, field);
    const addresses = await checkedAddressesOf(url, this.resolver, {
      allowPrivate: this.options.allowInsecure,
      field,
      privateHint: 'SSO_ALLOW_INSECURE_ISSUERS=true allows it for tests',
    });
    return { url, addresses };
  }
}
