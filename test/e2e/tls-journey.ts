import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { createServer, Server } from 'http';
import { tmpdir } from 'os';
import { join } from 'path';
import { BrowserContext, chromium } from 'playwright-core';
import { eventually, metricsOf } from '@shortlink/harness';
import { CHROMIUM, HEADLESS_CHROMIUM_ARGS } from './chromium';
import { AcmeServers, browserHomeTrusting, CaddyFront, freeLoopbackAddress, httpsAt } from './acme-front';
import { API_KEY, useRealStackApps } from './support';
import { api } from './tenant-journey';

const DOMAIN = 'go.acme.test';
const UNVERIFIED = 'other.acme.test';
const SERVICE_DOMAIN = 'links.shortlink.test';
const TARGET_HOST = 'landing.example';

/**
 * The TLS journey on the real stack (docs/design.md, "Custom domains and TLS"): a tenant adds
 * go.acme.test and proves it with a TXT record in the ACME test DNS; Caddy (deploy/caddy/sites.caddy)
 * asks the redirect, obtains a certificate from Pebble on the first visit, and Chromium, trusting
 * Pebble's root, opens https://go.acme.test/<code> and lands on the target; a domain that is not
 * verified gets no certificate. The generation app reads the certificate Caddy serves for its
 * metrics (days to expiry, issued). Run from real-stack-domains.e2e-spec.ts after the domains journey,
 * never beside it: both run domain verifiers on the stack's one meta database, and each would take the
 * other's checks (with its own resolver and its own events topic).
 */
