import { createHash } from 'crypto';
import type { Configuration, CustomFetch } from 'openid-client';
import type { DestinationGuard } from '@shortlink/url-policy';
import { OidcClient, OidcError, OidcIdentity, OidcProvider } from '@shortlink/people-domain';

/** A fetch function as openid-client calls one (its customFetch). */
export type ProviderFetch = (
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; redirect?: string; signal?: AbortSignal | null },
) => Promise<Response>;

export interface OpenidOidcClientOptions {
  /** Each call to a provider (discovery, token, keys, userinfo) gives up after this long. */
  readonly timeoutMs: number;
  /** http:// issuers allowed (tests and closed networks only). */
  readonly allowInsecureIssuers: boolean;
  /** How long a discovered provider is reused before its metadata is read again (default 5 minutes). */
  readonly discoveryTtlMs?: number;
  /** Where the client may connect: each address a discovery document gives is checked with it (SsoAddresses). */
  readonly addresses: DestinationGuard;
  /** Every request to a provider goes through this: to the address `addresses` checked for it (PinnedHttpClient.fetch). */
  readonly fetch: ProviderFetch;
}

/** The addresses of a discovery document the client connects to, or sends a browser to. */
const ENDPOINTS = ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint'] as const;

/** openid-client ships as ES modules only: loaded when first needed (Node's require of ES modules). */
const openid = () => import('openid-client');

/** Errors of the network or of a timeout, anywhere in the cause chain: the provider did not answer. */
function isUnreachable(error: unknown): boolean {
  for (
    let e = error as { name?: string; message?: string; code?: string; cause?: unknown; status?: number } | undefined, depth = 0;
    e && depth < 6;
    e = e.cause as typeof e, depth++
  ) {
    if (e.name === 'AbortError' || e.name === 'TimeoutError') return true;
    if (e.name === 'TypeError' && /fetch failed/i.test(e.message ?? '')) return true;
    if (typeof e.code === 'string' && /^(E[A-Z]+|UND_ERR_.+)$/.test(e.code) && !e.code.startsWith('OAUTH_')) return true;
    if (typeof e.status === 'number' && e.status >= 500) return true;
  }
  return false;
}

/**
 * OIDC_CLIENT with openid-client (a certified relying party): the provider's metadata by discovery
 * (cached a few minutes per issuer and client), the authorization URL with PKCE (S256), state and
 * nonce, and the code exchange, whose ID token openid-client checks (signature by the provider's
 * keys, issuer, audience, expiry, nonce). The email comes from the ID token, or from userinfo when
 * the provider keeps it there. Every request goes through the pinned fetch (to an address checked
 * for it), and a discovery whose endpoints are not addresses SSO may reach is a failed discovery
 * (docs/design.md, "Single sign-on"); a start's discovery is bounded as a whole by `timeoutMs`.
 */
export class OpenidOidcClient implements OidcClient {
  private readonly discovered = new Map<string, { config: Promise<Configuration>; at: number }>();

  constructor(private readonly options: OpenidOidcClientOptions) {}

  async authorizationUrl(
    provider: OidcProvider,
    request: { readonly redirectUri: string; readonly state: string; readonly nonce: string; readonly codeChallenge: string },
  ): Promise<string> {
    // Loaded before the discovery's deadline starts: the first sign-in of a process spent it loading the module (over 2 s on a
    // busy machine), and the provider was said not to answer.
    const client = await openid();
    const config = await this.within(this.configOf(provider));
    return client
      .buildAuthorizationUrl(config, {
        redirect_uri: request.redirectUri,
        response_type: 'code',
        scope: 'openid email profile',
        state: request.state,
        nonce: request.nonce,
        code_challenge: request.codeChallenge,
        code_challenge_method: 'S256',
      })
      .toString();
  }

  async exchange(
    provider: OidcProvider,
    request: { readonly callbackUrl: URL; readonly redirectUri: string; readonly codeVerifier: string; readonly state: string; readonly nonce: string },
  ): Promise<OidcIdentity> {
    const config = await this.configOf(provider);
    const client = await openid();
    // The provider redirects to the registered URI: the code is checked against it, whatever host the request came in on.
    const current = new URL(request.redirectUri);
    current.search = request.callbackUrl.search;
    try {
      const tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: request.codeVerifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims()!;
      let email = typeof claims.email === 'string' ? claims.email : null;
      let verified = typeof claims.email_verified === 'boolean' ? claims.email_verified : null;
      if (email === null) {
        const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
        email = typeof info.email === 'string' ? info.email : null;
        verified = typeof info.email_verified === 'boolean' ? info.email_verified : null;
      }
      return { subject: claims.sub, email, emailVerified: verified };
    } catch (error) {
      if (isUnreachable(error)) throw new OidcError('unavailable', (error as Error).message, { cause: error });
      throw new OidcError('rejected', (error as Error).message, { cause: error });
    }
  }

  private async configOf(provider: OidcProvider): Promise<Configuration> {
    const key = createHash('sha256')
      .update(JSON.stringify([provider.issuer, provider.clientId, provider.clientSecret]))
      .digest('hex');
    const now = Date.now();
    const cached = this.discovered.get(key);
    if (cached && now - cached.at < (this.options.discoveryTtlMs ?? 300_000)) return cached.config;
    const config = this.discover(provider);
    this.discovered.set(key, { config, at: now });
    // A failed discovery is not kept: the next sign-in asks again.
    config.catch(() => this.discovered.delete(key));
    if (this.discovered.size > 1000) this.discovered.delete(this.discovered.keys().next().value!);
    return config;
  }

  private async discover(provider: OidcProvider): Promise<Configuration> {
    const client = await openid();
    const issuer = new URL(provider.issuer);
    const insecure = issuer.protocol === 'http:';
    if (insecure && !this.options.allowInsecureIssuers) throw new OidcError('unavailable', 'http issuers are not allowed (SSO_ALLOW_INSECURE_ISSUERS)');
    let config: Configuration;
    try {
      config = await client.discovery(issuer, provider.clientId, provider.clientSecret, client.ClientSecretPost(provider.clientSecret), {
        timeout: Math.max(1, Math.ceil(this.options.timeoutMs / 1000)),
        execute: insecure ? [client.allowInsecureRequests] : [],
        [client.customFetch]: this.options.fetch as CustomFetch,
      });
    } catch (error) {
      throw new OidcError('unavailable', `discovery of ${provider.issuer} failed: ${(error as Error).message}`, { cause: error });
    }
    const metadata = config.serverMetadata();
    await Promise.all(
      ENDPOINTS.map(async (name) => {
        const address = metadata[name];
        if (typeof address !== 'string') return;
        try {
          await this.options.addresses.resolve(address);
        } catch (error) {
          throw new OidcError('unavailable', `the ${name} of ${provider.issuer} is not an address single sign-on may reach`, { cause: error });
        }
      }),
    );
    return config;
  }

  /** A start's discovery as a whole (its DNS, its request, the checks of its endpoints) within `timeoutMs`. */
  private async within<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new OidcError('unavailable', `the provider did not answer within ${this.options.timeoutMs} ms`)), this.options.timeoutMs);
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
