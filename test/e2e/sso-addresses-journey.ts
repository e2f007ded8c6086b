import { readFileSync } from 'fs';
import { AddressInfo, createServer, isIP, Server, Socket } from 'net';
import { freePort } from '@shortlink/harness';
import { isPublicAddress } from '@shortlink/url-policy';
import { API_KEY } from './support';
import { api } from './tenant-journey';

/** Puts an issuer into a tenant's SSO settings in the database itself, past the API's checks (a row stored before them, or an operator's hand). */
export type IssuerWriter = (tenantId: string, issuer: string) => Promise<void>;

/** SSO_TIMEOUT_SECONDS of the apps this journey runs against: no failed start is answered sooner. */
export const SSO_ADDRESS_TIMEOUT_SECONDS = 2;
/**
 * The apps of this journey: no SSO_ALLOW_INSECURE_ISSUERS; the proxy on 127.0.0.1 believed, so
 * each start says which client it is (X-Forwarded-For); small start caps.
 */
export const SSO_ADDRESS_ENV = {
  SSO_TIMEOUT_SECONDS: String(SSO_ADDRESS_TIMEOUT_SECONDS),
  SSO_STARTS_PER_MINUTE_PER_ADDRESS: '4',
  SSO_STARTS_PER_MINUTE_PER_TENANT: '6',
  TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
};

