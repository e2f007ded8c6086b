import { createServer, Server } from 'http';
import { AddressInfo, Socket } from 'net';
import { DomainError, ErrorCode } from '@shortlink/core';
import type { CheckedDestination, DestinationGuard } from '@shortlink/url-policy';
import { OidcError } from '@shortlink/people-domain';
import { PinnedHttpClient } from '@shortlink/url-safety';
import { OpenidOidcClient } from '@shortlink/oidc';

/**
 * The OIDC client as the oidc port composes it (openid-client over the pinned HTTP client), against a discovery document served on 127.0.0.1 under a name that exists nowhere
 * (idp.example.com): reaching it proves the connection went to the address the guard answered.
 * The guard stands for SsoAddresses' verdicts: idp.example.com is allowed, every other host refused.
 */
describe('OpenidOidcClient', () => {
  let server: Server;
  let port: number;
  const requests: string[] = [];
  const sockets: Socket[] = [];
  let endpoints: Record<string, string> = {};

  const guard: DestinationGuard = {
    async resolve(raw: string): Promise<CheckedDestination> {
      const url = new URL(raw);
      if (url.hostname !== 'idp.example.com')
        throw new DomainError(ErrorCode.URL_NOT_ALLOWED, `${url.hostname} is a non-public address`, { reason: 'private-address' });
      return { url, addresses: ['127.0.0.1'] };
    },
  };
  const issuer = () => `http://idp.example.com:${port}`;
  const client = () =>
    new OpenidOidcClient({
      timeoutMs: 2000,
      allowInsecureIssuers: true,
      addresses: guard,
      fetch: new PinnedHttpClient(guard, { timeoutMs: 2000, maxAnswerBytes: 64 * 1024, userAgent: 'test' }).fetch,
    });
  const request = {
    redirectUri: 'https://links.example/api/v1/auth/sso/callback',
    state: 's'.repeat(43),
    nonce: 'n'.repeat(43),
    codeChallenge: 'c'.repeat(43),
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(`${req.headers.host} ${req.url}`);
      if (req.url !== '/.well-known/openid-configuration') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          issuer: issuer(),
          authorization_endpoint: `${issuer()}/authorize`,
          token_endpoint: `${issuer()}/token`,
          jwks_uri: `${issuer()}/jwks`,
          response_types_supported: ['code'],
          ...endpoints,
        }),
      );
    });
    server.on('connection', (s) => sockets.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('discovers through the pinned connection and builds the authorization URL', async () => {
    endpoints = {};
    const url = new URL(await client().authorizationUrl({ issuer: issuer(), clientId: 'c1', clientSecret: 's1' }, request));
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer()}/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(requests).toContain(`idp.example.com:${port} /.well-known/openid-configuration`);
  });

  it('refuses a discovery whose endpoints lead anywhere single sign-on may not reach, without connecting there', async () => {
    for (const [name, address] of [
      ['token_endpoint', 'http://169.254.169.254/latest/meta-data'],
      ['jwks_uri', 'http://[::ffff:0:7f00:1]:9000/keys'],
      ['userinfo_endpoint', 'http://intranet.example.com/userinfo'],
      ['authorization_endpoint', 'http://10.0.0.1/authorize'],
    ]) {
      endpoints = { [name]: address };
      const failed = await client()
        .authorizationUrl({ issuer: issuer(), clientId: `c-${name}`, clientSecret: 's1' }, request)
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(failed).toBeInstanceOf(OidcError);
      expect([name, (failed as OidcError).kind, (failed as OidcError).message]).toEqual([name, 'unavailable', expect.stringContaining(name)]);
    }
  });

  it('refuses an issuer the guard refuses before any connection', async () => {
    const before = requests.length;
    const failed = await client()
      .authorizationUrl({ issuer: `http://127.0.0.1:${port}`, clientId: 'c2', clientSecret: 's1' }, request)
      .then(
        () => null,
        (error: unknown) => error as OidcError,
      );
    expect(failed?.kind).toBe('unavailable');
    expect(requests.length).toBe(before);
  });
});
