/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { mkdirSync, mkdtempSync, rmSync } from 'fs';
import { createServer, request } from 'http';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { eventually, REPO_ROOT, sleep } from '@shortlink/harness';
import { API_KEY, propagated } from './support';
import { api } from './tenant-journey';

/** Debian's chromium (tools/ci/install-chromium.sh), not a browser build downloaded by playwright. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** What a browser sends when it follows a link. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
/** The logo of the tenant in the branding test (a 24×24 PNG, orange with a white square), uploaded with its settings. */
const ACME_LOGO = 'iVBORw0KGgoAAAANSUhEUgAAABgAAAAYCAIAAABvFaqvAAAAJklEQVR42mM45MhDFcQwatCAGvSfCDBq0KhBowZRbtBoeTToDQIAQ4l3znFH4JYAAAAASUVORK5CYII=';
/** A phone's viewport: the pages are read on phones first. */
const PHONE = { width: 390, height: 844 };

export interface VisitorPagesSetup {
  readonly generation: string;
  /** Every redirect instance of the installation (the first one is the browser's). */
  readonly redirects: readonly string[];
  /** The service's default domain (SHORTLINK_DEFAULT_DOMAIN): an unknown Host is this domain. */
  readonly defaultDomain: string;
}

export interface VisitorPagesOptions {
  /** Keep screenshots of the pages in docs/img/ (one profile keeps them, so that they do not churn). */
  readonly screenshots: boolean;
  /** A word unique to this run, for domains in a shared meta database. */
  readonly run: string;
}

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** A request as a visitor on `host` makes it (fetch cannot set Host; node:http can). */
export function visit(redirect: string, path: string, host: string, headers: Record<string, string> = {}): Promise<Answer> {
  const { hostname, port } = new URL(redirect);
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, path, headers: { host, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

/**
 * As visitors meet it on any profile: every refusal a browser can meet is a page
 * (driven in headless Chromium: status, content type, no script, the visitor's language, the
 * service's branding), API clients keep problem+json, and the settings of a tenant's domain
 * (redirects, branding, robots.txt, the well-known files) reach every redirect instance within the
 * bound of link edits, over HTTP as a visitor's client would fetch them.
 */
export function describeVisitorPages(setup: () => VisitorPagesSetup, options: VisitorPagesOptions) {
  let browser: Browser;
  let profile: string;
  let tenantKey: string;
  let tenantId: string;
  let tenantDomain: string;
  const imgDir = join(REPO_ROOT, 'docs', 'img');

  const generation = () => setup().generation;
  const redirect = () => setup().redirects[0];
  const create = async (body: object, key = tenantKey) => {
    const res = await api(generation(), 'POST', '/api/v1/links', key, body);
    if (res.status !== 201) throw new Error(`create answered ${res.status} ${res.text}`);
    return res.body.code as string;
  };
  const patchSettings = async (domain: string, edit: object, key = tenantKey) => {
    const res = await api(generation(), 'PATCH', `/api/v1/domains/${domain}`, key, edit);
    const answeredAt = Date.now();
    expect([res.status, res.body.code]).toEqual([200, undefined]);
    return answeredAt;
  };

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), 'shortlink-pages-chromium-'));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        // A tenant's domain in the address bar, with the redirect's port: the browser sends that Host itself.
        '--host-resolver-rules=MAP *.acme.test 127.0.0.1',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const made = await api(generation(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: `pages-${options.run}`, plan: 'paid' });
    ({ apiKey: tenantKey } = made.body as { apiKey: string });
    tenantId = made.body.tenant.id as string;
    tenantDomain = `go-${options.run}.acme.test`;
    expect((await api(generation(), 'POST', `/api/v1/admin/tenants/${tenantId}/domains`, API_KEY, { domain: tenantDomain })).status).toBe(201);
    // The service's branding, set by the operator on the default domain: every page without a domain's own shows it.
    await patchSettings(setup().defaultDomain, { branding: { name: 'Sho.rt Links', accentColor: '#0f766e' } }, API_KEY);
    if (options.screenshots) mkdirSync(imgDir, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    rmSync(profile, { recursive: true, force: true });
  });

  /** Opens `path` on the first redirect instance in a fresh context (its own language), and reads what a visitor sees. */
  const open = async (path: string, locale = 'en-US', userAgent?: string, fallback?: string) => {
    const context: BrowserContext = await browser.newContext({ viewport: PHONE, locale, deviceScaleFactor: 2, isMobile: true, hasTouch: true, userAgent });
    // The store or web page an app page falls back to, answered here: the test stays off the network.
    if (fallback) await context.route(fallback, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<title>store</title>' }));
    const page: Page = await context.newPage();
    const errors: string[] = [];
    const requests: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // Chromium logs the page's own status (404, 410, ...) as a failed load: that one is the point, anything else is an error.
    page.on('console', (m) => !/^Failed to load resource: the server responded with a status of \d+/.test(m.text()) && errors.push(`${m.type()}: ${m.text()}`));
    page.on('request', (r) => requests.push(r.url()));
    const response = (await page.goto(`${redirect()}${path}`))!;
    const seen = {
      status: response.status(),
      type: response.headers()['content-type'],
      csp: response.headers()['content-security-policy'],
      retryAfter: response.headers()['retry-after'],
      lang: await page.getAttribute('html', 'lang'),
      heading: await page.locator('h1').innerText(),
      text: await page.locator('main').innerText(),
      // What could run: script elements, inline handlers, javascript: URLs. The CSP forbids them all anyway.
      runnable: await page.evaluate(
        () =>
          document.scripts.length +
          [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on') || a.value.trim().startsWith('javascript:')))
            .length,
      ),
      robots: await page.getAttribute('meta[name=robots]', 'content'),
      errors,
      // The page loads nothing but itself (Chromium may ask for /favicon.ico on its own).
      requests: requests.filter((u) => !u.endsWith('/favicon.ico')),
      // The layout fits the phone: nothing wider than the viewport.
      overflow: await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth),
    };
    return { seen, page, close: () => context.close() };
  };

  const expectSafePage = (seen: Awaited<ReturnType<typeof open>>['seen'], status: number) => {
    expect(seen.status).toBe(status);
    expect(seen.type).toBe('text/html; charset=utf-8');
    expect(seen.csp).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src [^;]+; base-uri 'none'; frame-ancestors 'none'/);
    expect(seen.csp).not.toMatch(/script-src|unsafe/);
    expect(seen.runnable).toBe(0);
    expect(seen.robots).toBe('noindex,nofollow');
    expect(seen.errors).toEqual([]);
    expect(seen.requests).toHaveLength(1);
    expect(seen.overflow).toBe(false);
  };

  const shoot = async (page: Page, name: string) => {
    if (options.screenshots) await page.screenshot({ path: join(imgDir, name), fullPage: false });
  };

  describe('pages in headless Chromium', () => {
    it('shows an unknown and a disabled link as the same 404 page, in English and in German, with the service’s branding', async () => {
      const disabled = await create({ url: 'https://example.com/off', status: 'disabled' });
      const unknown = await open('/nothing-here-1');
      expectSafePage(unknown.seen, 404);
      expect(unknown.seen.heading).toBe('This link does not exist');
      expect(unknown.seen.text).toContain('Sho.rt Links');
      expect(unknown.seen.lang).toBe('en');
      await shoot(unknown.page, 'page-404.png');
      await unknown.close();
      const off = await open(`/${disabled}`);
      expectSafePage(off.seen, 404);
      expect(off.seen.text).toBe(unknown.seen.text);
      await off.close();
      const german = await open('/nothing-here-1', 'de-DE');
      expectSafePage(german.seen, 404);
      expect([german.seen.lang, german.seen.heading]).toEqual(['de', 'Diesen Link gibt es nicht']);
      await shoot(german.page, 'page-404-de.png');
      await german.close();
    });

    it('speaks Spanish and Italian to visitors who ask for them (a Mexican Spanish browser too), English to the rest', async () => {
      for (const [locale, lang, heading, body] of [
        ['es-ES', 'es', 'Este enlace no existe', 'Comprueba que la dirección esté bien escrita'],
        ['es-MX', 'es', 'Este enlace no existe', 'Comprueba que la dirección esté bien escrita'],
        ['it-IT', 'it', 'Questo link non esiste', 'Controlla che l’indirizzo sia scritto bene'],
        ['ja-JP', 'en', 'This link does not exist', 'Check the address for typos'],
      ]) {
        const page = await open('/nothing-here-es', locale);
        expectSafePage(page.seen, 404);
        expect({ locale, lang: page.seen.lang, heading: page.seen.heading }).toEqual({ locale, lang, heading });
        expect(page.seen.text).toContain(body);
        if (locale === 'es-ES') await shoot(page.page, 'page-404-es.png');
        await page.close();
      }
    });

    it('shows an expired and an exhausted link as 410 pages', async () => {
      const expiring = await create({ url: 'https://example.com/soon', expiresAt: new Date(Date.now() + 2500).toISOString() });
      const once = await create({ url: 'https://example.com/once', maxClicks: 1 });
      expect((await visit(redirect(), `/${once}`, setup().defaultDomain)).status).toBe(302);
      await sleep(2600);
      const expired = await open(`/${expiring}`);
      expectSafePage(expired.seen, 410);
      expect(expired.seen.heading).toBe('This link has expired');
      await shoot(expired.page, 'page-410-expired.png');
      await expired.close();
      const exhausted = await open(`/${once}`);
      expectSafePage(exhausted.seen, 410);
      expect(exhausted.seen.heading).toBe('This link is no longer available');
      await shoot(exhausted.page, 'page-410-exhausted.png');
      await exhausted.close();
    });

    it('shows too many requests as a 429 page with Retry-After', async () => {
      const limited = await create({ url: 'https://example.com/busy', clicksPerIpPerMinute: 1 });
      expect((await visit(redirect(), `/${limited}`, setup().defaultDomain)).status).toBe(302);
      const busy = await open(`/${limited}`);
      expectSafePage(busy.seen, 429);
      expect(Number(busy.seen.retryAfter)).toBeGreaterThan(0);
      expect(busy.seen.text).toContain(`Try again in ${busy.seen.retryAfter} second`);
      await shoot(busy.page, 'page-429.png');
      await busy.close();
    });

    it('shows a suspended tenant’s link as a 403 page, and its links again once it is active', async () => {
      const other = await api(generation(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: `suspended-${options.run}`, plan: 'free' });
      const code = await create({ url: 'https://example.com/suspended' }, other.body.apiKey as string);
      const otherId = other.body.tenant.id as string;
      expect((await api(generation(), 'PATCH', `/api/v1/admin/tenants/${otherId}`, API_KEY, { status: 'suspended' })).status).toBe(200);
      // The redirect reads suspensions every REDIRECT_TENANT_REFRESH_MS (1 s).
      await eventually('the suspension at the redirect', async () => (await visit(redirect(), `/${code}`, setup().defaultDomain)).status === 403, 10_000, 100);
      const suspended = await open(`/${code}`);
      expectSafePage(suspended.seen, 403);
      expect(suspended.seen.heading).toBe('This link is unavailable');
      await shoot(suspended.page, 'page-403-suspended.png');
      await suspended.close();
      expect((await api(generation(), 'PATCH', `/api/v1/admin/tenants/${otherId}`, API_KEY, { status: 'active' })).status).toBe(200);
    });

    it('offers an app URL scheme on an iPhone in a page without script, which leads a visitor without the app to the fallback by itself', async () => {
      const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
      const fallback = 'https://apps.example.com/app/id42';
      const code = await create({ url: 'https://example.com/product/42', deviceTargets: { ios: fallback }, appTargets: { ios: 'myapp://product/42' } });
      const app = await open(`/${code}`, 'en-US', IPHONE, fallback);
      expectSafePage(app.seen, 200);
      expect(app.seen.heading).toBe('Open this link in the app');
      expect(await app.page.getAttribute('a.button', 'href')).toBe('myapp://product/42');
      expect(await app.page.getAttribute('main p:last-child a', 'href')).toBe(fallback);
      await shoot(app.page, 'page-app.png');
      // No script: the meta refresh alone takes the visitor to the store after APP_FALLBACK_SECONDS.
      await app.page.waitForURL(fallback, { timeout: 20_000 });
      expect(await app.page.title()).toBe('store');
      await app.close();
    });

    it('keeps problem+json for API clients, curl (*/*) and requests without Accept', async () => {
      for (const accept of [undefined, '*/*', 'application/json']) {
        const res = await visit(redirect(), '/nothing-here-2', setup().defaultDomain, accept ? { accept } : {});
        expect([accept, res.status, res.headers['content-type']]).toEqual([accept, 404, 'application/problem+json']);
        expect(JSON.parse(res.body)).toMatchObject({ code: 'LINK_NOT_FOUND' });
      }
    });
  });

  describe('a tenant’s domain settings, as visitors fetch them', () => {
    beforeAll(async () => {
      // The redirect learns a new tenant domain within REDIRECT_TENANT_REFRESH_MS (1 s): its links resolve there from then on.
      const code = await create({ url: 'https://example.com/on-domain', domain: tenantDomain });
      for (const base of setup().redirects) {
        await eventually('the tenant domain at the redirect', async () => (await visit(base, `/${code}`, tenantDomain)).status === 302, 10_000, 100);
      }
    });

    it('sends browsers to the notFound, expired and root redirects on every instance within the edit bound; API clients keep problem+json', async () => {
      const expiresAt = Date.now() + 2500;
      const expiring = await create({ url: 'https://example.com/soon', domain: tenantDomain, expiresAt: new Date(expiresAt).toISOString() });
      const answeredAt = await patchSettings(tenantDomain, {
        notFoundRedirect: 'https://acme.example/missing',
        expiredRedirect: 'https://acme.example/expired',
        rootRedirect: 'https://acme.example/',
      });
      await propagated(answeredAt);
      for (const base of setup().redirects) {
        const missing = await visit(base, '/no-such-code', tenantDomain, { accept: BROWSER_ACCEPT });
        expect([missing.status, missing.headers.location]).toEqual([302, 'https://acme.example/missing']);
        expect((await visit(base, '/', tenantDomain)).headers.location).toBe('https://acme.example/');
        const api404 = await visit(base, '/no-such-code', tenantDomain, { accept: 'application/json' });
        expect([api404.status, api404.headers['content-type']]).toEqual([404, 'application/problem+json']);
      }
      await sleep(Math.max(0, expiresAt + 50 - Date.now()));
      expect((await visit(redirect(), `/${expiring}`, tenantDomain, { accept: BROWSER_ACCEPT })).headers.location).toBe('https://acme.example/expired');
      // Cleared: the pages again, at once.
      await propagated(await patchSettings(tenantDomain, { notFoundRedirect: null }));
      for (const base of setup().redirects) expect((await visit(base, '/no-such-code', tenantDomain, { accept: BROWSER_ACCEPT })).status).toBe(404);
    });

    it('shows the tenant’s branding on its domain’s pages, the logo carried by the page (nothing fetched elsewhere), the service’s elsewhere', async () => {
      // A logo at a URL of the tenant's would be fetched by every visitor's browser: refused, the image itself is taken.
      const hotLinked = await api(generation(), 'PATCH', `/api/v1/domains/${tenantDomain}`, tenantKey, {
        branding: { logoUrl: 'https://cdn.acme.example/logo.png' },
      });
      expect([hotLinked.status, hotLinked.body.field]).toEqual([400, 'branding.logoUrl']);
      const logo = `data:image/png;base64,${ACME_LOGO}`;
      await propagated(await patchSettings(tenantDomain, { branding: { name: 'Acme Links', logo, accentColor: '#c2410c' } }));
      for (const base of setup().redirects) {
        const page = await visit(base, '/no-such-code', tenantDomain, { accept: BROWSER_ACCEPT });
        expect(page.body).toContain('<title>Link not found – Acme Links</title>');
        expect(page.body).toContain('--accent:#c2410c');
        expect(page.headers['content-security-policy']).toMatch(/img-src data:;/);
      }
      expect((await visit(redirect(), '/no-such-code', setup().defaultDomain, { accept: BROWSER_ACCEPT })).body).toContain('Sho.rt Links');

      // In Chromium, at the tenant's domain with the redirect's port in the address (and so in Host): the page and its
      // logo from the page itself, one request; the name said once (the logo's alt is empty beside it).
      const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
      const page = await context.newPage();
      const errors: string[] = [];
      const requests: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('request', (r) => requests.push(r.url()));
      const { port } = new URL(redirect());
      const response = (await page.goto(`http://${tenantDomain}:${port}/no-such-code`))!;
      expect([response.status(), response.headers()['content-type']]).toEqual([404, 'text/html; charset=utf-8']);
      expect(await page.locator('header').innerText()).toBe('Acme Links');
      await page.waitForFunction(() => (document.querySelector('header img') as HTMLImageElement | null)?.complete === true);
      expect(await page.evaluate(() => (document.querySelector('header img') as HTMLImageElement).naturalWidth)).toBe(24);
      expect(await page.getAttribute('header img', 'alt')).toBe('');
      expect(requests.filter((u) => !u.startsWith('data:') && !u.endsWith('/favicon.ico'))).toEqual([`http://${tenantDomain}:${port}/no-such-code`]);
      expect(await page.evaluate(() => getComputedStyle(document.querySelector('main')!).borderTopColor)).toBe('rgb(194, 65, 12)');
      expect(errors).toEqual([]);
      await shoot(page, 'page-404-branded.png');
      await context.close();
    });

    it('resolves a link of the tenant’s domain reached with a port in Host, as the default domain with its port is', async () => {
      // The target: a page of ours on 127.0.0.1 under a name Chromium maps there (a route cannot answer a redirect's next hop).
      const landing = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>landing</title>'));
      await new Promise<void>((resolve) => landing.listen(0, '127.0.0.1', resolve));
      try {
        const target = `http://landing.acme.test:${(landing.address() as AddressInfo).port}/with-port`;
        const code = await create({ url: target, domain: tenantDomain });
        const { port } = new URL(redirect());
        for (const base of setup().redirects) {
          const { port: p } = new URL(base);
          const answer = await visit(base, `/${code}`, `${tenantDomain}:${p}`);
          expect([answer.status, answer.headers.location]).toEqual([302, target]);
        }
        // And in Chromium, typed with the port: the browser sends that Host itself and lands on the target.
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(`http://${tenantDomain}:${port}/${code}`);
        expect([page.url(), await page.title()]).toEqual([target, 'landing']);
        await context.close();
      } finally {
        landing.close();
      }
    });

    it('serves robots.txt: crawlers get only the crawlable links by default, everything once the tenant allows it', async () => {
      const crawlable = await create({ url: 'https://example.com/public', domain: tenantDomain, crawlable: true });
      for (const base of setup().redirects) {
        const robots = await visit(base, '/robots.txt', tenantDomain);
        expect([robots.status, robots.headers['content-type']]).toEqual([200, 'text/plain; charset=utf-8']);
        expect(robots.body).toBe(`User-agent: *\nAllow: /${crawlable}$\nDisallow: /\n`);
      }
      await propagated(await patchSettings(tenantDomain, { robots: 'allow' }));
      for (const base of setup().redirects) expect((await visit(base, '/robots.txt', tenantDomain)).body).toBe('User-agent: *\nAllow: /\n');
      // The default domain has its own policy.
      expect((await visit(redirect(), '/robots.txt', setup().defaultDomain)).body).toMatch(/Disallow: \/\n$/);
    });

    it('serves the well-known files of app links once set, 404 before and after', async () => {
      expect((await visit(redirect(), '/.well-known/assetlinks.json', tenantDomain)).status).toBe(404);
      const aasa = { applinks: { details: [{ appIDs: ['ABCDE12345.com.acme.links'], components: [{ '/': '/*' }] }] } };
      const assetlinks = [
        {
          relation: ['delegate_permission/common.handle_all_urls'],
          target: { namespace: 'android_app', package_name: 'com.acme.links', sha256_cert_fingerprints: [Array(32).fill('0F').join(':')] },
        },
      ];
      await propagated(await patchSettings(tenantDomain, { appleAppSiteAssociation: aasa, androidAssetLinks: assetlinks }));
      for (const base of setup().redirects) {
        const apple = await visit(base, '/.well-known/apple-app-site-association', tenantDomain);
        expect([apple.status, apple.headers['content-type'], JSON.parse(apple.body)]).toEqual([200, 'application/json', aasa]);
        const android = await visit(base, '/.well-known/assetlinks.json', tenantDomain);
        expect([android.status, android.headers['content-type'], JSON.parse(android.body)]).toEqual([200, 'application/json', assetlinks]);
      }
      await propagated(await patchSettings(tenantDomain, { appleAppSiteAssociation: null }));
      for (const base of setup().redirects) expect((await visit(base, '/.well-known/apple-app-site-association', tenantDomain)).status).toBe(404);
    });
  });
}
