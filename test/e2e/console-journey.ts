/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'fs';
import { createServer } from 'http';
import { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { generate } from 'otplib';
import { BrowserContext, chromium, Page } from 'playwright-core';
import QRCode from 'qrcode';
import { eventually } from '@shortlink/harness';
import { OidcTestProvider } from './sso-journey';
import { API_KEY, BROWSER_UA } from './support';
import { api } from './tenant-journey';
import { CHROMIUM, HEADLESS_CHROMIUM_ARGS } from './chromium';
import { visit } from './visitor-pages-journey';

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'a new and rather longer passphrase';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** How the console draws the authenticator's QR code (apps/console/src/screens/totp-qr.tsx). */
const TOTP_QR_OPTIONS = { type: 'svg', errorCorrectionLevel: 'M', margin: 2 } as const;
/** A sign-in from a phone (another session of the same person). */
const IPHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
/** A 1×1 PNG: a tenant's logo. */
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** What a profile gives the journey besides its addresses. */
export interface ConsoleJourneyOptions {
  /** What the generation app has printed so far (its log lines at LOG_LEVEL=warn). */
  readonly generationOutput: () => string;
  /** The start banner, where the profile prints one (`npm start`). */
  readonly banner?: () => string;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * The console, driven in headless Chromium as a person would, on a profile: accept an
 * invitation, sign in (password, then TOTP, and the tenant's single sign-on through a real OpenID
 * provider's pages), change the password, turn TOTP on and off, create a link with options, find
 * it, edit it, disable it, bulk-delete, import a Shlink CSV, keys (secret once), invite a viewer who
 * then cannot edit; axe-core finds no serious or critical violation on any screen; nothing breaks
 * the page's CSP. `base` is the generation app serving /console, `redirect` the redirect app its
 * links are clicked on; the generation app is started with
 * SSO_ALLOW_INSECURE_ISSUERS=true, TRUSTED_PROXIES=127.0.0.1 (a sign-in "from" a public address)
 * and SSO_CALLBACK_URL and SHORTLINK_CONSOLE_URL at their defaults (http://localhost:<GENERATION_PORT>/…:
 * the SSO and invitation tests open the console there). Desktop is 1280×800, a phone 390×844; every
 * screen is checked with axe at both.
 * CONSOLE_SCREENSHOTS=<dir> keeps a screenshot of each screen there (docs/img: `console-<screen>.png`).
 */
export function describeConsoleJourney(base: () => string, redirect: () => string, options: ConsoleJourneyOptions) {
  describe('console in headless Chromium', () => {
    const stamp = Date.now();
    const ownerEmail = `console-owner-${stamp}@example.com`;
    const viewerEmail = `console-viewer-${stamp}@example.com`;
    const totpEmail = `console-totp-${stamp}@example.com`;
    const alias = `console-${stamp}`;
    let tenantKey: string;
    let tenantId: string;
    let profileDir: string;
    let browser: BrowserContext;
    let page: Page;
    const problems: string[] = [];
    /** Where the page may send requests besides the console's origin (the SSO test adds the provider's). */
    const elsewhere: string[] = ['blob:', 'data:'];
    const screenshots = process.env.CONSOLE_SCREENSHOTS;

    const consoleUrl = () => `${base()}/console`;
    const key = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => api(base(), method, path, tenantKey, body);
    /** A click on a short link as a browser makes it (analytics leaves bots out). */
    const click = (code: string) => fetch(`${redirect()}/${code}`, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA } });

    /** axe-core on the page as it is (run through the debugging protocol, which the CSP does not govern): no serious or critical violation. */
    async function accessible(screen: string, show?: string): Promise<void> {
      await page.evaluate(AXE);
      const violations = await page.evaluate(async () => {
        const w = window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: AxeViolation[] }> } };
        return (await w.axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          help: v.help,
          nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target })),
        }));
      });
      const grave = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect({ screen, grave }).toEqual({ screen, grave: [] });
      if (screenshots) {
        mkdirSync(screenshots, { recursive: true });
        // The part of the screen it is about, at the top of the picture.
        if (show) await page.locator(show).evaluate((el) => el.scrollIntoView({ block: 'start' }));
        await page.screenshot({ path: join(screenshots, `console-${screen}.png`) });
      }
    }

    /** What sticks out of a phone's screen on the right, named (inside a table that scrolls in its own box: allowed, it is one region). */
    const widerThanScreen = () =>
      page.evaluate(() =>
        [...document.querySelectorAll('body *')]
          .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
          .filter((el) => !el.closest('.table-wrap:not(:has(table.stack))'))
          .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${el.className}`)
          .slice(0, 5),
      );

    /**
     * The screen as it is, on a desktop and on a phone: axe finds nothing serious at either size, and nothing sticks out of the phone's screen.
     * `show`: the part a screenshot is of (scrolled to the top), when it is not the top of the page.
     */
    async function bothSizes(screen: string, show?: string): Promise<void> {
      await accessible(screen, show);
      await page.setViewportSize(PHONE);
      try {
        expect({
          screen,
          wider: await widerThanScreen(),
          scrolls: await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth),
        }).toEqual({
          screen,
          wider: [],
          scrolls: false,
        });
        await accessible(`phone-${screen}`, show);
      } finally {
        await page.setViewportSize(DESKTOP);
      }
    }

    async function signIn(email: string, code?: () => Promise<string>, password = PASSWORD): Promise<void> {
      await page.goto(consoleUrl());
      await page.waitForSelector('#sign-in');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.click('#sign-in button[type=submit]');
      if (code) {
        await page.getByLabel('Code from your authenticator app').fill(await code());
        await page.click('#sign-in button[type=submit]');
      }
      await page.waitForSelector('#sign-out');
    }

    async function signOut(): Promise<void> {
      await page.click('#sign-out');
      await page.waitForSelector('#sign-in');
    }

    /** Adds a rule in the link form as a person would: "Add a rule", where it sends to, then each of its conditions. */
    async function addRule(url: string, conditions: ReadonlyArray<{ type: string; name?: string; value?: string }>): Promise<void> {
      const form = page.locator('#link-form');
      await form.getByRole('button', { name: 'Add a rule' }).click();
      const rule = form.locator('li.rule').last();
      // The new rule's URL field has the focus (a keyboard goes on from there).
      await page.waitForFunction(() => {
        const focused = document.activeElement;
        return focused?.getAttribute('type') === 'url' && focused.closest('li.rule') === [...document.querySelectorAll('#link-form li.rule')].pop();
      });
      await rule.getByLabel('Sends to').fill(url);
      for (const [j, c] of conditions.entries()) {
        if (j > 0) await rule.getByRole('button', { name: 'Add a condition' }).click();
        const condition = rule.locator('li.condition').nth(j);
        await condition.getByLabel('Condition').selectOption(c.type);
        if (c.name !== undefined) await condition.getByLabel('Parameter').fill(c.name);
        if (c.value === undefined) continue;
        if (c.type === 'query-param') await condition.getByLabel('Matches').selectOption('equals');
        const value = condition.locator('[id$="-value"]');
        if ((await value.evaluate((el) => el.tagName)) === 'SELECT') await value.selectOption(c.value);
        else await value.fill(c.value);
      }
    }

    const linkRows = () => page.locator('#links tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.code));

    beforeAll(async () => {
      // npm test builds the console before the e2e tier (tools/test-all.sh); alone: npm run console:build.
      const served = await fetch(consoleUrl());
      if (served.status !== 200) throw new Error(`/console answered ${served.status}: ${await served.text()}`);
      const created = await api(base(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: `Console ${stamp}`, plan: 'paid', ownerEmail });
      expect(created.status).toBe(201);
      tenantKey = created.body.apiKey;
      tenantId = created.body.tenant.id;
      profileDir = mkdtempSync(join(tmpdir(), 'shortlink-console-chromium-'));
      browser = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: [...HEADLESS_CHROMIUM_ARGS],
        viewport: DESKTOP,
        // A desktop Chrome's own (headless Chromium names itself, and is rightly taken for a program).
        userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
        acceptDownloads: true,
      });
      await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base() });
      page = browser.pages()[0] ?? (await browser.newPage());
      page.on('dialog', (d) => d.accept());
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => {
        // The API's refusals show up as "Failed to load resource" (the console shows them); anything else is a fault.
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
      });
      page.on('request', (r) => ![base(), ...elsewhere].some((o) => r.url().startsWith(o)) && problems.push(`foreign: ${r.url()}`));
      // The owner's invitation, accepted in the console (the link of the mail: /console/accept-invitation#token=…).
      await page.goto(created.body.owner.invitation.url.replace(/^https?:\/\/[^/]+/, base()));
      expect(created.body.owner.invitation.url).toMatch(/\/console\/accept-invitation#token=inv_/);
      await page.getByLabel('Choose a password').fill('short');
      await page.click('#accept button[type=submit]');
      await page.waitForSelector('#accept .error[data-field=password]');
      await accessible('accept-invitation');
      await page.getByLabel('Choose a password').fill(PASSWORD);
      await page.click('#accept button[type=submit]');
      // Signed in on acceptance.
      await page.waitForSelector('#sign-out');
      // The first key acts for no person: once the tenant has an owner it keeps links, analytics and the audit log only.
      // The owner adopts it (through the API, in a session ended right after), so that it manages people as the owner.
      const login = await api(base(), 'POST', '/api/v1/auth/login', null, { email: ownerEmail, password: PASSWORD });
      const owner = { cookie: (login.headers.get('set-cookie') ?? '').split(';')[0], 'x-csrf-token': login.body.csrfToken as string };
      const adopted = await fetch(`${base()}/api/v1/keys/${created.body.key.id}/transfer`, {
        method: 'POST',
        headers: { ...owner, 'content-type': 'application/json' },
        body: JSON.stringify({ memberId: created.body.owner.member.id }),
      });
      expect(adopted.status).toBe(200);
      expect((await fetch(`${base()}/api/v1/auth/logout`, { method: 'POST', headers: owner })).status).toBe(204);
      await signOut();
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    });

    afterEach(() => {
      // No CSP violation, script error or request elsewhere in any test.
      expect(problems.splice(0)).toEqual([]);
    });

    it('signs in with a password (a wrong one is refused beside the form), lists my sessions, signs out', async () => {
      await page.goto(consoleUrl());
      await page.waitForSelector('#sign-in');
      await bothSizes('sign-in');
      // The console asks who is signed in at every load: for a visitor who is not, that is no warning in the log.
      const meLines = options
        .generationOutput()
        .split('\n')
        .filter((line) => line.includes('/api/v1/me') && line.includes('401'));
      expect(meLines).toEqual([]);
      // Single sign-on of a tenant without a provider: said beside the field, the page stays.
      await page.locator('#sso').getByLabel('Tenant id').fill(tenantId);
      await page.click('#sso button[type=submit]');
      await page.waitForSelector('#sso .error');
      expect(await page.locator('#sso .error').innerText()).toMatch(/single sign-on|SSO|provider/i);
      expect(new URL(page.url()).pathname).toBe('/console');
      await page.getByLabel('Email').fill(ownerEmail);
      await page.getByLabel('Password').fill('not the password at all');
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#sign-in-error[data-code=UNAUTHENTICATED]');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#sign-out');
      expect(await page.locator('#role').innerText()).toBe('owner');
      // The session is an HttpOnly cookie: nothing for a script to read.
      expect(await page.evaluate(() => [document.cookie, localStorage.length, sessionStorage.length])).toEqual(['', 0, 0]);
      expect(await page.locator('header nav a').allInnerTexts()).toEqual([
        'Links',
        'Analytics',
        'Conversions',
        'Import',
        'Domains',
        'API keys',
        'Members',
        'Audit log',
        'My sessions',
        'Account',
      ]);
      // A second session of the same person, on a phone in the United Kingdom (a proxy of ours says the address), ended from here.
      const other = await api(
        base(),
        'POST',
        '/api/v1/auth/login',
        null,
        { email: ownerEmail, password: PASSWORD },
        {
          'user-agent': IPHONE_UA,
          'x-forwarded-for': '81.2.69.142',
        },
      );
      const otherCookie = (other.headers.get('set-cookie') ?? '').split(';')[0];
      const otherMe = () => fetch(`${base()}/api/v1/me`, { headers: { cookie: otherCookie } }).then((r) => r.status);
      expect(await otherMe()).toBe(200);
      await page.click('text=My sessions');
      await page.waitForSelector('#sessions tbody tr[data-current=true]');
      await page.waitForFunction(() => document.querySelectorAll('#sessions tbody tr').length === 2);
      // Each session says what it was opened on and roughly where: the browser's own (127.0.0.1 is no place), the phone's.
      const rows = await page
        .locator('#sessions tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [tr.querySelector('.device')?.textContent, tr.querySelector('.place')?.textContent]));
      expect(rows).toEqual([
        ['Phone · Mobile Safari on iOS', 'United Kingdom'],
        ['Computer · Chrome on Linux', 'Unknown place'],
      ]);
      await bothSizes('sessions');
      await page.getByRole('button', { name: 'End session' }).click();
      await page.waitForFunction(() => document.querySelectorAll('#sessions tbody tr').length === 1);
      await eventually('the other session ended', async () => (await otherMe()) === 401, 5_000, 200);
      await signOut();
      expect(await page.evaluate(async () => (await fetch('/api/v1/me')).status)).toBe(401);
      await signIn(ownerEmail);
    });

    it("signs in with the tenant's single sign-on: the provider's own page in the browser, then back in the console, signed in", async () => {
      // The app's SSO callback and the console it returns to are at their defaults, http://localhost:<port>/…:
      // the browser opens the console there (a host of its own, so its own session cookie).
      const local = base().replace(/^http:\/\/127\.0\.0\.1:/, 'http://localhost:');
      const provider = await OidcTestProvider.start(`${local}/api/v1/auth/sso/callback`);
      // oidc-provider's own login page asks Google for a font: not the console's request, and not sent (the test stays offline).
      const fonts = 'https://fonts.googleapis.com/';
      await page.route(`${fonts}**`, (r) => r.abort());
      elsewhere.push(local, provider.issuer, fonts);
      try {
        const created = await api(base(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: `Console SSO ${stamp}`, plan: 'paid' });
        expect(created.status).toBe(201);
        const ssoDomain = `sso-${stamp}.example.com`;
        const settings = await api(base(), 'PUT', '/api/v1/sso', created.body.apiKey, {
          issuer: provider.issuer,
          clientId: provider.clientId,
          clientSecret: provider.clientSecret,
          allowedDomains: [ssoDomain],
          defaultRole: 'editor',
        });
        expect(settings.status).toBe(200);
        expect(settings.body.callbackUrl).toBe(`${local}/api/v1/auth/sso/callback`);

        await page.goto(`${local}/console`);
        await page.waitForSelector('#sso');
        await page.locator('#sso').getByLabel('Tenant id').fill(created.body.tenant.id);
        await page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
        // The provider's login page (oidc-provider's development interactions take any password), then its consent page.
        await page.waitForURL((u) => u.origin === provider.issuer);
        await page.locator('input[name=login]').fill(`ana@${ssoDomain}`);
        await page.locator('input[name=password]').fill('any password');
        await page.getByRole('button', { name: 'Sign-in' }).click();
        await page.getByRole('button', { name: 'Continue' }).click();
        // Back in the console (SSO's success URL is SHORTLINK_CONSOLE_URL/), signed in as the new editor.
        await page.waitForURL(`${local}/console/`);
        await page.waitForSelector('#sign-out');
        expect(await page.locator('#who').innerText()).toContain(`ana@${ssoDomain}`);
        expect(await page.locator('#role').innerText()).toBe('editor');
        expect(await page.evaluate(async () => (await (await fetch('/api/v1/me')).json()).tenant.name)).toBe(`Console SSO ${stamp}`);
        await signOut();
        // The provider's answer opened again later (the back button, an old tab): the console's sign-in says why, not a page of JSON.
        await page.goto(`${local}/api/v1/auth/sso/callback?code=used-already&state=${'s'.repeat(43)}`);
        await page.waitForSelector('#sso-error');
        expect(await page.locator('#sso-error').getAttribute('data-code')).toBe('SSO_STATE_MISMATCH');
        expect(await page.locator('#sso-error').innerText()).toContain('Start it again here');
        expect(new URL(page.url()).search).toBe(''); // taken out of the address: a reload does not show it again
        await accessible('sso-failed');
      } finally {
        await provider.stop();
        await page.unroute(`${fonts}**`);
        elsewhere.splice(elsewhere.indexOf(local));
      }
      // The owner's session at the console's own address is untouched.
      await page.goto(consoleUrl());
      await page.waitForSelector('#sign-out');
      expect(await page.locator('#role').innerText()).toBe('owner');
    });

    it("stays on the person's account when a page of another site auto-submits a sign-in form with its own account (login CSRF)", async () => {
      const attackerEmail = `console-attacker-${stamp}@example.com`;
      const attacker = await api(base(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: `Attacker ${stamp}`, plan: 'free', ownerEmail: attackerEmail });
      expect(attacker.status).toBe(201);
      expect((await api(base(), 'POST', '/api/v1/auth/accept', null, { token: attacker.body.owner.invitation.token, password: PASSWORD })).status).toBe(200);
      // The attacker's page, on another site (localhost, while the console is at 127.0.0.1): forms posted by script on load.
      const login = `${base()}/api/v1/auth/login`;
      const field = (name: string, value: string) => `<input type="hidden" name="${name}" value="${value}">`;
      const pages: Record<string, string> = {
        '/urlencoded': `<form method="post" action="${login}">${field('email', attackerEmail)}${field('password', PASSWORD)}</form>`,
        // text/plain sends `name=value`: a name ending in `"x":"` and a value of `"}` make the body JSON.
        '/text-plain': `<form method="post" enctype="text/plain" action="${login}"><input type="hidden" name='{"email":"${attackerEmail}","password":"${PASSWORD}","x":"' value='"}'></form>`,
      };
      const site = createServer((req, res) => {
        const form = pages[req.url ?? ''];
        res.writeHead(form ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
        res.end(form ? `<!doctype html><title>Win a prize</title>${form}<script>document.forms[0].submit()</script>` : '');
      });
      await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
      const attackerSite = `http://localhost:${(site.address() as AddressInfo).port}`;
      elsewhere.push(attackerSite);
      try {
        for (const path of Object.keys(pages)) {
          const answered = page.waitForResponse((r) => r.url() === login);
          // The page posts itself away while it loads: wait for the post's answer, not for the page.
          await page.goto(`${attackerSite}${path}`, { waitUntil: 'commit' });
          const status = (await answered).status();
          await page.waitForLoadState();
          // Back in the console: still the owner, in the owner's tenant.
          await page.goto(consoleUrl());
          await page.waitForSelector('#sign-out');
          expect([path, await page.locator('#who').innerText()]).toEqual([path, expect.stringContaining(ownerEmail)]);
          expect(await page.locator('#role').innerText()).toBe('owner');
          expect(await page.evaluate(async () => (await (await fetch('/api/v1/me')).json()).tenant.id)).toBe(tenantId);
          expect([path, status]).toEqual([path, 415]);
        }
      } finally {
        elsewhere.splice(elsewhere.indexOf(attackerSite));
        // Chromium keeps (and opens ahead) connections to the site: closed here, not waited for.
        site.closeAllConnections();
        await new Promise((r) => site.close(r));
      }
    });

    it('turns on TOTP in the console, signs in with the password and the code of the authenticator app, moves it to another app (only with it), turns it off', async () => {
      const invited = await key('POST', '/api/v1/members', { email: totpEmail, role: 'editor' });
      const accepted = await api(base(), 'POST', '/api/v1/auth/accept', null, { token: invited.body.invitation.token, password: PASSWORD });
      // Accepting signs in: that session (of this request, not the browser) ends here, the browser signs in below.
      const acceptedCookie = (accepted.headers.get('set-cookie') ?? '').split(';')[0];
      const ended = await fetch(`${base()}/api/v1/auth/logout`, {
        method: 'POST',
        headers: { cookie: acceptedCookie, 'x-csrf-token': accepted.body.csrfToken },
      });
      expect(ended.status).toBe(204);
      await signOut();
      await signIn(totpEmail);
      // Password and two-step sign-in are on the Account page, not among the sessions.
      await page.click('header >> text=Account');
      await page.waitForSelector('#account-title');
      expect(await page.locator('#sessions').count()).toBe(0);
      await page.click('#second-factor-start');
      const secret = await page.locator('#totp-secret').innerText();
      const uri = (await page.locator('#totp-uri').getAttribute('href'))!;
      expect(uri).toContain(`secret=${secret}`);
      // A QR code of the otpauth URI, drawn in the page (nothing fetched): the one the qrcode package draws for that URI.
      const qr = page.locator('#totp-qr');
      await qr.waitFor();
      expect(await qr.evaluate((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
      const drawn = decodeURIComponent((await qr.getAttribute('src'))!.replace(/^data:image\/svg\+xml;charset=utf-8,/, ''));
      expect(drawn).toBe(await QRCode.toString(uri, TOTP_QR_OPTIONS));
      await bothSizes('second-factor-qr');
      const codeAt = (offset: number) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset });
      await page.locator('#second-factor-confirm').getByLabel('Code from the app').fill('000000');
      await page.click('#second-factor-confirm button[type=submit]');
      await page.waitForSelector('#second-factor-confirm .error');
      await page
        .locator('#second-factor-confirm')
        .getByLabel('Code from the app')
        .fill(await codeAt(0));
      await page.click('#second-factor-confirm button[type=submit]');
      const recoveryCodes = (await page.locator('#recovery-codes').innerText()).split(' ');
      expect(recoveryCodes).toHaveLength(10);
      await page.waitForSelector('#second-factor[data-enabled=true]');
      await accessible('second-factor');

      await signOut();
      await page.getByLabel('Email').fill(totpEmail);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.click('#sign-in button[type=submit]');
      await page.getByLabel('Code from your authenticator app').fill('000000');
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#sign-in .error');
      // The next step's code (one step of drift is accepted; the one the confirmation used is spent).
      await page.getByLabel('Code from your authenticator app').fill(await codeAt(30));
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#sign-out');
      expect(await page.locator('#role').innerText()).toBe('editor');
      // An editor has no members or audit log; its own keys it manages.
      expect(await page.locator('header nav a').allInnerTexts()).toEqual([
        'Links',
        'Analytics',
        'Conversions',
        'Import',
        'Domains',
        'API keys',
        'My sessions',
        'Account',
      ]);

      // Moved to another app: the session alone is refused beside the field; with a recovery code, a new secret to confirm.
      await page.click('header >> text=Account');
      await page.waitForSelector('#second-factor[data-enabled=true]');
      const off = page.locator('#second-factor-disable');
      await page.click('#second-factor-move');
      await off.locator('.error[data-field=code]').waitFor();
      await off.getByRole('button', { name: 'Use a recovery code instead' }).click();
      await off.getByLabel('Recovery code').fill(recoveryCodes[1]);
      await page.click('#second-factor-move');
      const moved = await page.locator('#totp-secret').innerText();
      expect(moved).not.toBe(secret);
      await page
        .locator('#second-factor-confirm')
        .getByLabel('Code from the app')
        .fill(await generate({ secret: moved, epoch: Math.floor(Date.now() / 1000) }));
      await page.click('#second-factor-confirm button[type=submit]');
      const movedRecoveryCodes = (await page.locator('#recovery-codes').innerText()).split(' ');
      expect(movedRecoveryCodes).toHaveLength(10);
      await page.waitForSelector('#second-factor[data-enabled=true]');

      // Turned off again in the console: a wrong code is refused beside its field, a recovery code (of the new app's set) does it.
      await off.getByLabel('Code from the app').fill('000000');
      await page.click('#second-factor-off');
      await off.locator('.error[data-field=code]').waitFor();
      expect(await off.getByLabel('Code from the app').getAttribute('aria-invalid')).toBe('true');
      await off.getByRole('button', { name: 'Use a recovery code instead' }).click();
      await off.getByLabel('Recovery code').fill(movedRecoveryCodes[0]);
      await accessible('second-factor-off');
      await page.click('#second-factor-off');
      await page.waitForSelector('#second-factor[data-enabled=false]');
      expect(await page.locator('#second-factor .notice').innerText()).toBe('Two-step sign-in is off.');
      expect(await page.evaluate(async () => (await fetch('/api/v1/me/second-factor')).json())).toEqual({ enabled: false, pending: false });
      // The password alone signs in again.
      await signOut();
      await signIn(totpEmail);
    });

    it('changes my password: a wrong current one and a weak new one are refused beside their field; my other sessions end', async () => {
      // Signed in as the TOTP person (the test before), also on another device.
      const other = await api(base(), 'POST', '/api/v1/auth/login', null, { email: totpEmail, password: PASSWORD });
      expect(other.status).toBe(200);
      const otherCookie = (other.headers.get('set-cookie') ?? '').split(';')[0];
      const otherMe = () => fetch(`${base()}/api/v1/me`, { headers: { cookie: otherCookie } }).then((r) => r.status);
      expect(await otherMe()).toBe(200);
      await page.click('text=My sessions');
      await page.waitForFunction(() => document.querySelectorAll('#sessions tbody tr').length === 2);
      await page.click('header >> text=Account');
      const form = page.locator('#password-form');
      const fill = async (current: string, next: string, again = next) => {
        await form.getByLabel('Current password').fill(current);
        await form.getByLabel('New password', { exact: true }).fill(next);
        await form.getByLabel('New password again').fill(again);
        await page.click('#change-password');
      };
      await fill('not my password at all', NEW_PASSWORD);
      await form.locator('.error[data-field=currentPassword]').waitFor();
      expect(await form.getByLabel('Current password').getAttribute('aria-invalid')).toBe('true');
      await fill(PASSWORD, 'password1234'); // on the list of common passwords
      await form.locator('.error[data-field=newPassword]').waitFor();
      expect(await form.locator('.error[data-field=currentPassword]').count()).toBe(0);
      await bothSizes('password');
      await fill(PASSWORD, NEW_PASSWORD, `${NEW_PASSWORD}!`); // not the same twice: said before anything is sent
      await form.locator('.error[data-field=repeatPassword]').waitFor();
      // With the keyboard alone: each field in turn, Enter sends.
      await form.getByLabel('Current password').focus();
      for (const [value, next] of [
        [PASSWORD, 'Tab'],
        [NEW_PASSWORD, 'Tab'],
        [NEW_PASSWORD, 'Enter'],
      ]) {
        await page.keyboard.press('Control+A');
        await page.keyboard.type(value);
        await page.keyboard.press(next);
      }
      await page.waitForSelector('#password-changed');
      expect(await page.locator('#password-changed').innerText()).toBe('Password changed; 1 other session ended. This one goes on.');
      expect(await form.getByLabel('Current password').inputValue()).toBe('');
      await page.click('text=My sessions');
      await page.waitForFunction(() => document.querySelectorAll('#sessions tbody tr').length === 1);
      await eventually('the other session ended', async () => (await otherMe()) === 401, 5_000, 200);
      // The old password no longer signs in; the new one does.
      await signOut();
      await page.getByLabel('Email').fill(totpEmail);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#sign-in-error[data-code=UNAUTHENTICATED]');
      await signIn(totpEmail, undefined, NEW_PASSWORD);
      await signOut();
      await signIn(ownerEmail);
    });

    it('creates a link with every option the API has (app targets, crawlers, how long a password is remembered, tags picked from the tenant’s); a taken alias is shown beside the alias field', async () => {
      await key('POST', '/api/v1/links', { url: 'https://example.com/taken', alias: `${alias}-taken`, tags: ['spring', 'news'] });
      await page.goto(`${consoleUrl()}#/links`);
      await page.click('#new-link');
      await page.waitForSelector('#link-form');
      const form = page.locator('#link-form');
      // The tenant's tags, offered to pick (from GET /api/v1/tags).
      await form.getByRole('button', { name: 'Add the tag spring' }).waitFor();
      await bothSizes('link-new');
      await form.getByLabel('Target URL').fill('https://example.com/console/spring?ref=console');
      await form.getByLabel('Alias (optional)').fill(`${alias}-taken`);
      await form.getByLabel('Title', { exact: true }).fill('Spring sale from the console');
      await form.getByLabel('Tags', { exact: true }).fill('console');
      await form.getByLabel('Tags', { exact: true }).press('Enter');
      await form.getByRole('button', { name: 'Add the tag spring' }).click();
      expect(await form.locator('ul.chips .tag').allInnerTexts()).toEqual(['console', 'spring']);
      await form.getByLabel('Max clicks').fill('500');
      await form.getByLabel('Password (optional)').fill('open sesame');
      await form.getByLabel('Remember the password for (hours)').fill('2');
      await form.getByLabel('utm_source').fill('newsletter');
      await form.getByLabel('utm_campaign').fill('spring');
      await form.getByLabel('Forward the visitor’s query string to the target').uncheck();
      await form.getByLabel('Card title').fill('Spring sale');
      await form.getByLabel('Card description').fill('Everything half price');
      await form.locator('summary').click(); // more options
      await form.getByLabel('Visitor limit (redirects per address and minute)').fill('30');
      // Device and country targets are redirect rules of one condition.
      await addRule('https://example.com/console/ios', [{ type: 'device', value: 'ios' }]);
      await addRule('https://example.de/spring', [{ type: 'country', value: 'de' }]);
      await form.getByLabel('A/B variants').fill('https://example.com/console/a 70\nhttps://example.com/console/b 30');
      await form.getByLabel('iOS app').fill('myapp://spring');
      await form.getByLabel('Let crawlers fetch this link').check();
      await page.click('#save-link');
      const aliasError = page.locator('#link-form .error[data-field=alias]');
      await aliasError.waitFor();
      expect(await aliasError.innerText()).toContain('taken');
      expect(await form.getByLabel('Alias (optional)').getAttribute('aria-invalid')).toBe('true');

      await form.getByLabel('Alias (optional)').fill(alias);
      await page.click('#save-link');
      await page.waitForSelector('#link-details');
      // The link's page shows every option the form set, and its QR code at a glance.
      const shown = async (field: string) => page.locator(`dd[data-field="${field}"]`).innerText();
      expect(await shown('Device targets')).toBe('iOS: https://example.com/console/ios');
      expect(await shown('Country targets')).toBe('DE (Germany): https://example.de/spring');
      expect(await shown('Redirect rules')).toBe('1. device ios → https://example.com/console/ios\n2. country DE → https://example.de/spring');
      expect(await shown('A/B variants')).toBe('70: https://example.com/console/a\n30: https://example.com/console/b');
      expect(await shown('Visitor limit')).toBe('30 redirects per address and minute');
      expect(await shown('App targets')).toBe('iOS: myapp://spring');
      expect(await shown('Crawlers')).toBe('may fetch it (listed in robots.txt)');
      expect(await shown('Password')).toBe('yes, remembered 2 h after it was typed');
      await page.waitForFunction(() => ((document.getElementById('link-qr') as HTMLImageElement | null)?.naturalWidth ?? 0) > 0);
      expect(await page.locator('#link-qr').getAttribute('src')).toMatch(/^blob:/);
      await bothSizes('link');
      const link = (await key('GET', `/api/v1/links/${alias}`)).body;
      expect(link).toMatchObject({
        code: alias,
        url: 'https://example.com/console/spring?ref=console',
        title: 'Spring sale from the console',
        tags: ['console', 'spring'],
        maxClicks: 500,
        passwordProtected: true,
        utm: { source: 'newsletter', campaign: 'spring' },
        forwardQuery: false,
        social: { title: 'Spring sale', description: 'Everything half price' },
        status: 'active',
        redirectType: 302,
        clicksPerIpPerMinute: 30,
        deviceTargets: { ios: 'https://example.com/console/ios' },
        geoTargets: { DE: 'https://example.de/spring' },
        variants: [
          { url: 'https://example.com/console/a', weight: 70 },
          { url: 'https://example.com/console/b', weight: 30 },
        ],
        appTargets: { ios: 'myapp://spring' },
        crawlable: true,
        passwordRememberHours: 2,
      });
      expect(await page.locator('#short-url').innerText()).toBe(link.shortUrl);
      // Copy the short URL; download the QR code as SVG and as PNG.
      await page.click('#copy');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link.shortUrl);
      for (const [button, format, magic] of [
        ['#qr-svg', 'svg', '<svg'],
        ['#qr-png', 'png', '\x89PNG'],
      ] as const) {
        const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
        expect(download.suggestedFilename()).toBe(`${alias}.${format}`);
        const file = await download.path();
        expect(readFileSync(file!).subarray(0, 4).toString('latin1')).toContain(magic.slice(0, 4));
      }
      // The taken alias's link, whose tag was offered, goes: the filters below find this link alone.
      expect((await key('DELETE', `/api/v1/links/${alias}-taken`)).status).toBe(204);
    });

    it('finds it: newest first, search, tag, status, domain and health filters, cursor paging', async () => {
      for (let i = 0; i < 26; i++) await key('POST', '/api/v1/links', { url: `https://example.com/console/page/${i}`, tags: ['paging'] });
      await page.goto(`${consoleUrl()}#/links`);
      await page.waitForSelector('#links tbody tr');
      // Newest first, 25 a page: the 26 paging links fill the first page.
      expect((await linkRows()).length).toBe(25);
      expect(await linkRows()).not.toContain(alias);
      await page.click('#more');
      await page.waitForFunction((a) => [...document.querySelectorAll('#links tbody tr')].some((tr) => (tr as HTMLElement).dataset.code === a), alias);
      await bothSizes('links');

      await page.getByRole('searchbox', { name: 'Search' }).fill('spring sale from');
      await page.click('#apply-filters');
      await page.waitForFunction(() => location.hash.includes('q='));
      await page.waitForFunction(() => document.querySelectorAll('#links tbody tr').length === 1);
      expect(await linkRows()).toEqual([alias]);
      await page.goto(`${consoleUrl()}#/links?tag=paging`);
      await page.waitForFunction(() => document.querySelectorAll('#links tbody tr').length === 25);
      await page.goto(`${consoleUrl()}#/links?tag=spring&status=active`);
      await page.waitForFunction(() => document.querySelectorAll('#links tbody tr').length === 1);
      // Export the filter's links: the CSV `npm run links:export` writes (password hash included, so it imports again).
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export')]);
      expect(download.suggestedFilename()).toBe('links.csv');
      const exported = readFileSync((await download.path())!, 'utf8')
        .trim()
        .split('\n');
      expect(exported[0]).toMatch(/^url,alias,domain,title,tags,expiresAt,/);
      expect(exported).toHaveLength(2);
      expect(exported[1]).toMatch(new RegExp(`^https://example.com/console/spring\\?ref=console,${alias},`));
      expect(exported[1]).toContain('$argon2id$');
      expect(await page.locator('#export-status').innerText()).toBe('Exported 1 links');
      const domain = (await key('GET', `/api/v1/links/${alias}`)).body.domain as string;
      // The default domain is one of the Domain filter's choices (the domains API lists it for operators only), and it filters.
      await page.goto(`${consoleUrl()}#/links?tag=spring&status=active&domain=${domain}`);
      await page.waitForFunction((a) => (document.querySelector('#links tbody tr') as HTMLElement | null)?.dataset.code === a, alias);
      await page.waitForFunction((d) => [...document.querySelectorAll('#f-domain option')].some((o) => (o as HTMLOptionElement).value === d), domain);
      expect(await page.locator('#f-domain').inputValue()).toBe(domain);
      expect(await page.locator(`#f-domain option[value="${domain}"]`).innerText()).toBe(`${domain} (default)`);
      await page.goto(`${consoleUrl()}#/links?tag=spring&status=disabled&domain=${domain}`);
      await page.waitForSelector('#no-links');
      // Health (the dead-link checks): the link is under its own health and not under another. Its target
      // (example.com, which does not resolve here) is usually not checked yet, but on the real stack the safety
      // suite's checks, beside this one on the shared meta database, may have found it broken already.
      const health = ((await key('GET', `/api/v1/links/${alias}`)).body.health as { state: string } | null)?.state ?? 'unchecked';
      await page.goto(`${consoleUrl()}#/links?tag=spring&health=${health}`);
      await page.waitForFunction((a) => (document.querySelector('#links tbody tr') as HTMLElement | null)?.dataset.code === a, alias);
      expect(await page.locator('#f-health').inputValue()).toBe(health);
      await page.goto(`${consoleUrl()}#/links?tag=spring&health=${health === 'broken' ? 'unchecked' : 'broken'}`);
      await page.waitForSelector('#no-links');
    });

    it('shows the link its address names: another link, or "not found" for a missing one, never the last one shown', async () => {
      const other = `${alias}-other`;
      expect((await key('POST', '/api/v1/links', { url: 'https://example.com/console/other', alias: other, title: 'The other one' })).status).toBe(201);
      await page.goto(`${consoleUrl()}#/links/${alias}`);
      await page.waitForSelector(`#link-screen[data-code="${alias}"]`);
      // Within the page, as a click on a link or the back button changes the address.
      await page.evaluate((code) => (location.hash = `#/links/${code}`), other);
      await page.waitForSelector(`#link-screen[data-code="${other}"]`);
      expect(await page.locator('dd[data-field=Target]').innerText()).toBe('https://example.com/console/other');
      await page.evaluate(() => (location.hash = '#/links/stale-b-missing'));
      await page.waitForSelector('#link-screen[data-state=missing]');
      expect(await page.locator('#link-title').innerText()).toBe('Link not found');
      expect(await page.locator('#link-error').getAttribute('data-code')).toBe('LINK_NOT_FOUND');
      expect(await page.locator('#edit, #disable, #delete, #link-details').count()).toBe(0);
      await bothSizes('link-not-found');
      // And back: the link again, its own.
      await page.goBack();
      await page.waitForSelector(`#link-screen[data-code="${other}"]`);
      expect(await page.locator('#link-title').innerText()).toBe('The other one');
    });

    it("shows a link's clicks at a glance: on its page and in the list", async () => {
      const code = `${alias}-clicked`;
      expect((await key('POST', '/api/v1/links', { url: 'https://example.com/console/clicked', alias: code })).status).toBe(201);
      for (let i = 0; i < 2; i++) expect((await click(code)).status).toBe(302);
      await page.goto(`${consoleUrl()}#/links/${code}`);
      await eventually(
        'the two clicks on the link page',
        async () => {
          await page.reload();
          await page.waitForFunction(() => !['…', ''].includes(document.getElementById('link-clicks-total')?.textContent ?? ''));
          return (await page.locator('#link-clicks-total').innerText()) === '2';
        },
        30_000,
        500,
      );
      expect(await page.locator('#link-visitors').innerText()).toMatch(/^1 unique visitor ·/);
      await bothSizes('link-clicks');
      await page.goto(`${consoleUrl()}#/links?q=${code}`);
      await page.waitForSelector(`#links tr[data-code="${code}"] td.clicks[data-clicks="2"]`);
      expect(await page.locator(`#links tr[data-code="${code}"] td.clicks`).innerText()).toMatch(/2$/);
    });

    it('edits it and disables it (the API says so), then enables it again', async () => {
      // A 301 (set through the API): the form opens on it, and a save keeps it.
      expect((await key('PATCH', `/api/v1/links/${alias}`, { redirectType: 301 })).status).toBe(200);
      await page.goto(`${consoleUrl()}#/links/${alias}`);
      await page.click('#edit');
      await page.waitForSelector('#link-form');
      await bothSizes('link-edit');
      const form = page.locator('#link-form');
      expect(await form.getByLabel('Title', { exact: true }).inputValue()).toBe('Spring sale from the console');
      expect(await form.getByLabel('Redirect type').inputValue()).toBe('301');
      await form.getByLabel('Title', { exact: true }).fill('Summer sale from the console');
      await form.getByRole('button', { name: 'Remove the tag spring' }).click();
      await form.getByLabel('Tags', { exact: true }).fill('summer');
      await form.getByLabel('Max clicks').fill('');
      await page.click('#save-link');
      await page.waitForSelector('#link-details');
      expect(await page.locator('#link-title').innerText()).toBe('Summer sale from the console');
      expect((await key('GET', `/api/v1/links/${alias}`)).body).toMatchObject({
        title: 'Summer sale from the console',
        tags: ['console', 'summer'],
        maxClicks: null,
        redirectType: 301,
      });
      expect((await key('PATCH', `/api/v1/links/${alias}`, { redirectType: 302 })).status).toBe(200);
      // An invalid target is refused beside the field, the link unchanged.
      await page.click('#edit');
      await page.locator('#link-form').getByLabel('Target URL').fill('ftp://example.com/nope');
      await page.click('#save-link');
      await page.waitForSelector('#link-form .error[data-field=url]');
      await page.goto(`${consoleUrl()}#/links/${alias}`);

      await page.click('#disable');
      await page.waitForSelector('#enable');
      expect((await key('GET', `/api/v1/links/${alias}`)).body.status).toBe('disabled');
      await page.goto(`${consoleUrl()}#/links?status=disabled`);
      await page.waitForFunction((a) => (document.querySelector('#links tbody tr') as HTMLElement | null)?.dataset.code === a, alias);
      await page.goto(`${consoleUrl()}#/links/${alias}`);
      await page.click('#enable');
      await page.waitForSelector('#disable');
      expect((await key('GET', `/api/v1/links/${alias}`)).body.status).toBe('active');
    });

    it('creates a link with redirect rules and an app target, reorders and edits a rule; the redirect follows them; tags picked; analytics from its row', async () => {
      const code = `${alias}-rules`;
      // A tag of the tenant's to pick (another link has it).
      expect((await key('POST', '/api/v1/links', { url: 'https://example.com/console/tagged', alias: `${code}-tagged`, tags: ['rules-picked'] })).status).toBe(
        201,
      );
      await page.goto(`${consoleUrl()}#/links`);
      await page.click('#new-link');
      await page.waitForSelector('#link-form');
      const form = page.locator('#link-form');
      await form.getByLabel('Target URL').fill('https://example.com/console/rules');
      await form.getByLabel('Alias (optional)').fill(code);
      await form.getByLabel('Title', { exact: true }).fill('Rules from the console');
      // The tag picker: what is typed narrows the tenant's tags; one is picked, a new one typed.
      await form.getByLabel('Tags', { exact: true }).fill('rules-p');
      await form.getByRole('button', { name: 'Add the tag rules-picked' }).click();
      await form.getByLabel('Tags', { exact: true }).fill('rules-new');
      await form.getByLabel('Tags', { exact: true }).press('Enter');
      expect(await form.locator('ul.chips .tag').allInnerTexts()).toEqual(['rules-picked', 'rules-new']);
      await form.locator('summary').click(); // more options
      expect(await page.locator('#no-rules').innerText()).toContain('No rules');
      // Two rules, the first by language (a value the API refuses first), the second by a query parameter; an iOS app.
      await addRule('https://example.com/console/es', [{ type: 'language', value: 'español!' }]);
      await addRule('https://example.com/console/promo', [{ type: 'query-param', name: 'promo', value: 'spring' }]);
      await form.getByLabel('iOS app').fill('myapp://rules');
      await page.click('#save-link');
      // The API's problem beside the field it names, nowhere else.
      const valueError = page.locator('#link-form .error[data-field="redirectRules.0.conditions.0.value"]');
      await valueError.waitFor();
      expect(await valueError.innerText()).toBe('Must be a language tag such as "de" or "de-AT"');
      const languageValue = form.locator('li.rule').nth(0).locator('li.condition').nth(0).getByLabel('Value');
      expect(await languageValue.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#link-form .error').count()).toBe(1);
      await accessible('link-rules-error', '#redirect-rules');
      await languageValue.fill('es');
      await page.click('#save-link');
      await page.waitForSelector(`#link-screen[data-code="${code}"] #link-details`);
      const shown = async (field: string) => page.locator(`dd[data-field="${field}"]`).innerText();
      expect(await shown('Redirect rules')).toBe('1. language es → https://example.com/console/es\n2. query promo=spring → https://example.com/console/promo');
      expect(await shown('App targets')).toBe('iOS: myapp://rules');
      expect((await key('GET', `/api/v1/links/${code}`)).body).toMatchObject({
        tags: ['rules-picked', 'rules-new'],
        appTargets: { ios: 'myapp://rules' },
        redirectRules: [
          { url: 'https://example.com/console/es', conditions: [{ type: 'language', value: 'es' }] },
          { url: 'https://example.com/console/promo', conditions: [{ type: 'query-param', name: 'promo', value: 'spring' }] },
        ],
      });
      // The redirect: the first rule that holds wins; none: the target.
      const location = async (path: string, language = 'en') =>
        (await fetch(`${redirect()}/${path}`, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA, 'accept-language': language } })).headers.get(
          'location',
        );
      expect(await location(`${code}?promo=spring`, 'es')).toBe('https://example.com/console/es?promo=spring');
      expect(await location(`${code}?promo=spring`)).toBe('https://example.com/console/promo?promo=spring');
      expect(await location(code, 'es')).toBe('https://example.com/console/es');
      expect(await location(code)).toBe('https://example.com/console/rules');

      // Reopened: the rules as saved; the second moved up, the language one edited.
      await page.click('#edit');
      await page.waitForSelector('#link-form');
      const rules = form.locator('li.rule');
      expect(await rules.count()).toBe(2);
      expect(await rules.nth(0).getByLabel('Sends to').inputValue()).toBe('https://example.com/console/es');
      expect(await rules.nth(1).locator('li.condition').getByLabel('Parameter').inputValue()).toBe('promo');
      await form.getByRole('button', { name: 'Move rule 2 up' }).click();
      expect(await rules.nth(0).getByLabel('Sends to').inputValue()).toBe('https://example.com/console/promo');
      // The moved rule's button keeps the focus (it is now rule 1's, whose Up is disabled: its Down).
      await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Move rule 1 down');
      await rules.nth(1).getByLabel('Sends to').fill('https://example.com/console/de');
      await rules.nth(1).locator('li.condition').getByLabel('Value').fill('de');
      // A third rule, added and removed again.
      await addRule('https://example.com/console/gone', [{ type: 'device', value: 'android' }]);
      await form.getByRole('button', { name: 'Remove rule 3' }).click();
      expect(await rules.count()).toBe(2);
      await bothSizes('link-rules', '#redirect-rules');
      await page.click('#save-link');
      await page.waitForSelector(`#link-screen[data-code="${code}"] #link-details`);
      expect((await key('GET', `/api/v1/links/${code}`)).body.redirectRules).toEqual([
        { url: 'https://example.com/console/promo', conditions: [{ type: 'query-param', name: 'promo', value: 'spring' }] },
        { url: 'https://example.com/console/de', conditions: [{ type: 'language', value: 'de' }] },
      ]);
      await eventually(
        'the redirect following the rules as reordered',
        async () => (await location(`${code}?promo=spring`, 'de')) === 'https://example.com/console/promo?promo=spring',
        15_000,
        250,
      );
      expect(await location(code, 'de')).toBe('https://example.com/console/de');
      expect(await location(code, 'es')).toBe('https://example.com/console/rules');

      // Its analytics from its row in the list: no code to type.
      await page.goto(`${consoleUrl()}#/links?q=${code}`);
      const row = page.locator(`#links tr[data-code="${code}"]`);
      await row.waitFor();
      const domain = (await key('GET', `/api/v1/links/${code}`)).body.domain as string;
      await row.getByRole('link', { name: `Analytics of ${domain}/${code}` }).click();
      await page.waitForSelector('#analytics-screen[data-view=link]');
      expect(await page.locator('#analytics-link-title').innerText()).toBe('Rules from the console');
      expect(new URLSearchParams(page.url().split('?')[1]).get('domain')).toBe(domain);
      expect((await key('DELETE', `/api/v1/links/${code}-tagged`)).status).toBe(204);
    });

    it('bulk-disables, then bulk-deletes the selected links, with a result per link', async () => {
      await page.goto(`${consoleUrl()}#/links?tag=paging`);
      await page.waitForFunction(() => document.querySelectorAll('#links tbody tr').length === 25);
      const chosen = (await linkRows()).slice(0, 3) as string[];
      for (const code of chosen) await page.getByLabel(`Select ${code}`).check();
      expect(await page.locator('#selected-count').innerText()).toBe('3 selected');
      await page.click('#bulk-disable');
      await page.waitForSelector('#bulk-results');
      expect(await page.locator('#bulk-results h2').innerText()).toBe('Bulk disable: 3 disabled, 0 failed');
      for (const code of chosen) expect((await key('GET', `/api/v1/links/${code}`)).body.status).toBe('disabled');
      expect(await page.locator(`#links tr[data-code="${chosen[0]}"] .status`).innerText()).toBe('disabled');
      await page.click('#bulk-delete');
      await page.waitForFunction(() => document.querySelector('#bulk-results h2')?.textContent?.startsWith('Bulk delete'));
      await page.waitForSelector('#bulk-results');
      expect(await page.locator('#bulk-results h2').innerText()).toBe('Bulk delete: 3 deleted, 0 failed');
      expect(await page.locator('#bulk-results li').evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset.status))).toEqual(['204', '204', '204']);
      for (const code of chosen) expect((await key('GET', `/api/v1/links/${code}`)).status).toBe(404);
      expect(await linkRows()).not.toContain(chosen[0]);
    });

    it('imports a Shlink CSV with a progress bar, a result per row and the results as CSV', async () => {
      const rows = 600;
      const csv = [
        'createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits',
        ...Array.from(
          { length: rows },
          (_, i) =>
            `2024-02-04T20:04:57+08:00,s.example.com,imp-${stamp}-${i},https://s.example.com/imp-${stamp}-${i},https://example.com/imported/${i},"Imported, ""${i}""",shlink|imported,${i}`,
        ),
        `2024-02-05T10:00:00+00:00,,imp-${stamp}-bad,https://s.example.com/imp-${stamp}-bad,ftp://example.com/not-http,,,0`,
      ].join('\n');
      await page.click('header >> text=Import');
      await page.waitForSelector('#import-form');
      await page.setInputFiles('#import-form input[type=file]', { name: 'shlink-export.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      // Every value the bar takes, to see it move while the rows are created.
      await page.evaluate(() => {
        const seen: number[] = [];
        (window as unknown as { seen: number[] }).seen = seen;
        new MutationObserver(() => {
          const bar = document.getElementById('import-bar') as HTMLProgressElement | null;
          if (bar && seen[seen.length - 1] !== bar.value) seen.push(bar.value);
        }).observe(document.body, { subtree: true, childList: true, attributes: true });
      });
      await page.click('#start-import');
      await page.waitForSelector('#import-results', { timeout: 60_000 });
      await bothSizes('import');
      expect(await page.locator('#import-counts').innerText()).toBe(`${rows} created, 1 failed`);
      expect(await page.locator('#import-bar').evaluate((b) => [(b as HTMLProgressElement).value, (b as HTMLProgressElement).max])).toEqual([
        rows + 1,
        rows + 1,
      ]);
      const seen = await page.evaluate(() => (window as unknown as { seen: number[] }).seen);
      expect(seen.some((v) => v > 0 && v < rows + 1)).toBe(true);
      expect(await page.locator('#import-results tr[data-row]').evaluateAll((trs) => trs.map((tr) => tr.textContent))).toEqual([
        expect.stringMatching(new RegExp(`^${rows + 1}(INVALID_URL|VALIDATION_FAILED)`)),
      ]);
      expect((await key('GET', `/api/v1/links/imp-${stamp}-7`)).body).toMatchObject({
        url: 'https://example.com/imported/7',
        title: 'Imported, "7"',
        tags: ['shlink', 'imported'],
      });
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-results')]);
      const lines = readFileSync((await download.path())!, 'utf8')
        .trim()
        .split('\n');
      expect(lines.length).toBe(rows + 2);
      expect(lines[0]).toBe('row,status,code,shortUrl,error,note');
      expect(lines[8]).toMatch(new RegExp(`^8,201,imp-${stamp}-7,`));
      // The same file again: nothing created twice (the Idempotency-Key is the file's), and said so.
      await page.evaluate(() => (window as unknown as { seen: number[] }).seen.splice(0));
      await page.click('#start-import');
      await page.waitForFunction(
        (total) => {
          const seen = (window as unknown as { seen: number[] }).seen;
          return seen.includes(0) && seen[seen.length - 1] === total && document.getElementById('import-results') !== null;
        },
        rows + 1,
        { timeout: 60_000 },
      );
      expect(await page.locator('#import-counts').innerText()).toBe(`0 created, ${rows} already imported, 1 failed`);
      const listed = await key('GET', `/api/v1/links?tag=imported&limit=100&q=imp-${stamp}-7`);
      expect(listed.body.links.filter((l: { url: string }) => l.url === 'https://example.com/imported/7')).toHaveLength(1);
    });

    it('imports a Shlink title with a line break on one line, and a Kutt link expired at its source as disabled, saying why', async () => {
      const shlink = [
        'createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits',
        `2024-02-04T20:04:57+08:00,,multi-${stamp},https://s.example.com/multi-${stamp},https://example.com/multi,"Spring\r\nsale  2024",shlink,3`,
      ].join('\n');
      await page.goto(`${consoleUrl()}#/import`);
      await page.waitForSelector('#import-form');
      await page.setInputFiles('#import-form input[type=file]', { name: 'shlink.csv', mimeType: 'text/csv', buffer: Buffer.from(shlink) });
      await page.click('#start-import');
      await page.waitForFunction(() => document.getElementById('import-counts')?.textContent === '1 created, 0 failed');
      expect((await key('GET', `/api/v1/links/multi-${stamp}`)).body.title).toBe('Spring sale 2024');
      const kutt = {
        limit: 10,
        skip: 0,
        total: 2,
        data: [
          { address: `kutt-live-${stamp}`, target: 'https://example.com/kutt/live', expire_in: new Date(Date.now() + 86_400_000).toISOString(), banned: false },
          { address: `kutt-old-${stamp}`, target: 'https://example.com/kutt/old', expire_in: '2024-03-01T10:00:00.000Z', banned: false },
        ],
      };
      await page.setInputFiles('#import-form input[type=file]', { name: 'kutt.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(kutt)) });
      await page.click('#start-import');
      await page.waitForFunction(() => document.getElementById('import-counts')?.textContent === '2 created, 0 failed');
      expect(await page.locator(`#import-notes tr[data-code="kutt-old-${stamp}"] td:last-child`).innerText()).toBe(
        'expired at the source (2024-03-01T10:00:00.000Z): created disabled',
      );
      expect((await key('GET', `/api/v1/links/kutt-old-${stamp}`)).body).toMatchObject({ status: 'disabled', expiresAt: null });
      expect((await key('GET', `/api/v1/links/kutt-live-${stamp}`)).body).toMatchObject({ status: 'active', expiresAt: kutt.data[0].expire_in });
      await bothSizes('import-notes');
    });

    it("opens a link's analytics: the dashboard of the analytics app, signed in with the same session, on that link", async () => {
      await page.goto(`${consoleUrl()}#/links/${alias}`);
      const [dashboard] = await Promise.all([browser.waitForEvent('page'), page.click('#analytics')]);
      await dashboard.waitForLoadState('domcontentloaded');
      expect(new URL(dashboard.url()).pathname).toBe('/dashboard');
      // No second sign-in: the session cookie of the host goes to the analytics app's port too.
      const me = await dashboard.evaluate(async () => (await (await fetch('/api/v1/me')).json()).member?.email);
      expect(me).toBe(ownerEmail);
      await dashboard.waitForFunction(() => (document.getElementById('login') as HTMLElement | null)?.hidden === true, undefined, { timeout: 15_000 });
      // The link it was opened from is the one shown, not "(choose a link)".
      expect(await dashboard.locator('#link-code').inputValue()).toBe(alias);
      await dashboard.waitForFunction((code) => document.body.dataset.loadedCode === code, alias, { timeout: 15_000 });
      expect(await dashboard.locator('#status').innerText()).not.toContain('choose a link');
      await dashboard.close();
    });

    it("looks at its analytics after clicks: the count, the live counter going up, variants by URL, CSV, a range error, the tenant's top links, an unknown code", async () => {
      const code = `${alias}-stats`;
      const made = await key('POST', '/api/v1/links', {
        url: 'https://example.com/console/stats',
        alias: code,
        title: 'Stats from the console',
        variants: [
          { url: 'https://example.com/console/x', weight: 50 },
          { url: 'https://example.com/console/y', weight: 50 },
        ],
      });
      expect(made.status).toBe(201);
      const domain = made.body.domain as string;
      // From the link's page to its analytics, in the same session.
      await page.goto(`${consoleUrl()}#/links/${code}`);
      await page.click('#link-analytics');
      await page.waitForSelector('#analytics-screen[data-view=link]');
      expect(await page.locator('#analytics-link-title').innerText()).toBe('Stats from the console');
      expect(await page.locator('#analytics-link-target').innerText()).toBe('https://example.com/console/stats');
      expect(await page.locator('#total-clicks').innerText()).toBe('0');
      // The live counter, from the click stream, goes up as the link is clicked (as a browser: bots are left out).
      await page.waitForSelector('#live[data-state=open]', { timeout: 15_000 });
      for (let i = 0; i < 3; i++) expect((await click(code)).status).toBe(302);
      await page.waitForFunction(() => document.getElementById('live-clicks')?.textContent === '3', undefined, { timeout: 30_000 });
      // The counts, once the consumer has them.
      await eventually(
        'the three clicks in the console',
        async () => {
          await page.click('#show-analytics');
          await page.waitForSelector('#analytics-screen:not([aria-busy])');
          return (await page.locator('#total-clicks').innerText()) === '3';
        },
        30_000,
        500,
      );
      expect(await page.locator('#total-visitors').innerText()).toBe('1');
      // 24 hours in bars of 15 minutes: the burst is one bar of 3, not a speck among 1440 minutes.
      const chart = page.locator('#clicks-chart');
      expect(await chart.getAttribute('data-bucket-seconds')).toBe('900');
      expect(await chart.locator('rect.bar').evaluateAll((bars) => bars.map((b) => Number((b as SVGElement).dataset.clicks)))).toEqual([3]);
      // A/B variants by their URL, not their index.
      expect(await page.locator('#breakdown-variants tbody td:first-child').allInnerTexts()).toEqual([
        expect.stringMatching(/^https:\/\/example\.com\/console\/[xy] \(variant [12]\)$/),
      ]);
      await bothSizes('analytics-link');
      // The CSV of what is shown.
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv')]);
      expect(download.suggestedFilename()).toBe(`${code}-stats.csv`);
      const rows = readFileSync((await download.path())!, 'utf8')
        .trim()
        .split(/\r?\n/);
      expect(rows[0]).toBe('time,clicks,visitors,botClicks');
      expect(rows.slice(1).reduce((n, r) => n + Number(r.split(',')[1]), 0)).toBe(3);
      // A range that ends before it starts: said beside the range, and the chart of the last range is gone.
      await page.selectOption('#analytics-range', 'custom');
      await page.getByLabel('From', { exact: true }).fill('2026-12-05T10:00');
      await page.getByLabel('To', { exact: true }).fill('2026-12-05T09:00');
      await page.click('#show-analytics');
      await page.waitForSelector('#range-error[data-code=INVALID_TIME_RANGE]');
      expect(await page.locator('#clicks-chart, #total-clicks, #analytics-link').count()).toBe(0);

      // The tenant's view: totals over every link, top links with their titles, one deleted since marked.
      const gone = `${alias}-gone`;
      expect((await key('POST', '/api/v1/links', { url: 'https://example.com/console/gone', alias: gone })).status).toBe(201);
      expect((await click(gone)).status).toBe(302);
      await page.goto(`${consoleUrl()}#/analytics`);
      await eventually(
        'the deleted link among the top links',
        async () => {
          await page.click('#show-analytics');
          await page.waitForSelector('#analytics-screen[data-view=overview]:not([aria-busy])');
          if ((await page.locator(`#top-links tr[data-code="${gone}"]`).count()) === 0) return false;
          if ((await key('GET', `/api/v1/links/${gone}`)).status === 200) expect((await key('DELETE', `/api/v1/links/${gone}`)).status).toBe(204);
          await page.click('#show-analytics');
          await page.waitForSelector('#analytics-screen[data-view=overview]:not([aria-busy])');
          return (await page.locator(`#top-links tr[data-code="${gone}"][data-deleted=true]`).count()) === 1;
        },
        30_000,
        500,
      );
      expect(Number((await page.locator('#total-clicks').innerText()).replace(/,/g, ''))).toBeGreaterThanOrEqual(4);
      expect(await page.locator(`#top-links tr[data-code="${code}"] .target a`).innerText()).toBe('Stats from the console');
      await bothSizes('analytics');
      // A top link opens its analytics.
      await page.click(`#top-links tr[data-code="${code}"] td.code a`);
      await page.waitForSelector('#analytics-screen[data-view=link]');
      expect(new URLSearchParams(page.url().split('?')[1]).get('domain')).toBe(domain);
      // A code that never was a link: not found, not "0 clicks".
      await page.goto(`${consoleUrl()}#/analytics?code=never-${stamp}`);
      await page.waitForSelector('#not-found');
      expect(await page.locator('#total-clicks, #clicks-chart').count()).toBe(0);
      // A link is found by its title and chosen, with its domain: no code to type exactly.
      await page.goto(`${consoleUrl()}#/analytics`);
      await page.waitForSelector('#analytics-screen[data-view=overview]');
      await page.getByRole('searchbox', { name: 'Find a link' }).fill('Stats from the');
      await page.click(`#link-matches button[data-code="${code}"]`);
      await page.waitForSelector('#analytics-screen[data-view=link]');
      expect(await page.locator('#analytics-link-title').innerText()).toBe('Stats from the console');
      expect(new URLSearchParams(page.url().split('?')[1]).get('domain')).toBe(domain);
      await page.click('#all-links');
      await page.waitForSelector('#analytics-screen[data-view=overview]');
    });

    it("edits its own domain's settings: redirects, the logo uploaded (the pages carry it), the app-link files; a bad value is refused beside its field", async () => {
      const domain = `console-${stamp}.example`;
      expect((await api(base(), 'POST', `/api/v1/admin/tenants/${tenantId}/domains`, API_KEY, { domain })).status).toBe(201);
      await page.click('header >> text=Domains');
      const form = page.locator(`form[data-domain="${domain}"]`);
      await form.waitFor();
      await form.getByLabel('Unknown codes go to').fill('ftp://example.com/nope');
      await form.getByRole('button', { name: `Save ${domain}` }).click();
      await form.locator('.error[data-field=notFoundRedirect]').waitFor();
      await form.getByLabel('Unknown codes go to').fill('https://example.com/not-found');
      await form.getByLabel('Name', { exact: true }).fill('Console Inc');
      await form.getByLabel('Accent colour').fill('#0b57d0');
      await form.getByLabel('Let crawlers fetch every link (robots.txt allows)').check();
      await form.getByLabel('Logo').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: Buffer.from(PNG_1PX, 'base64') });
      await form.locator('img.logo-preview').waitFor();
      // The app-link files: JSON that is not JSON, then a shape iOS would not read, each said beside its field.
      await form.locator('summary', { hasText: 'App links' }).click();
      const apple = form.getByLabel('apple-app-site-association (JSON)');
      await apple.fill('{"applinks": ');
      await form.getByRole('button', { name: `Save ${domain}` }).click();
      await form.locator('.error[data-field=appleAppSiteAssociation]').waitFor();
      expect(await form.locator('.error[data-field=appleAppSiteAssociation]').innerText()).toMatch(/^not JSON/);
      await apple.fill('{"applinks": {"details": [{"appID": "nope", "paths": ["*"]}]}}');
      await form.getByRole('button', { name: `Save ${domain}` }).click();
      await page.waitForFunction(
        (d) => document.querySelector(`form[data-domain="${d}"] .error[data-field=appleAppSiteAssociation]`)?.textContent?.includes('appIDs'),
        domain,
      );
      expect(await apple.getAttribute('aria-invalid')).toBe('true');
      const aasa = { applinks: { details: [{ appIDs: ['ABCDE12345.com.console.app'], components: [{ '/': '/*' }] }] } };
      await apple.fill(JSON.stringify(aasa));
      const statements = [
        {
          relation: ['delegate_permission/common.handle_all_urls'],
          target: { namespace: 'android_app', package_name: 'com.console.app', sha256_cert_fingerprints: [Array(32).fill('AB').join(':')] },
        },
      ];
      await form.getByLabel('assetlinks.json (JSON)').fill(JSON.stringify(statements));
      await form.getByRole('button', { name: `Save ${domain}` }).click();
      await form.locator('.notice').waitFor();
      await bothSizes('domains');
      expect((await key('GET', `/api/v1/domains/${domain}`)).body).toMatchObject({
        notFoundRedirect: 'https://example.com/not-found',
        branding: { name: 'Console Inc', logo: `data:image/png;base64,${PNG_1PX}`, accentColor: '#0b57d0' },
        robots: 'allow',
        appleAppSiteAssociation: aasa,
        androidAssetLinks: statements,
      });
      // What phones ask that domain for: the files.
      await eventually(
        'the files on the domain',
        async () => (await visit(redirect(), '/.well-known/apple-app-site-association', domain)).body === JSON.stringify(aasa),
        10_000,
        100,
      );
      expect(JSON.parse((await visit(redirect(), '/.well-known/assetlinks.json', domain)).body)).toEqual(statements);
    });

    it('creates an API key whose secret is shown once and works, then revokes it', async () => {
      await page.click('header >> text=API keys');
      await page.waitForSelector('#key-form');
      await page.getByLabel('Name', { exact: true }).fill('from the console');
      await page.click('#create-key');
      const secret = await page.locator('#key-secret').innerText();
      expect(secret).toMatch(/^sl_/);
      // On a phone too: the key's Revoke is on the screen, nothing scrolls sideways.
      await bothSizes('keys');
      expect((await api(base(), 'GET', '/api/v1/links?limit=1', secret)).status).toBe(200);
      await page.getByRole('button', { name: 'Revoke from the console' }).click();
      await page.waitForSelector('#keys tr[data-name="from the console"] em');
      // Refused once the instance's one-second trust in a checked key has passed.
      await eventually('the revoked key refused', async () => (await api(base(), 'GET', '/api/v1/links?limit=1', secret)).status === 401, 5_000, 200);
      // A key acts for the owner who made it; the owner hands one over to another member, within whose role it then stays.
      await page.getByLabel('Name', { exact: true }).fill('handed over');
      await page.click('#create-key');
      await page.waitForSelector('#keys tr[data-name="handed over"]');
      expect(await page.locator('#keys tr[data-name="handed over"] td[data-label="Acts for"]').innerText()).toBe(ownerEmail);
      await page.getByLabel('Member to receive handed over').selectOption({ label: totpEmail });
      await page.getByRole('button', { name: 'Hand over handed over' }).click();
      // The key's "Acts for" cell (the row's text holds every member's email: the hand-over's options).
      await page.waitForFunction(
        (email) => document.querySelector('#keys tr[data-name="handed over"] td[data-label="Acts for"]')?.textContent === email,
        totpEmail,
      );
      const handed = ((await key('GET', '/api/v1/keys')).body.keys as Array<{ name: string; actsFor: { email: string; role: string } }>).find(
        (k) => k.name === 'handed over',
      );
      expect(handed?.actsFor).toMatchObject({ email: totpEmail, role: 'editor' });
    });

    it('invites a viewer, who accepts, signs in and cannot edit (the console hides it, the server refuses it)', async () => {
      await page.click('header >> text=Members');
      await page.waitForSelector('#invite-form');
      await page.locator('#invite-form').getByLabel('Email').fill(viewerEmail);
      // The least role is the one offered first.
      expect(await page.locator('#invite-form').getByLabel('Role').inputValue()).toBe('viewer');
      await page.locator('#invite-form').getByLabel('Role').selectOption('viewer');
      await page.click('#invite');
      const url = await page.locator('#invitation-url').innerText();
      await page.waitForSelector(`#members tr[data-email="${viewerEmail}"]`);
      await bothSizes('members');
      // A role changes with its button (the API says so), and back.
      const member = async () =>
        ((await key('GET', '/api/v1/members')).body.members as Array<{ id: string; email: string; role: string }>).find((m) => m.email === viewerEmail)!;
      for (const role of ['editor', 'viewer']) {
        await page.getByLabel(`Role of ${viewerEmail}`, { exact: true }).selectOption(role);
        await page.getByRole('button', { name: `Change the role of ${viewerEmail}` }).click();
        // The console says so once it shows the list again (the next change starts from there).
        await page.waitForFunction(
          ([email, r]) => document.querySelector(`#members tr[data-email="${email}"] .notice`)?.textContent === `Now ${r}.`,
          [viewerEmail, role],
        );
        await eventually(`the role ${role}`, async () => (await member()).role === role, 5_000, 100);
        // The list shown again says the role the member has now.
        expect(await page.getByLabel(`Role of ${viewerEmail}`, { exact: true }).inputValue()).toBe(role);
      }
      // The same address again: refused beside the email field.
      await page.locator('#invite-form').getByLabel('Email').fill(viewerEmail);
      await page.click('#invite');
      await page.waitForSelector('#invite-form .error[data-field=email]');
      await page.click('header >> text=Audit log');
      await page.waitForSelector('#audit tr[data-action="member.invited"]');
      // A phone reaches the audit log's wide table with the keyboard too (a focusable region: axe's scrollable-region-focusable).
      await bothSizes('audit-log');

      await signOut();
      await page.goto(url.replace(/^https?:\/\/[^/]+/, base()));
      await page.getByLabel('Choose a password').fill(PASSWORD);
      await page.click('#accept button[type=submit]');
      // Accepting signs the viewer in.
      await page.waitForSelector('#sign-out');
      expect(await page.locator('#role').innerText()).toBe('viewer');
      expect(await page.locator('header nav a').allInnerTexts()).toEqual(['Links', 'Analytics', 'Conversions', 'My sessions', 'Account']);
      await page.goto(`${consoleUrl()}#/links/${alias}`);
      await page.waitForSelector('#link-details');
      expect(await page.locator('#edit, #disable, #delete').count()).toBe(0);
      // Creating a link is not for a viewer: said so, not the last link shown again.
      await page.evaluate(() => (location.hash = '#/links/new'));
      await page.waitForSelector('#not-allowed');
      expect(await page.locator('#link-details, #link-form, #edit').count()).toBe(0);
      await bothSizes('not-allowed');
      await page.goto(`${consoleUrl()}#/links`);
      await page.waitForSelector('#links tbody tr');
      expect(await page.locator('#new-link, #bulk-delete, #links input[type=checkbox]').count()).toBe(0);
      // The server decides in any case: the viewer's session cannot write.
      const refused = await page.evaluate(async (code) => {
        const me = await (await fetch('/api/v1/me')).json();
        const res = await fetch(`/api/v1/links/${code}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrfToken },
          body: JSON.stringify({ title: 'by a viewer' }),
        });
        return [res.status, (await res.json()).code];
      }, alias);
      expect(refused).toEqual([403, 'INSUFFICIENT_SCOPE']);
      await signOut();
      await signIn(ownerEmail);
    });

    it('is usable on a phone: the links on the first screen, targets on one line, the navigation behind Menu, nothing sideways', async () => {
      await page.setViewportSize(PHONE);
      try {
        for (const hash of [
          '#/links',
          '#/links/new',
          `#/links/${alias}`,
          '#/analytics',
          '#/import',
          '#/domains',
          '#/keys',
          '#/members',
          '#/audit',
          '#/sessions',
          '#/account',
        ]) {
          await page.goto(`${consoleUrl()}${hash}`);
          await page.waitForSelector('main h1');
          await page.waitForLoadState('networkidle');
          expect({ hash, wider: await widerThanScreen() }).toEqual({ hash, wider: [] });
        }
        await page.goto(`${consoleUrl()}#/links`);
        await page.waitForSelector('#links tbody tr');
        // The header and the filters leave room: the first links are on the first screen.
        const firstRows = await page.locator('#links tbody tr').evaluateAll((trs) => trs.slice(0, 2).map((tr) => tr.getBoundingClientRect().bottom));
        expect(firstRows.every((bottom) => bottom <= 844)).toBe(true);
        // A target is one line, cut with an ellipsis ("https://ex…"), never broken inside a word.
        const target = page.locator('#links tbody tr td.target .one-line').first();
        expect(await target.evaluate((el) => el.getClientRects().length === 1 && el.getBoundingClientRect().height < 30)).toBe(true);
        expect(await target.evaluate((el) => getComputedStyle(el).textOverflow)).toBe('ellipsis');
        // The navigation: behind Menu, all of it reachable.
        expect(await page.locator('#console-nav').isVisible()).toBe(false);
        await page.click('#menu-toggle');
        expect(await page.locator('#menu-toggle').getAttribute('aria-expanded')).toBe('true');
        await page.locator('header nav').getByRole('link', { name: 'API keys' }).click();
        await page.waitForSelector('#key-form');
        // The new screen closes the menu (an effect after the screen's first paint: waited for, not sampled).
        await page.locator('#console-nav').waitFor({ state: 'hidden', timeout: 5_000 });
        const revoke = page.locator('#keys button.danger').first();
        const box = (await revoke.boundingBox())!;
        expect(box.x + box.width).toBeLessThanOrEqual(390);
        await accessible('phone-keys');
      } finally {
        await page.setViewportSize(DESKTOP);
      }
    });

    it('invites at the console’s one address: the invitation names the tenant and the email, says the password’s minimum first, and signs in on acceptance there', async () => {
      const joinerEmail = `console-joiner-${stamp}@example.com`;
      const invited = await key('POST', '/api/v1/members', { email: joinerEmail, role: 'editor' });
      const url = new URL(invited.body.invitation.url as string);
      // One host everywhere: the invitation's, the console's printed at start (npm start), SSO's (localhost by default).
      expect(url.origin).toBe(base().replace('://127.0.0.1:', '://localhost:'));
      expect(url.pathname).toBe('/console/accept-invitation');
      if (options.banner) expect(options.banner()).toContain(`console     ${url.origin}/console/`);
      elsewhere.push(url.origin);
      try {
        await page.goto(url.toString());
        await page.waitForSelector('#accept');
        expect(await page.locator('h1').innerText()).toBe(`Join Console ${stamp}`);
        expect(await page.locator('#invited-as').innerText()).toContain(`You are invited as ${joinerEmail}, editor.`);
        // The minimum is said before anything is sent.
        expect(await page.locator('#accept .hint').innerText()).toMatch(/^At least 12 characters/);
        expect(await page.locator('#accept .error').count()).toBe(0);
        await bothSizes('invitation');
        await page.getByLabel('Choose a password').fill(PASSWORD);
        await page.click('#accept button[type=submit]');
        // In the console, signed in, at the invitation's host: no second sign-in, no second cookie jar to mix up.
        await page.waitForSelector('#sign-out');
        expect(new URL(page.url()).origin).toBe(url.origin);
        expect(await page.locator('#who').innerText()).toContain(joinerEmail);
        expect(await page.evaluate(async () => (await (await fetch('/api/v1/me')).json()).member?.email)).toBe(joinerEmail);
        // The spent invitation says so.
        await page.goto(url.toString());
        await page.waitForSelector('#invitation-invalid[data-code=INVITATION_INVALID]');
        await page.goto(`${url.origin}/console/`);
        await signOut();
      } finally {
        elsewhere.splice(elsewhere.indexOf(url.origin), 1);
      }
      // The owner's session at the console's own address is untouched.
      await page.goto(consoleUrl());
      await page.waitForSelector('#sign-out');
      expect(await page.locator('#role').innerText()).toBe('owner');
    });

    it('works with the keyboard alone: tab to the new-link button and create a link', async () => {
      await page.goto(`${consoleUrl()}#/links`);
      await page.reload();
      await page.waitForSelector('#new-link');
      await page.keyboard.press('Tab'); // the skip link first
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
      for (let i = 0; i < 20 && (await page.evaluate(() => document.activeElement?.id)) !== 'new-link'; i++) await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#link-form');
      await page.locator('#link-form').getByLabel('Target URL').focus();
      await page.keyboard.type('https://example.com/console/keyboard');
      await page.keyboard.press('Enter'); // submits the form
      await page.waitForSelector('#link-details');
      expect(await page.locator('dd[data-field=Target]').innerText()).toBe('https://example.com/console/keyboard');
    });
  });
}
