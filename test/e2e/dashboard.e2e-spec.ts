/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { generate } from 'otplib';
import { BrowserContext, chromium, Page } from 'playwright-core';
import { Endpoints, eventually, RunningProcess } from '@shortlink/harness';
import { API_KEY, createLink, redirectOf, startEmbedded } from './support';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
/** Debian's chromium (tools/ci/install-chromium.sh), not a browser build downloaded by playwright. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * The analysts' dashboard in a real browser (headless Chromium) on the embedded profile: log in
 * with the API key, let it pick the link, and check that every number it shows is the API's; a new
 * click shows up by itself (auto-refresh) and in the live counter (the live click stream); an analyst signs in with an email, a password and a TOTP
 * code instead of a key. Set DASHBOARD_SCREENSHOT=<file> (and DASHBOARD_SIGNIN_SCREENSHOT)
 * to keep screenshots.
 */
describe('dashboard in headless Chromium (embedded profile)', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;
  let profileDir: string;
  let browser: BrowserContext;
  let page: Page;
  let code: string;
  const consoleErrors: string[] = [];
  const foreignRequests: string[] = [];

  const api = async <T>(path: string): Promise<T> => (await (await fetch(`${endpoints.analytics}${path}`, { headers: { 'x-api-key': API_KEY } })).json()) as T;
  const text = (selector: string) => page.locator(selector).innerText();
  const dayAgo = () => Math.ceil(Date.now() / 60_000) * 60 - 86_400;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-dashboard-'));
    profileDir = mkdtempSync(join(tmpdir(), 'shortlink-chromium-'));
    // The city database: cities and regions as well as countries.
    ({ proc, endpoints } = await startEmbedded(dataDir, {
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      GEO_DATABASE: 'city',
    }));
    code = (await createLink(endpoints, { url: 'https://example.com/dashboard' })).body.code as string;
    // One of the four is a scan of the link's QR code (`/{code}/~`).
    for (let i = 0; i < 4; i++) await redirectOf(endpoints, i === 0 ? `${code}/~` : code, { 'x-forwarded-for': '8.8.8.8', referer: 'https://news.example/a' });
    await redirectOf(endpoints, code, { 'x-forwarded-for': '81.2.69.142', 'user-agent': IPHONE });
    await redirectOf(endpoints, code, { 'x-forwarded-for': '8.8.4.4', 'user-agent': 'Twitterbot/1.0' });
    await eventually(
      'the clicks in the API',
      async () => (await api<{ totals: { clicks: number } }>(`/api/v1/links/${code}/stats?bots=include`)).totals.clicks === 6,
      30_000,
      250,
    );
    // A fresh profile directory per run (playwright passes it as --user-data-dir).
    browser = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1280, height: 1400 },
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    page.on('pageerror', (e) => consoleErrors.push(e.message));
    page.on('request', (r) => !r.url().startsWith(endpoints.analytics) && foreignRequests.push(r.url()));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profileDir, { recursive: true, force: true });
  });

  it('logs in with the API key, kept in session storage only', async () => {
    await page.goto(`${endpoints.analytics}/dashboard`);
    await page.fill('#api-key', 'sl_not_a_key_0000000000');
    await page.click('#login-form button[type=submit]');
    await page.waitForFunction(() => document.getElementById('login-error')?.textContent !== '');
    expect(await page.isVisible('#login')).toBe(true);
    await page.fill('#api-key', API_KEY);
    await page.click('#login-form button[type=submit]');
    await page.waitForFunction((c) => document.body.dataset.loadedCode === c, code, { timeout: 30_000 });
    expect(await page.evaluate(() => [sessionStorage.getItem('shortlink.apiKey'), localStorage.length, document.cookie])).toEqual([API_KEY, 0, '']);
  });

  it('shows the totals, countries and breakdowns the API gives for the same range', async () => {
    const stats = await api<{ totals: { clicks: number; visitors: number }; botClicks: number }>(
      `/api/v1/links/${code}/stats?from=${dayAgo()}&granularity=minute`,
    );
    expect(stats.totals).toEqual({ clicks: 5, visitors: 2, leads: 0, sales: 0, revenue: {} });
    expect([await text('#total-clicks'), await text('#total-visitors'), await text('#total-bots')]).toEqual([
      String(stats.totals.clicks),
      String(stats.totals.visitors),
      String(stats.botClicks),
    ]);
    const countries = await api<{ items: Array<{ value: string | null; clicks: number }> }>(`/api/v1/links/${code}/breakdown/countries?from=${dayAgo()}`);
    const rows = await page
      .locator('#breakdown-countries tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)));
    expect(rows).toEqual(countries.items.map((i) => [i.value ?? '(unknown)', String(i.clicks)]));
    expect(rows).toEqual([
      ['US', '4'],
      ['GB', '1'],
    ]);
    const cities = await api<{ items: Array<{ value: string | null; region: string | null; country: string; clicks: number }> }>(
      `/api/v1/links/${code}/breakdown/cities?from=${dayAgo()}`,
    );
    const cityRows = await page
      .locator('#breakdown-cities tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent)));
    expect(cityRows).toEqual(cities.items.map((i) => [i.value ?? '(unknown)', i.region ?? '', i.country ?? '', String(i.clicks)]));
    expect(cityRows).toEqual([
      ['Mountain View', 'California', 'US', '4'],
      ['London', 'England', 'GB', '1'],
    ]);
    const sources = await page
      .locator('#breakdown-sources .row')
      .evaluateAll((els) =>
        els.map((el) => [(el as HTMLElement).dataset.value, el.querySelector('.name')!.textContent, el.querySelector('.count')!.textContent]),
      );
    expect(sources).toEqual([
      ['link', 'link', '4'],
      ['qr', 'QR code', '1'],
    ]);
    // DB-IP's licence: pages that show its results link back to it.
    expect(await page.locator('footer a[href="https://db-ip.com"]').innerText()).toBe('IP Geolocation by DB-IP');
    for (const dimension of ['referers', 'devices', 'browsers', 'os', 'sources']) {
      const b = await api<{ items: Array<{ value: string | null; clicks: number }> }>(`/api/v1/links/${code}/breakdown/${dimension}?from=${dayAgo()}`);
      const shown = await page
        .locator(`#breakdown-${dimension} .row`)
        .evaluateAll((els) => els.map((el) => [(el as HTMLElement).dataset.value, el.querySelector('.count')!.textContent]));
      expect({ dimension, shown }).toEqual({ dimension, shown: b.items.map((i) => [i.value ?? '', String(i.clicks)]) });
    }
    // The time-series chart is drawn (uPlot's canvas) and the link is in the top links.
    expect(await page.locator('#series-chart canvas').count()).toBeGreaterThan(0);
    expect(await text('#top-links tbody')).toContain(code);
    if (process.env.DASHBOARD_SCREENSHOT) await page.screenshot({ path: process.env.DASHBOARD_SCREENSHOT, fullPage: true });
  });

  it('refreshes by itself: a new click shows up without a reload, and moves the live counter (the stream, read with fetch)', async () => {
    await page.waitForFunction(() => document.getElementById('live')?.dataset.state === 'open', undefined, { timeout: 20_000 });
    expect(await text('#live-clicks')).toBe('0'); // no click since the page opened
    await redirectOf(endpoints, code, { 'x-forwarded-for': '81.2.69.142', 'user-agent': IPHONE });
    await page.waitForFunction(() => document.getElementById('live-clicks')?.textContent === '1', undefined, { timeout: 20_000 });
    await page.waitForFunction(() => document.getElementById('total-clicks')?.textContent === '6', undefined, { timeout: 20_000 });
    const stats = await api<{ totals: { clicks: number } }>(`/api/v1/links/${code}/stats?from=${dayAgo()}&granularity=minute`);
    expect(stats.totals.clicks).toBe(6);
  });

  it('keeps the session across a reload, forgets the key on log out, and loaded nothing from elsewhere', async () => {
    await page.reload();
    await page.waitForFunction((c) => document.body.dataset.loadedCode === c, code, { timeout: 30_000 });
    await page.click('#logout');
    expect(await page.evaluate(() => sessionStorage.getItem('shortlink.apiKey'))).toBeNull();
    expect(await page.isVisible('#login')).toBe(true);
    expect(foreignRequests).toEqual([]);
    // The one expected error: the refused key of the first test (401 in the console).
    expect(consoleErrors.filter((e) => !/401/.test(e))).toEqual([]);
  });

  it('signs an analyst in with an email, a password and the TOTP code it asks for; the session cookie is HttpOnly; log out ends it', async () => {
    const email = `analyst-${Date.now()}@example.com`;
    const password = 'correct horse battery';
    const call = (base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = { 'x-api-key': API_KEY }) =>
      fetch(`${base}${path}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const invited = (await (await call(endpoints.generation, 'POST', '/api/v1/members', { email, role: 'viewer' })).json()) as {
      invitation: { token: string };
    };
    expect((await call(endpoints.generation, 'POST', '/api/v1/auth/accept', { token: invited.invitation.token, password }, {})).status).toBe(200);
    // The analyst turns on a second factor (through the API, signed in on the analytics app).
    const login = await call(endpoints.analytics, 'POST', '/api/v1/auth/login', { email, password }, {});
    expect(login.status).toBe(200);
    const person = { cookie: (login.headers.get('set-cookie') ?? '').split(';')[0], csrf: ((await login.json()) as { csrfToken: string }).csrfToken };
    const asPerson = { cookie: person.cookie, 'x-csrf-token': person.csrf };
    const { secret } = (await (await call(endpoints.generation, 'POST', '/api/v1/me/second-factor', undefined, asPerson)).json()) as { secret: string };
    const codeAt = (offsetSeconds: number) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });
    expect((await call(endpoints.generation, 'POST', '/api/v1/me/second-factor/confirm', { code: await codeAt(0) }, asPerson)).status).toBe(200);

    await page.goto(`${endpoints.analytics}/dashboard`);
    expect(await page.isVisible('#signin-form')).toBe(true);
    await page.fill('#signin-email', email);
    await page.fill('#signin-password', 'not the password');
    await page.click('#signin-form button[type=submit]');
    await page.waitForFunction(() => document.getElementById('signin-error')?.textContent !== '');
    expect(await text('#signin-error')).toContain('wrong email or password');
    await page.fill('#signin-password', password);
    await page.click('#signin-form button[type=submit]');
    // The password was right: the form asks for the code.
    await page.waitForSelector('#signin-code', { state: 'visible' });
    expect(await text('#signin-error')).toContain('code');
    if (process.env.DASHBOARD_SIGNIN_SCREENSHOT) await page.screenshot({ path: process.env.DASHBOARD_SIGNIN_SCREENSHOT });
    await page.fill('#signin-code', await codeAt(30)); // the next step: not the one the confirmation used
    await page.click('#signin-form button[type=submit]');
    await page.waitForFunction((c) => document.body.dataset.loadedCode === c, code, { timeout: 30_000 });
    expect(await text('#who')).toContain(email);
    const stats = await api<{ totals: { clicks: number } }>(`/api/v1/links/${code}/stats?from=${dayAgo()}&granularity=minute`);
    expect(await text('#total-clicks')).toBe(String(stats.totals.clicks));
    // No key anywhere, and the page cannot read the session (HttpOnly).
    expect(await page.evaluate(() => [sessionStorage.getItem('shortlink.apiKey'), localStorage.length, document.cookie])).toEqual([null, 0, '']);
    const cookies = await browser.cookies(`${endpoints.analytics}/api/v1/me`);
    const session = cookies.find((c) => c.name === 'sl_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/api' });
    // A reload resumes the session (the cookie), with no key.
    await page.reload();
    await page.waitForFunction((c) => document.body.dataset.loadedCode === c, code, { timeout: 30_000 });
    await page.click('#logout');
    await page.waitForSelector('#signin-form', { state: 'visible' });
    // Signed out on the server: the old cookie is refused by both apps.
    for (const base of [endpoints.analytics, endpoints.generation])
      expect((await call(base, 'GET', '/api/v1/me', undefined, { cookie: `sl_session=${session.value}` })).status).toBe(401);
    expect(foreignRequests).toEqual([]);
    expect(consoleErrors.filter((e) => !/401/.test(e))).toEqual([]);
  });
});