export function describeTlsJourney(): void {
  describe('real stack: custom domains over TLS (Caddy, Pebble, Chromium)', () => {
    const settings: Record<string, string> = {};
    let acme: AcmeServers;
    let caddy: CaddyFront;
    let target: Server;
    let targetHost: string;
    let browser: BrowserContext;
    let scratch: string;

    beforeAll(async () => {
      acme = await AcmeServers.start();
      Object.assign(settings, {
        DOMAIN_VERIFIER: 'on',
        DOMAIN_DNS_RESOLVER: acme.dns,
        // The HTTP check meets Caddy's port 80 at the address the names resolve to, as in production.
        DOMAIN_HTTP_CHECK_PORT: '80',
        DOMAIN_CHECK_ALLOW_PRIVATE: 'on',
        DOMAIN_VERIFIER_INTERVAL_MS: '200',
        DOMAIN_FIRST_CHECK_MS: '0',
        DOMAIN_CHECK_BACKOFF_MS: '500',
        DOMAIN_CHECK_BACKOFF_MAX_MS: '2000',
        DOMAIN_RECHECK_INTERVAL_MS: '2000',
        DOMAIN_TLS_FRONT: `${acme.frontHost}:443`,
        DOMAIN_TLS_FRONT_CA_FILE: acme.rootFile,
        // Caddy proxies from loopback: its X-Forwarded-Proto is believed (HSTS is sent over HTTPS only).
        TRUSTED_PROXIES: '127.0.0.1',
      });
    }, 60_000);
    const stack = useRealStackApps('tls', { olap: 'chdb', apps: settings });

    beforeAll(async () => {
      const { endpoints } = stack();
      // A domain left by an earlier run that stopped half way is taken back from its tenant first.
      await freeDomains([DOMAIN, UNVERIFIED], endpoints.generation);
      caddy = await CaddyFront.start(acme, {
        askUrl: `${endpoints.admin.redirect}/internal/tls-allowed`,
        upstream: new URL(endpoints.redirect).host,
        serviceDomain: SERVICE_DOMAIN,
      });
      // The link's target: a page on a loopback address of its own, port 80, which Chromium reaches by its name.
      targetHost = `127.0.${Math.floor(Math.random() * 250)}.${2 + Math.floor(Math.random() * 250)}`;
      target = createServer((_, res) =>
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Landed</title><h1>Landed on the target</h1>'),
      );
      await new Promise<void>((resolve, reject) => target.once('error', reject).listen(80, targetHost, resolve));
      scratch = mkdtempSync(join(tmpdir(), 'shortlink-tls-chromium-'));
      browser = await chromium.launchPersistentContext(join(scratch, 'profile'), {
        executablePath: CHROMIUM,
        headless: true,
        // Chromium on Linux trusts what the NSS database of its home says: Pebble's root, there only.
        env: { ...process.env, HOME: browserHomeTrusting(acme.rootFile, scratch) } as Record<string, string>,
        args: [
          ...HEADLESS_CHROMIUM_ARGS,
          `--host-resolver-rules=MAP ${DOMAIN} ${acme.frontHost}, MAP ${UNVERIFIED} ${acme.frontHost}, MAP ${TARGET_HOST} ${targetHost}`,
        ],
      });
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await caddy?.stop();
      await new Promise((r) => (target ? target.close(r) : r(undefined)));
      await freeDomains([DOMAIN, UNVERIFIED], stack().endpoints.generation).catch(() => undefined);
      await acme?.stop();
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    });

    it('proves go.acme.test, Caddy obtains its certificate from Pebble, Chromium opens https://go.acme.test/<code> and lands on the target', async () => {
      const { endpoints } = stack();
      const gen = endpoints.generation;
      const created = await api(gen, 'POST', '/api/v1/admin/tenants', API_KEY, { name: `tls-${Date.now()}`, plan: 'paid' });
      const key = created.body.apiKey as string;
      // Both names point elsewhere at first (an address where nothing listens): the HTTP token cannot prove them, only the TXT record can.
      const elsewhere = await freeLoopbackAddress();
      await acme.setA(DOMAIN, elsewhere);
      await acme.setA(UNVERIFIED, elsewhere);
      const added = await api(gen, 'POST', '/api/v1/domains', key, { domain: DOMAIN });
      expect(added.status).toBe(201);
      expect((await api(gen, 'POST', '/api/v1/domains', key, { domain: UNVERIFIED })).status).toBe(201);

      // Not verified yet: no certificate, the browser cannot open it.
      const page = browser.pages()[0] ?? (await browser.newPage());
      await expect(page.goto(`https://${DOMAIN}/`)).rejects.toThrow(/ERR_SSL_PROTOCOL_ERROR|ERR_CONNECTION_CLOSED|ERR_CONNECTION_RESET/);
      expect(caddy.hasCertificateFor(DOMAIN)).toBe(false);

      // The TXT record the answer names, in the test DNS; the verifier finds it.
      await acme.setTxt(added.body.records.txt.name, added.body.records.txt.value);
      await eventually('verified', async () => (await api(gen, 'GET', `/api/v1/domains/${DOMAIN}/ownership`, key)).body.status === 'verified', 30_000);
      // The tenant points go.acme.test at the front: Pebble's validation of Caddy's order reaches it there.
      await acme.setA(DOMAIN, acme.frontHost);
      const link = await api(gen, 'POST', '/api/v1/links', key, { url: `http://${TARGET_HOST}/landing`, domain: DOMAIN });
      expect(link.status).toBe(201);
      expect(link.body.shortUrl).toBe(`https://${DOMAIN}/${link.body.code}`);
      await api(gen, 'PATCH', `/api/v1/domains/${DOMAIN}`, key, { hsts: { maxAge: 31_536_000, includeSubDomains: false } });

      // The redirect knows the domain within REDIRECT_TENANT_REFRESH_MS; then the first visit gets Caddy its certificate.
      await eventually('the front may get a certificate', async () => (await fetch(`${endpoints.admin.redirect}/internal/tls-allowed?domain=${DOMAIN}`)).ok);
      const landed = await page.goto(link.body.shortUrl);
      expect(page.url()).toBe(`http://${TARGET_HOST}/landing`);
      expect(landed?.status()).toBe(200);
      expect(await page.locator('h1').innerText()).toBe('Landed on the target');
      const hop = landed!.request().redirectedFrom()!;
      expect(hop.url()).toBe(link.body.shortUrl);
      const first = (await hop.response())!;
      expect(first.status()).toBe(302);
      expect(first.headers()['strict-transport-security']).toBe('max-age=31536000');
      expect(caddy.hasCertificateFor(DOMAIN)).toBe(true);
      // The same, checked without a browser: the chain and the name against Pebble's root only.
      const root = readFileSync(acme.rootFile, 'utf8');
      expect(await httpsAt(acme.frontHost, DOMAIN, `/${link.body.code}`, root)).toMatchObject({
        status: 302,
        headers: { location: `http://${TARGET_HOST}/landing` },
      });

      // A domain that is not verified gets none, however often it is asked for.
      await expect(page.goto(`https://${UNVERIFIED}/`)).rejects.toThrow(/ERR_SSL_PROTOCOL_ERROR|ERR_CONNECTION_CLOSED|ERR_CONNECTION_RESET/);
      expect(await httpsAt(acme.frontHost, UNVERIFIED, '/', root)).toHaveProperty('error');
      expect(caddy.hasCertificateFor(UNVERIFIED)).toBe(false);
      expect((await api(gen, 'GET', `/api/v1/domains/${UNVERIFIED}/ownership`, key)).body.status).not.toBe('verified');

      // The generation app reads the certificate Caddy serves at the next re-check: days to expiry, one issued.
      const expiry = await eventually(
        'the certificate read',
        async () => {
          const m = await metricsOf(endpoints.admin.generation);
          return m.get(`shortlink_domain_certificate_expiry_days{domain="${DOMAIN}"}`) ?? false;
        },
        // The gauge holds what it read for 30 s (CERTIFICATES_HELD_MS): a scrape just before the read holds nothing that long.
        45_000,
        500,
      );
      expect(expiry).toBeGreaterThan(30); // Pebble issues for years
      const generation = await metricsOf(endpoints.admin.generation);
      expect(generation.get('shortlink_domain_certificates_issued_total')).toBeGreaterThanOrEqual(1);
      expect(generation.get(`shortlink_domain_certificate_expiry_days{domain="${UNVERIFIED}"}`)).toBeUndefined();
      const ownership = (await api(gen, 'GET', `/api/v1/domains/${DOMAIN}/ownership`, key)).body;
      expect(ownership.certificate).toMatchObject({ error: null });
      const redirect = await metricsOf(endpoints.admin.redirect);
      expect(redirect.get('shortlink_tls_allowed_total{answer="allowed"}')).toBeGreaterThanOrEqual(1);
      expect(redirect.get('shortlink_tls_allowed_total{answer="refused"}')).toBeGreaterThanOrEqual(1);
    });
  });
}

/** Takes the domains back from whichever tenant holds them (the operator's API), by reading the meta database for their owner. */
async function freeDomains(domains: readonly string[], generation: string): Promise<void> {
  const { createConnection } = await import('mysql2/promise');
  const db = await createConnection(process.env.MYSQL_META_URL!);
  try {
    const [rows] = await db.query('SELECT domain, tenant_id FROM tenant_domains WHERE domain IN (?)', [domains]);
    for (const row of rows as Array<{ domain: string; tenant_id: string }>)
      await api(generation, 'DELETE', `/api/v1/admin/tenants/${row.tenant_id}/domains/${row.domain}`, API_KEY);
  } finally {
    await db.end();
  }
}