/** A TCP port on 127.0.0.1 that accepts and never answers (an internal service), counting the connections it gets. */
async function countingListener(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((s) => sockets.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => sockets.length,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** The names this machine's /etc/hosts gives a non-public address (localhost's aliases, an internal mirror): what DNS would answer for them. */
function internalHostNames(): Array<{ name: string; address: string }> {
  let text = '';
  try {
    text = readFileSync('/etc/hosts', 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim().split(/\s+/))
    .filter(([address, ...names]) => isIP(address ?? '') && names.length && !isPublicAddress(address))
    .flatMap(([address, ...names]) => names.map((name) => ({ name: name.toLowerCase(), address })))
    .filter(({ name }) => name !== 'localhost');
}

/**
 * Single sign-on never reaches inside (docs/design.md, "Single sign-on"): PUT /api/v1/sso refuses issuers at internal
 * addresses in every spelling, and names that resolve there; an anonymous start against an issuer
 * that is internal all the same (written into the database past the API) makes no connection and
 * answers exactly as a closed port does, no sooner than SSO_TIMEOUT_SECONDS; starts are capped per
 * client address and per tenant. `base` is a generation app started with SSO_ADDRESS_ENV.
 */
export function describeSsoAddressJourney(base: () => string, writeIssuer: () => IssuerWriter) {
  describe('single sign-on reaches public providers only', () => {
    let tenantId: string;
    let tenantKey: string;
    let client = 0;
    // The caps' windows may be shared with an earlier run (Redis): this run's client addresses are its own.
    const run = 1 + Math.floor(Math.random() * 250);
    /** A start as a browser makes it, from a client address of its own (the caps are the last test's). */
    const start = async (tenant: string, from = `198.18.${run}.${++client}`) => {
      const began = Date.now();
      const res = await fetch(`${base()}/api/v1/auth/sso/${tenant}/start`, { redirect: 'manual', headers: { 'x-forwarded-for': from } });
      const text = await res.text();
      return { status: res.status, type: res.headers.get('content-type'), retryAfter: res.headers.get('retry-after'), text, ms: Date.now() - began };
    };
    const settings = { clientId: 'shortlink', clientSecret: 'a client secret', allowedDomains: ['example.com'] };

    beforeAll(async () => {
      const created = await api(base(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: 'SSO addresses', plan: 'paid' });
      expect(created.status).toBe(201);
      tenantId = created.body.tenant.id;
      tenantKey = created.body.apiKey;
    });

    it('refuses issuers at internal addresses on PUT /api/v1/sso (400 URL_NOT_ALLOWED), in every spelling, and names that resolve there', async () => {
      const listener = await countingListener();
      const port = listener.port;
      try {
        const issuers = [
          `https://127.0.0.1:${port}`,
          `https://localhost:${port}`,
          `https://LocalHost.:${port}`,
          `https://[::1]:${port}`,
          'https://169.254.169.254',
          'https://10.0.0.1',
          `https://[::7f00:1]:${port}`,
          `https://[::ffff:0:7f00:1]:${port}`,
          `https://[::ffff:127.0.0.1]:${port}`,
          `https://[64:ff9b::a9fe:a9fe]`,
          `https://2130706433:${port}`,
          `https://0x7f.1:${port}`,
          'https://idp.internal',
          ...internalHostNames().map(({ name }) => `https://${name}:${port}`),
        ];
        const verdicts: string[] = [];
        for (const issuer of issuers) {
          const put = await api(base(), 'PUT', '/api/v1/sso', tenantKey, { ...settings, issuer });
          verdicts.push(`${issuer} ${put.status} ${put.body.code} ${put.body.field} ${put.headers.get('content-type')?.split(';')[0]}`);
        }
        expect(verdicts).toEqual(issuers.map((issuer) => `${issuer} 400 URL_NOT_ALLOWED issuer application/problem+json`));
        // A dotted name of /etc/hosts passes the host rules and is refused for what it resolves to.
        for (const { name } of internalHostNames().filter((h) => h.name.includes('.'))) {
          const put = await api(base(), 'PUT', '/api/v1/sso', tenantKey, { ...settings, issuer: `https://${name}` });
          expect([name, put.body.reason]).toEqual([name, 'private-address']);
        }
        expect((await api(base(), 'GET', '/api/v1/sso', tenantKey)).body.code).toBe('SSO_NOT_CONFIGURED');
        expect(listener.connections()).toBe(0);
      } finally {
        await listener.close();
      }
    });

    it('answers an anonymous start against an internal issuer (stored past the API) as a closed port, and connects nowhere', async () => {
      const listener = await countingListener();
      const closedPort = await freePort();
      const answers: Array<{ issuer: string; status: number; type: string | null; retryAfter: string | null; text: string; ms: number }> = [];
      try {
        for (const issuer of [
          `https://127.0.0.1:${listener.port}`,
          `https://localhost:${listener.port}`,
          `https://[::ffff:0:7f00:1]:${listener.port}`,
          `https://127.0.0.1:${closedPort}`,
          `http://127.0.0.1:${listener.port}`,
        ]) {
          await writeIssuer()(tenantId, issuer);
          answers.push({ issuer, ...(await start(tenantId)) });
        }
        expect(listener.connections()).toBe(0);
      } finally {
        await listener.close();
      }
      // One answer for an open port, a closed one and a refused address: status, headers and body alike.
      const [first] = answers;
      expect(first.status).toBe(503);
      expect(first.type).toContain('application/problem+json');
      expect(JSON.parse(first.text)).toMatchObject({ code: 'SSO_PROVIDER_UNAVAILABLE', detail: 'the sign-in provider could not be reached; try again later' });
      for (const answer of answers) expect({ ...answer, issuer: first.issuer, ms: 0 }).toEqual({ ...first, ms: 0 });
      // And no sooner than SSO_TIMEOUT_SECONDS, however quickly each failed (a refused address or a closed port: at once).
      for (const answer of answers) expect([answer.issuer, answer.ms >= SSO_ADDRESS_TIMEOUT_SECONDS * 1000 - 50]).toEqual([answer.issuer, true]);
    });

    it('caps starts per client address and per tenant (429 with Retry-After), the provider unasked', async () => {
      const other = await api(base(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: 'SSO caps', plan: 'free' });
      const capped = other.body.tenant.id as string;
      // SSO_STARTS_PER_MINUTE_PER_ADDRESS=4: the fifth start from one address in a minute is refused.
      const one = `203.0.113.${run}`;
      const fromOne = [];
      for (let i = 0; i < 5; i++) fromOne.push(await start(capped, one));
      expect(fromOne.map((r) => r.status)).toEqual([404, 404, 404, 404, 429]);
      expect(JSON.parse(fromOne[4].text).code).toBe('RATE_LIMITED');
      expect(Number(fromOne[4].retryAfter)).toBeGreaterThan(0);
      expect(Number(fromOne[4].retryAfter)).toBeLessThanOrEqual(60);
      // SSO_STARTS_PER_MINUTE_PER_TENANT=6: whatever the addresses, the tenant's seventh is refused (the refused fifth did not count).
      const spread = [];
      for (let i = 0; i < 3; i++) spread.push(await start(capped));
      expect(spread.map((r) => r.status)).toEqual([404, 404, 429]);
    });
  });
}
