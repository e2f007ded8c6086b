import { OpenidOidcClient } from '@shortlink/oidc';
import { OIDC_CLIENT } from '@shortlink/people-domain';
import { itself, portSpec } from '../port';

/** Single sign-on: the OpenID Connect relying party (openid-client), on both profiles; the providers are the tenants' own. */
export const oidcPort = portSpec({
  name: 'oidc',
  open: (config) => new OpenidOidcClient({ timeoutMs: config.people.sso.timeoutMs, allowInsecureIssuers: config.people.sso.allowInsecureIssuers }),
  provides: [[OIDC_CLIENT, itself]],
});
