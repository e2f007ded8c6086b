/// <reference lib="dom" />
import { mkdirSync, readFileSync } from 'fs';
import { join } from 'path';
import { Browser, chromium, Page } from 'playwright-core';
import { eventually, REPO_ROOT } from '@shortlink/harness';
import { CHROMIUM, HEADLESS_CHROMIUM_ARGS } from './chromium';
import type { SafetyApps } from './safety-journey';
import { API_KEY } from './support';
import { api } from './tenant-journey';

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations of the page as it is now (none expected). */
async function graveViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const w = window as unknown as {
      axe: { run(ctx: Document, opts: object): Promise<{ violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: string[] }> }> }> };
    };
    return (await w.axe.run(document, { resultTypes: ['violations'] })).violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}

/**
 * A visitor's report and an operator's ban in headless Chromium (docs/console.md, "Moderation";
 * docs/design.md, "Trust and safety"): a visitor opens a link's preview page on the redirect, opens
 * "Report this link", chooses a reason, writes details and sends it (the confirmation page); the
 * report lands in the operators' queue; an operator opens the console's moderation page with an
 * operator key, finds the link with its report and bans it; the link's visitors then get the
 * blocked page (451). axe-core finds no serious or critical violation on any of these pages; no
 * page breaks its CSP (a page error or a console error fails the test).
 */
