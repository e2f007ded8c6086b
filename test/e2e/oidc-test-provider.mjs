// A real OpenID provider for the SSO e2e tests (sso-journey.ts): oidc-provider, a certified
// implementation, on 127.0.0.1 with its development interactions (a login form taking any
// password, then a consent form). The account id is the email typed at login. Configured by
// environment: OIDC_PORT, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI. Prints READY.
import Provider from 'oidc-provider';

const port = Number(process.env.OIDC_PORT);
const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: process.env.OIDC_CLIENT_ID,
      client_secret: process.env.OIDC_CLIENT_SECRET,
      redirect_uris: [process.env.OIDC_REDIRECT_URI],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ],
  claims: { openid: ['sub'], email: ['email', 'email_verified'] },
  // The email in the ID token itself (not only at userinfo).
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  cookies: { keys: ['sso-e2e-cookie-key'] },
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, email: id, email_verified: !id.startsWith('unverified') }) }),
  features: { devInteractions: { enabled: true } },
});
// The dev interactions warn on every start; the test reads stdout only.
provider.listen(port, '127.0.0.1', () => process.stdout.write('READY\n'));
