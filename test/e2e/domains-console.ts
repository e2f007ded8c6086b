/// <reference lib="dom" />
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { BrowserContext, chromium, Page } from 'playwright-core';
import type { DomainsJourneyApps } from './domains-journey';
import { onHost } from './domains-journey';
import { API_KEY } from './support';
import { api } from './tenant-journey';
import { CHROMIUM, HEADLESS_CHROMIUM_ARGS } from './chromium';

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'correct horse battery staple';

/**
 * The console's Domains page walks a tenant's owner through proving a domain (docs/console.md,
 * "Domains"), in headless Chromium: add it (a bad name refused beside the field), read the TXT record
 * to create, check now (why it failed), create the record, check again (verified), set HSTS, remove
 * it. axe-core finds no serious or critical violation; nothing breaks the page's CSP.
 */
export function describeDomainsConsole(apps: () => DomainsJourneyApps) {
  describe('the console’s Domains page in headless Chromium', () => {
    const stamp = Date.now().toString(36);
    const domain = `console-${stamp}.acme.test`;
    let profileDir: string;
    let browser: BrowserContext;
    let page: Page;
    const problems: string[] = [];
    const gen = () => apps().generation;

    beforeAll(async () => {
      const ownerEmail = `domains-owner-${stamp}@example.com`;
      const created = await api(gen(), 'POST', '/api/v1/admin/tenants', API_KEY, { name: `Domains ${stamp}`, plan: 'paid', ownerEmail });
      expect(created.status).toBe(201);
      const accepted = await api(gen(), 'POST', '/api/v1/auth/accept', null, { token: created.body.owner.invitation.token, password: PASSWORD });
      expect(accepted.status).toBeLessThan(300);
      profileDir = mkdtempSync(join(tmpdir(), 'shortlink-domains-chromium-'));
      browser = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: [...HEADLESS_CHROMIUM_ARGS],
        viewport: { width: 1280, height: 900 },
      });
      page = browser.pages()[0] ?? (await browser.newPage());
      page.on('dialog', (d) => d.accept());
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
      });
      page.on('request', (r) => !r.url().startsWith(gen()) && !r.url().startsWith('data:') && problems.push(`foreign: ${r.url()}`));
      await page.goto(`${gen()}/console`);
      await page.waitForSelector('#sign-in');
      await page.getByLabel('Email').fill(ownerEmail);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#sign-out');
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    });

    afterEach(() => expect(problems.splice(0)).toEqual([]));

    async function accessible(): Promise<void> {
      await page.evaluate(AXE);
      const grave = await page.evaluate(async () => {
        const w = window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: Array<{ id: string; impact: string | null }> }> } };
        return (await w.axe.run(document, { resultTypes: ['violations'] })).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      });
      expect(grave).toEqual([]);
    }

    it('walks an owner through adding a domain, the record to create, checking it and its settings', async () => {
      await page.click('header >> text=Domains');
      await page.waitForSelector('#domain-add');
      await page.waitForSelector('#no-domains');
      const add = page.locator('#domain-add');
      await add.getByLabel('Domain').fill('https://not-a-domain.test/x');
      await add.getByRole('button', { name: 'Add domain' }).click();
      await add.locator('.error[data-field=domain]').waitFor();
      await add.getByLabel('Domain').fill(domain.toUpperCase());
      await add.getByRole('button', { name: 'Add domain' }).click();

      const card = page.locator(`[data-ownership="${domain}"]`);
      await card.waitFor();
      expect(await card.getAttribute('data-status')).toBe('pending');
      const name = await card.locator('[data-role=txt-name]').innerText();
      const value = await card.locator('[data-role=txt-value]').innerText();
      expect(name).toBe(`_shortlink-challenge.${domain}`);
      expect(value).toMatch(/^shortlink-verification=[A-Za-z0-9_-]{32}$/);
      const token = value.split('=')[1];
      expect(await card.locator('[data-role=http-url]').innerText()).toBe(`http://${domain}/.well-known/shortlink-challenge/${token}`);
      await accessible();

      // Checked before the record exists: the page says why it failed.
      await card.getByRole('button', { name: `Check ${domain} now` }).click();
      await card.locator('[data-role=failure]').waitFor();
      expect(await card.locator('[data-role=failure]').innerText()).toContain(`no TXT record ${name}`);
      expect(await card.getAttribute('data-status')).toBe('pending');

      // The record as the page shows it, then a check: verified, the instructions gone.
      apps().dns.setTxt(name, [value]);
      await card.getByRole('button', { name: `Check ${domain} now` }).click();
      await page.waitForSelector(`[data-ownership="${domain}"][data-status=verified]`);
      expect(await card.locator('[data-role=status]').innerText()).toContain('Verified');
      expect(await card.locator('[data-role=instructions]').count()).toBe(0);
      await accessible();

      // On a phone (390×844): nothing wider than the screen, and as accessible.
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await accessible();
      if (process.env.CONSOLE_SCREENSHOTS) await page.screenshot({ path: join(process.env.CONSOLE_SCREENSHOTS, 'console-phone-domains.png'), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });

      // Its settings: HSTS (a preload without a year refused beside the field), then saved.
      const form = page.locator(`form[data-domain="${domain}"]`);
      await form.getByLabel('HSTS max-age (seconds)').fill('600');
      await form.getByLabel('Also the names under it').check();
      await form.getByLabel('Ask for the browsers’ preload lists').check();
      await form.getByRole('button', { name: `Save ${domain}` }).click();
      await form.locator('.error[data-field="hsts.maxAge"]').waitFor();
      await form.getByLabel('HSTS max-age (seconds)').fill('31536000');
      await form.getByRole('button', { name: `Save ${domain}` }).click();
      await form.locator('.notice').waitFor();
      const settings = await page.evaluate(async (d) => (await fetch(`/api/v1/domains/${d}`)).json(), domain);
      expect(settings).toMatchObject({ status: 'verified', hsts: { maxAge: 31_536_000, includeSubDomains: true, preload: true } });

      // Removed: the redirect stops serving its token.
      await card.getByRole('button', { name: `Remove ${domain}` }).click();
      await page.waitForSelector('#no-domains');
      const gone = await onHost(apps().redirect, `/.well-known/shortlink-challenge/${token}`, domain);
      expect([200, 404]).toContain(gone.status); // the directory refreshes within a second
    });
  });
}
