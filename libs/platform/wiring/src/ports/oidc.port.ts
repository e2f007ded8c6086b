import { UrlPolicy } from '@shortlink/url-policy';
import { OpenidOidcClient } from '@shortlink/oidc';
import { OIDC_CLIENT, SSO_ADDRESSES, SsoAddresses } from '@shortlink/people-domain';
import { DnsHostResolver, PinnedHttpClient } from '@shortlink/url-safety';
import { portSpec } from '../port';

/** A provider's answer (a discovery document, keys, tokens) is read up to this many bytes. */
const MAX_PROVIDER_ANSWER_BYTES = 1024 * 1024;

/**
 * Single sign-on: the OpenID Connect relying party (openid-client), on both profiles; the providers
 * are the tenants' own, so every address it reaches is checked first (SsoAddresses: the URL
 * policy's host rules, public addresses only, the system resolver always) and connected to as
 * checked (PinnedHttpClient, the webhooks' transport). SSO_ALLOW_INSECURE_ISSUERS lets tests use
 * http providers on 127.0.0.1.
 */
export const oidcPort = portSpec({
  name: 'oidc',
  open: (config) => {
    const sso = config.people.sso;
    const addresses = new SsoAddresses(new DnsHostResolver(config.links.urlSafety.dnsTimeoutMs), new UrlPolicy({ shortDomains: config.links.domains }), {
      allowInsecure: sso.allowInsecureIssuers,
    });
    const http = new PinnedHttpClient(addresses, { timeoutMs: sso.timeoutMs, maxAnswerBytes: MAX_PROVIDER_ANSWER_BYTES, userAgent: 'shortlink-sso/1' });
    const client = new OpenidOidcClient({ timeoutMs: sso.timeoutMs, allowInsecureIssuers: sso.allowInsecureIssuers, addresses, fetch: http.fetch });
    return { addresses, client };
  },
  provides: [
    [OIDC_CLIENT, (oidc) => oidc.client],
    [SSO_ADDRESSES, (oidc) => oidc.addresses],
  ],
});