export function describeSafetyConsole(setup: () => SafetyApps, options: { readonly screenshots: boolean }) {
  describe('a visitor’s report and an operator’s ban in headless Chromium', () => {
    const imgDir = join(REPO_ROOT, 'docs/img');
    let browser: Browser;
    const problems: string[] = [];

    beforeAll(async () => {
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...HEADLESS_CHROMIUM_ARGS] });
      if (options.screenshots) mkdirSync(imgDir, { recursive: true });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
    });

    afterEach(() => expect(problems.splice(0)).toEqual([]));

    const newPage = async (viewport = { width: 1100, height: 900 }) => {
      const context = await browser.newContext({ viewport, locale: 'en-US' });
      // The link's target, answered here: a visit before the ban reached the redirect stays off the network.
      await context.route('https://shop.example.net/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<title>shop</title>' }));
      const page = await context.newPage();
      page.on('dialog', (d) => d.accept());
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      // A page's own status (400, 451) is logged as a failed load: that one is the point.
      page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && problems.push(m.text()));
      return { page, close: () => context.close() };
    };

    it('a visitor reports a link from its preview page; the report lands in the queue; an operator bans it in the console; its visitors get the blocked page', async () => {
      const stamp = Date.now().toString(36);
      const made = await api(setup().generation, 'POST', '/api/v1/links', API_KEY, {
        url: `https://shop.example.net/deals?run=${stamp}`,
        title: 'Deals of the week',
      });
      expect(made.status).toBe(201);
      const code = made.body.code as string;
      const redirect = setup().redirects[0];

      // The visitor: the preview, "Report this link", a reason and details, the confirmation.
      const visitor = await newPage({ width: 420, height: 1000 });
      const preview = await visitor.page.goto(`${redirect}/${code}+`);
      expect(preview!.status()).toBe(200);
      expect(preview!.headers()['content-security-policy']).not.toMatch(/script-src|unsafe/);
      await visitor.page.getByText('Report this link').click();
      const form = visitor.page.locator('#report-form');
      await form.getByLabel('Phishing: it imitates a site to steal passwords or payment details').check();
      await form.getByLabel('Details (optional)').fill('It asks for my bank login on the first page.');
      expect(await graveViolations(visitor.page)).toEqual([]);
      if (options.screenshots) await visitor.page.screenshot({ path: join(imgDir, 'visitor-report.png'), fullPage: true });
      await Promise.all([visitor.page.waitForURL(`${redirect}/r/report`), form.getByRole('button', { name: 'Send the report' }).click()]);
      expect(await visitor.page.locator('h1').innerText()).toBe('Thank you for your report');
      expect(await graveViolations(visitor.page)).toEqual([]);

      await eventually('the report in the queue', async () => {
        const queue = await api(setup().generation, 'GET', '/api/v1/admin/moderation/queue?state=open&limit=100', API_KEY);
        return (queue.body.items as Array<{ code: string; reports: { count: number } }>).some((i) => i.code === code && i.reports.count === 1);
      });

      // The operator: the moderation page, the operator key, the item with its report, the ban.
      const operator = await newPage();
      await operator.page.goto(`${setup().generation}/console/#/moderation`);
      await operator.page.waitForSelector('#operator-sign-in');
      expect(await graveViolations(operator.page)).toEqual([]);
      await operator.page.getByLabel('Operator API key').fill('not-a-key');
      await operator.page.getByRole('button', { name: 'Open the queue' }).click();
      await operator.page.waitForSelector('#operator-sign-in .error');
      await operator.page.getByLabel('Operator API key').fill(API_KEY);
      await operator.page.getByRole('button', { name: 'Open the queue' }).click();
      const item = operator.page.locator(`li.queue-item[data-code="${code}"]`);
      await item.waitFor();
      expect(await item.locator('[data-field=reports]').innerText()).toContain('Phishing: “It asks for my bank login on the first page.”');
      expect(await item.locator('[data-field=moderation]').innerText()).toBe('clear');
      // The dead-link checks may have reached the target already (a host that does not resolve here).
      expect(await item.locator('[data-field=health]').innerText()).toMatch(/^(not checked yet|broken, unresolvable since .+)$/);
      // A ban without a reason is refused beside the actions; with one it is done.
      await item.getByRole('button', { name: 'Ban' }).click();
      await operator.page.waitForSelector('#moderation-error');
      await item.getByLabel('Reason').fill('Phishing, confirmed');
      await operator.page.getByRole('button', { name: 'Refresh' }).click();
      await operator.page.locator('#moderation-error').waitFor({ state: 'detached' });
      expect(await graveViolations(operator.page)).toEqual([]);
      if (options.screenshots) {
        await item.scrollIntoViewIfNeeded();
        await operator.page.screenshot({ path: join(imgDir, 'console-moderation.png'), fullPage: false });
      }
      await item.getByRole('button', { name: 'Ban' }).click();
      await operator.page.getByRole('status').filter({ hasText: 'banned' }).waitFor();
      await operator.page.selectOption('#queue-state', 'resolved');
      await operator.page.locator('ol.queue[data-state=resolved][aria-busy=false]').waitFor();
      const resolved = operator.page.locator(`li.queue-item[data-code="${code}"]`);
      await resolved.waitFor();
      expect(await resolved.locator('[data-field=moderation]').innerText()).toContain('banned (Phishing, confirmed, operator)');
      expect(await resolved.locator('[data-field=resolution]').innerText()).toMatch(/^ban by .+: Phishing, confirmed$/);
      expect(await graveViolations(operator.page)).toEqual([]);

      // The visitor again: the blocked page, on every redirect instance.
      for (const instance of setup().redirects) {
        const blocked = await eventually(`${instance} blocking ${code}`, async () => {
          const res = await visitor.page.goto(`${instance}/${code}`);
          return res!.status() === 451 && res;
        });
        expect(blocked.status()).toBe(451);
        expect(await visitor.page.locator('h1').innerText()).toBe('This link has been blocked');
        expect(await visitor.page.locator('main').innerText()).not.toContain('shop.example.net');
        expect(await graveViolations(visitor.page)).toEqual([]);
      }
      await visitor.close();
      await operator.close();
    }, 120_000);

    it('an operator flags a reported link in the console; its visitors get the warning page on every redirect, and go on past it to the target', async () => {
      const stamp = Date.now().toString(36);
      const made = await api(setup().generation, 'POST', '/api/v1/links', API_KEY, { url: `https://shop.example.net/lookalike?run=${stamp}` });
      expect(made.status).toBe(201);
      const code = made.body.code as string;
      const reported = await api(
        setup().generation,
        'POST',
        '/r/report',
        null,
        { code, reason: 'scam', details: 'a look-alike shop' },
        {
          'x-forwarded-for': `203.0.113.${70 + (Date.now() % 100)}`,
        },
      );
      expect(reported.status).toBe(202);

      const operator = await newPage();
      await operator.page.goto(`${setup().generation}/console/#/moderation`);
      await operator.page.getByLabel('Operator API key').fill(API_KEY);
      await operator.page.getByRole('button', { name: 'Open the queue' }).click();
      const item = operator.page.locator(`li.queue-item[data-code="${code}"]`);
      await eventually('the report in the console’s queue', async () => {
        if (await item.count()) return true;
        await operator.page.getByRole('button', { name: 'Refresh' }).click();
        return false;
      });
      await item.getByLabel('Reason').fill('Looks like a copy of a known shop');
      await item.getByRole('button', { name: 'Flag' }).click();
      await operator.page.getByRole('status').filter({ hasText: 'flagged' }).waitFor();
      expect(await graveViolations(operator.page)).toEqual([]);

      const visitor = await newPage({ width: 420, height: 1000 });
      for (const instance of setup().redirects) {
        const warned = await eventually(`${instance} warning before ${code}`, async () => {
          const res = await visitor.page.goto(`${instance}/${code}`);
          return res!.status() === 200 && (await visitor.page.locator('h1').innerText()) === 'This link may be unsafe' && res;
        });
        expect(warned.status()).toBe(200);
        expect(await visitor.page.locator('main').innerText()).toContain(`https://shop.example.net/lookalike?run=${stamp}`);
        expect(await graveViolations(visitor.page)).toEqual([]);
        // Continue anyway: the redirect sends the browser on to the target (a name that does not resolve here; the request is the point).
        const target = `https://shop.example.net/lookalike?run=${stamp}`;
        const [onward] = await Promise.all([visitor.page.waitForRequest((r) => r.url() === target), visitor.page.getByText('Continue anyway').click()]);
        expect(onward.redirectedFrom()?.url()).toBe(`${instance}/${code}/go`);
      }
      await visitor.close();
      await operator.close();
    }, 120_000);
  });
}
