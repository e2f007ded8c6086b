import { request } from 'http';
import { createServer, Server, Socket } from 'net';
import { eventually } from '@shortlink/harness';
import { DnsResponder } from '@shortlink/testing';
import { API_KEY, BROWSER_UA } from './support';
import { api } from './tenant-journey';
import { Receiver } from './webhooks-journey';

/**
 * The settings every app of a domains journey runs with (docs/design.md, "Custom domains and TLS"):
 * the checks ask `dns` (a name server of the test's own) and connect to `front` for the HTTP token;
 * checks and re-checks come every few hundred milliseconds; two failed re-checks unverify a domain.
 */
/**
 * How long the journey waits for a check's outcome: a check an instance took and did not store
 * holds its domain for the check lease (4 × DOMAIN_CHECK_TIMEOUT_MS + 10 s), then any instance
 * takes it again (docs/design.md, "Custom domains and TLS"); on a loaded CI machine one check
 * was seen not to land within 30 s. Two leases and the backoff.
 */
const CHECKED_WITHIN_MS = 80_000;

export function domainsEnv(dns: DnsResponder, front: PortForward): Record<string, string> {
  return {
    DOMAIN_VERIFIER: 'on',
    DOMAIN_DNS_RESOLVER: dns.address,
    DOMAIN_HTTP_CHECK_PORT: String(front.port),
    DOMAIN_CHECK_ALLOW_PRIVATE: 'on',
    // A check that gets no answer in time is not conclusive: on a loaded machine the journey's name
    // server (in the test process) answered later than 1 s and a removed record was never counted.
    DOMAIN_CHECK_TIMEOUT_MS: '5000',
    DOMAIN_VERIFIER_INTERVAL_MS: '200',
    DOMAIN_FIRST_CHECK_MS: '0',
    DOMAIN_CHECK_BACKOFF_MS: '300',
    DOMAIN_CHECK_BACKOFF_MAX_MS: '1000',
    DOMAIN_RECHECK_INTERVAL_MS: '1000',
    DOMAIN_UNVERIFY_AFTER_FAILURES: '2',
    // The journey's free tenant polls its domains' state every 200 ms: on a slow machine the free
    // plan's 100 requests a minute ran out mid-wait and every answer after was 429.
    PLAN_FREE_REQUESTS_PER_MINUTE: '6000',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_BASE_MS: '200',
    WEBHOOK_RETRY_MAX_MS: '1000',
  };
}

/**
 * The plain-HTTP side of the TLS front, as the HTTP check meets it in production (Caddy's port 80
 * passing the challenge path to the redirect): a TCP forward to the redirect, on a port known
 * before the apps start, since the generation app is told it at boot.
 */
export class PortForward {
  private target: { host: string; port: number } | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<PortForward> {
    // Connections arrive only after listen, once `forward` is set.
    const server = createServer((client) => forward.pipe(client));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const forward = new PortForward(server, (server.address() as { port: number }).port);
    return forward;
  }

  /** Where connections go from now on (the redirect, once it runs). */
  to(base: string): void {
    const url = new URL(base);
    this.target = { host: url.hostname, port: Number(url.port) };
  }

  private pipe(client: Socket): void {
    if (!this.target) return void client.destroy();
    const upstream = new Socket();
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => (s === client ? upstream : client).destroy());
    }
    upstream.connect(this.target.port, this.target.host, () => client.pipe(upstream).pipe(client));
  }

  stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const PROBLEM = /^application\/problem\+json(; charset=utf-8)?$/;

/** A request on `base` with `host` as its Host (fetch cannot set it). */
export function onHost(
  base: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, path, headers: { host, 'user-agent': BROWSER_UA, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

export interface DomainsJourneyApps {
  readonly generation: string;
  readonly redirect: string;
  /** The redirect's operator listener (/internal/tls-allowed). */
  readonly redirectAdmin: string;
  readonly dns: DnsResponder;
}

/**
 * A tenant proves a domain of its own, over HTTP, on a profile (docs/design.md, "Custom domains and
 * TLS"): it adds the domain, creates the TXT record the answer names, the verifier (in every
 * generation instance the profile runs) finds it, the tenant is told by webhook, links go on the
 * domain and the redirect serves them by Host, the TLS front may get a certificate; a second domain
 * is proven by the HTTP token the redirect serves itself; re-checks find a record gone and unverify
 * its domain. The apps run with `domainsEnv`.
 */
export function describeDomainsJourney(apps: () => DomainsJourneyApps) {
  describe('custom domains: ownership proven, re-checked, lost', () => {
    // Each test waits for up to three checks' outcomes (CHECKED_WITHIN_MS each).
    jest.setTimeout(3 * CHECKED_WITHIN_MS + 30_000);
    const stamp = Date.now().toString(36);
    const first = `go-${stamp}.acme.test`;
    const second = `links-${stamp}.acme.test`;
    const receiver = new Receiver();
    let key: string;
    let record: { name: string; value: string };
    let code: string;

    const gen = () => apps().generation;
    const ownership = async (domain: string) => (await api(gen(), 'GET', `/api/v1/domains/${domain}/ownership`, key)).body;
    const tlsAllowed = async (domain: string) => (await fetch(`${apps().redirectAdmin}/internal/tls-allowed?domain=${domain}`)).status;
    /**
     * A link on a domain just verified: an instance that did not run the check learns the status at its
     * next refresh of the tenants' domains (REDIRECT_TENANT_REFRESH_MS), so a create may be refused
     * DOMAIN_NOT_VERIFIED until then (nothing is created by a refusal); any other answer is returned.
     */
    const createOnDomain = (apiKey: string, body: { url: string; domain: string }) =>
      eventually('a link on the verified domain', async () => {
        const made = await api(gen(), 'POST', '/api/v1/links', apiKey, body);
        return made.body?.code === 'DOMAIN_NOT_VERIFIED' ? false : made;
      });
    const newTenant = async (plan: 'free' | 'paid') =>
      (await api(gen(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: `domains-${plan}-${stamp}`, plan })).body.apiKey as string;

    beforeAll(async () => {
      await receiver.start();
      key = await newTenant('free');
      const hook = await api(gen(), 'POST', '/api/v1/webhooks', key, { url: receiver.url, events: ['domain.verified', 'domain.unverified'] });
      expect(hook.status).toBe(201);
      receiver.secrets = [hook.body.secret];
    });
    afterAll(() => receiver.stop());

    it('adds a domain pending, with the record that proves it; it carries no link, serves nothing but its token, gets no certificate', async () => {
      const added = await api(gen(), 'POST', '/api/v1/domains', key, { domain: first });
      expect(added.status).toBe(201);
      expect(added.body).toMatchObject({ domain: first, status: 'pending', records: { txt: { name: `_shortlink-challenge.${first}` }, http: {} } });
      record = added.body.records.txt;
      const token = added.body.records.http.body as string;
      expect(added.body.records.http.url).toBe(`http://${first}/.well-known/shortlink-challenge/${token}`);

      const refused = await api(gen(), 'POST', '/api/v1/links', key, { url: 'https://example.com/custom-domain', domain: first });
      expect([refused.status, refused.headers.get('content-type'), refused.body.code]).toEqual([409, expect.stringMatching(PROBLEM), 'DOMAIN_NOT_VERIFIED']);
      // The redirect learns the domain within REDIRECT_TENANT_REFRESH_MS: its token, on its own host; nothing else there.
      await eventually(
        'the redirect serves the token',
        async () => (await onHost(apps().redirect, `/.well-known/shortlink-challenge/${token}`, first)).body === token,
      );
      expect((await onHost(apps().redirect, '/anything', first)).status).toBe(404);
      expect(await tlsAllowed(first)).toBe(403);
      // The free plan holds one domain.
      expect((await api(gen(), 'POST', '/api/v1/domains', key, { domain: second })).body.code).toBe('DOMAIN_LIMIT_REACHED');
    });

    it('is verified by the verifier once its TXT record is there: the tenant is told once, links go on it and the redirect serves them', async () => {
      // No record yet: the verifier's checks fail and say why.
      await eventually('a failed check', async () => (await ownership(first)).failures >= 1, CHECKED_WITHIN_MS);
      expect((await ownership(first)).lastFailure).toContain(`no TXT record _shortlink-challenge.${first}`);
      apps().dns.setTxt(record.name, [record.value]);
      const verified = await eventually(
        'the domain verified',
        async () => {
          const state = await ownership(first);
          return state.status === 'verified' && state;
        },
        CHECKED_WITHIN_MS,
      );
      expect(verified).toMatchObject({ verifiedBy: 'dns', failures: 0, lastFailure: null });
      const made = await createOnDomain(key, { url: 'https://example.com/custom-domain', domain: first });
      expect(made.status).toBe(201);
      code = made.body.code;
      expect(made.body.shortUrl).toBe(`https://${first}/${code}`); // a tenant's domain is served over HTTPS (its certificate from the front)
      await eventually('the redirect serves the domain', async () => (await onHost(apps().redirect, `/${code}`, first)).status === 302);
      expect((await onHost(apps().redirect, `/${code}`, first)).headers.location).toBe('https://example.com/custom-domain');
      await eventually('the front may get a certificate', async () => (await tlsAllowed(first)) === 200);
      const told = await eventually('the webhook', async () => receiver.of('domain.verified').length > 0 && receiver.of('domain.verified'));
      expect(told[0][1].data).toMatchObject({ domain: { name: first, status: 'verified', verifiedBy: 'dns' } });
      // Checked again since (re-checks every second here): still one event, one entry, whatever instance checked.
      await eventually('a re-check', async () => Date.parse((await ownership(first)).checkedAt) > Date.parse(verified.checkedAt), CHECKED_WITHIN_MS);
      expect(receiver.of('domain.verified')).toHaveLength(1);
      const entries = (await api(gen(), 'GET', '/api/v1/audit-log?action=domain', key)).body.entries as Array<{ action: string; actor: { type: string } }>;
      expect(entries.map((e) => `${e.action} ${e.actor.type}`)).toEqual(['domain.verified system', 'domain.added key']);
    });

    it('proves a domain by the HTTP token the redirect serves for it', async () => {
      const other = await newTenant('paid');
      apps().dns.setAddress(second, '127.0.0.1');
      const added = await api(gen(), 'POST', '/api/v1/domains', other, { domain: second });
      expect(added.status).toBe(201);
      // No TXT record: the check reaches the redirect through the front's port, which answers the token.
      const verified = await eventually(
        'the domain verified by HTTP',
        async () => {
          const state = (await api(gen(), 'GET', `/api/v1/domains/${second}/ownership`, other)).body;
          return state.status === 'verified' && state;
        },
        CHECKED_WITHIN_MS,
      );
      expect(verified.verifiedBy).toBe('http');
      const made = await createOnDomain(other, { url: 'https://example.com/by-http', domain: second });
      expect(made.status).toBe(201);
      await eventually('served', async () => (await onHost(apps().redirect, `/${made.body.code}`, second)).headers.location === 'https://example.com/by-http');
      // Conversion tracking for every link of the domain (docs/analytics.md, "Conversions"): each click a click id, which a lead then reports.
      const tracking = await api(gen(), 'PATCH', `/api/v1/domains/${second}`, other, { trackConversions: true });
      expect(tracking.body).toMatchObject({ trackConversions: true, conversionParam: 'sl_cid' });
      const clickId = await eventually('the redirect passes a click id', async () => {
        const answer = await onHost(apps().redirect, `/${made.body.code}`, second);
        const location = new URL(String(answer.headers.location));
        return (
          location.origin + location.pathname === 'https://example.com/by-http' &&
          answer.headers['cache-control'] === 'private, no-store' &&
          location.searchParams.get('sl_cid')
        );
      });
      const lead = await api(gen(), 'POST', '/api/v1/track/lead', other, { clickId, eventName: 'Sign up', customerId: `dom-${stamp}` });
      expect(lead.status).toBe(201);
      expect(lead.body).toMatchObject({ event: { link: { domain: second, code: made.body.code } } });
      expect((await api(gen(), 'PATCH', `/api/v1/domains/${second}`, other, { trackConversions: false })).status).toBe(200);
      await eventually(
        'no click id once it is off',
        async () => (await onHost(apps().redirect, `/${made.body.code}`, second)).headers.location === 'https://example.com/by-http',
      );
    });

    it('flags a domain whose record is gone: unverified after the re-checks, the tenant told, nothing served; verified again once it is back', async () => {
      apps().dns.setTxt(record.name, []);
      const lost = await eventually(
        'the domain unverified',
        async () => {
          const state = await ownership(first);
          return state.status === 'unverified' && state;
        },
        2 * CHECKED_WITHIN_MS,
      );
      expect(lost).toMatchObject({ failures: 2, lastFailure: expect.stringContaining('no TXT record') });
      const told = await eventually('the webhook', async () => receiver.of('domain.unverified').length > 0 && receiver.of('domain.unverified'));
      expect(told[0][1].data).toMatchObject({ domain: { name: first, status: 'unverified' } });
      await eventually('nothing served', async () => (await onHost(apps().redirect, `/${code}`, first)).status === 404);
      // The same refresh tells the redirect's TLS answer and every generation instance.
      await eventually('no certificate for it', async () => (await tlsAllowed(first)) === 403);
      await eventually(
        'no link on it',
        async () => (await api(gen(), 'POST', '/api/v1/links', key, { url: 'https://example.com/x', domain: first })).body.code === 'DOMAIN_NOT_VERIFIED',
      );
      const actions = (await api(gen(), 'GET', '/api/v1/audit-log?action=domain.unverified', key)).body.entries as Array<{ actor: { type: string } }>;
      expect(actions.map((e) => e.actor.type)).toEqual(['system']);
      // The record back: retried with backoff, verified again, served again.
      apps().dns.setTxt(record.name, [record.value]);
      await eventually('verified again', async () => (await ownership(first)).status === 'verified', CHECKED_WITHIN_MS);
      await eventually('served again', async () => (await onHost(apps().redirect, `/${code}`, first)).status === 302);
      // The second domain.verified is delivered after the status changed (the webhook deliverer's own pace).
      await eventually('the second domain.verified delivered', async () => receiver.of('domain.verified').length >= 2);
      expect(receiver.of('domain.verified')).toHaveLength(2);
    });

    it('answers bad input with problem+json and stable codes', async () => {
      const cases: Array<[string, string, unknown, number, string]> = [
        ['POST', '/api/v1/domains', { domain: 'https://go.acme.test/x' }, 400, 'VALIDATION_FAILED'],
        ['POST', '/api/v1/domains', { domain: first, more: true }, 400, 'VALIDATION_FAILED'],
        ['POST', '/api/v1/domains', 'not json', 400, 'VALIDATION_FAILED'],
        ['POST', `/api/v1/domains/${second}/ownership/check`, undefined, 404, 'DOMAIN_NOT_FOUND'],
        ['GET', '/api/v1/domains/nobody.acme.test/ownership', undefined, 404, 'DOMAIN_NOT_FOUND'],
        ['DELETE', `/api/v1/domains/${second}`, undefined, 404, 'DOMAIN_NOT_FOUND'],
      ];
      for (const [method, path, body, status, code] of cases) {
        const res = await api(gen(), method as 'POST', path, key, body);
        expect({ method, path, status: res.status, type: res.headers.get('content-type'), code: res.body.code }).toEqual({
          method,
          path,
          status,
          type: expect.stringMatching(PROBLEM),
          code,
        });
      }
      const noDomain = await fetch(`${apps().redirectAdmin}/internal/tls-allowed`);
      expect([noDomain.status, noDomain.headers.get('content-type'), ((await noDomain.json()) as { code: string }).code]).toEqual([
        400,
        expect.stringMatching(PROBLEM),
        'VALIDATION_FAILED',
      ]);
    });
  });
}
