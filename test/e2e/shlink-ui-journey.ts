import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { createServer, Server } from 'http';
import { tmpdir } from 'os';
import { extname, join } from 'path';
import { BrowserContext, chromium, Page } from 'playwright-core';
import { Endpoints, eventually, REPO_ROOT } from '@shortlink/harness';
import { CHROMIUM, HEADLESS_CHROMIUM_ARGS } from './chromium';

const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
/** The columns of a visits CSV that Shlink's UI exports (its normalised visits). */
const VISITS_CSV_HEADER = [
  'date',
  'potentialBot',
  'userAgent',
  'os',
  'browser',
  'referer',
  'country',
  'region',
  'city',
  'latitude',
  'longitude',
  'visitedUrl',
  'type',
];
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

/** Builds the fixture (test/e2e/shlink-ui: Shlink's web component, unstyled) and serves it from an origin of its own, every path its index.html. */
export async function serveShlinkUi(): Promise<{ origin: string; close(): Promise<void> }> {
  const outDir = mkdtempSync(join(tmpdir(), 'shortlink-shlink-ui-'));
  execFileSync(join(REPO_ROOT, 'node_modules/.bin/vite'), ['build', '--config', 'test/e2e/shlink-ui/vite.config.mjs'], {
    cwd: REPO_ROOT,
    env: { ...process.env, SHLINK_UI_OUT_DIR: outDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    let file = join(outDir, path);
    let body: Buffer;
    try {
      if (!path.startsWith('/assets/')) throw new Error('a route');
      body = readFileSync(file);
    } catch {
      file = join(outDir, 'index.html');
      body = readFileSync(file);
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, 'localhost', r));
  const port = (server.address() as { port: number }).port;
  return {
    origin: `http://localhost:${port}`,
    close: async () => {
      await new Promise((r) => server.close(r));
      rmSync(outDir, { recursive: true, force: true });
    },
  };
}

/**
 * Shlink's own web UI (`@shlinkio/shlink-web-component` 0.18.0 over `@shlinkio/shlink-js-sdk`),
 * served from another origin with its default settings and pointed at our redirect host (where a
 * Shlink user points it: Shlink serves its API on its short domain), driven through its screens in
 * Chromium: no request may fail and no error may show.
 */
export function describeShlinkUiJourney(endpoints: () => Endpoints, operatorKey: () => Promise<string>) {
  describe('Shlink’s web UI (shlink-web-component) in Chromium', () => {
    let ui: Awaited<ReturnType<typeof serveShlinkUi>>;
    let browser: BrowserContext;
    let page: Page;
    let profileDir: string;
    let key: string;
    const failures: string[] = [];
    const errors: string[] = [];

    beforeAll(async () => {
      // The operator's key, as a self-hoster's Shlink UI holds Shlink's admin key: it may edit the default domain's redirects.
      key = await operatorKey();
      ui = await serveShlinkUi();
      profileDir = mkdtempSync(join(tmpdir(), 'shortlink-chromium-'));
      browser = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: [...HEADLESS_CHROMIUM_ARGS, '--disable-quic'],
        viewport: { width: 1280, height: 1400 },
      });
      page = browser.pages()[0] ?? (await browser.newPage());
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('requestfailed', (r) => failures.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
      page.on('response', (r) => r.status() >= 400 && failures.push(`${r.request().method()} ${r.url()}: ${r.status()}`));
    }, 300_000);

    afterAll(async () => {
      await browser?.close();
      await ui?.close();
      if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    });

    const open = async (path: string) => {
      await page.goto(`${ui.origin}${path}${path.includes('?') ? '&' : '?'}server=${encodeURIComponent(endpoints().redirect)}&key=${encodeURIComponent(key)}`);
    };

    /**
     * What went wrong so far: every answer of 400 or more, every request that failed on the network,
     * and errors. A request the page cancelled itself (`net::ERR_ABORTED`: a live stream it closes when
     * a screen goes, a listing it asks again with other parameters, or one in flight when the test
     * navigates) reached no failing answer, and is not counted.
     */
    const problems = () => ({
      failures: failures.filter((f) => !f.endsWith('net::ERR_ABORTED')),
      errors: errors.filter((e) => !/net::ERR_ABORTED/.test(e)),
    });
    const shown = async () => (await page.locator('body').innerText()).replace(/\s+/g, ' ');
    /** No request failed and no error shows, or the test fails naming them and what the page shows. */
    const clean = async (step: string) => {
      const body = await shown();
      expect({ step, ...problems(), errorShown: /went wrong|error occurred|Something went wrong/i.test(body) ? body.slice(0, 600) : null }).toEqual({
        step,
        failures: [],
        errors: [],
        errorShown: null,
      });
    };
    const waitFor = async (what: RegExp, step: string) => {
      try {
        await page.getByText(what).first().waitFor({ timeout: 45_000 });
      } catch (error) {
        throw new Error(`${step}: ${what} not shown; the page shows: ${(await shown()).slice(0, 1500)}`, { cause: error });
      }
    };
    const slug = `ui-${Date.now().toString(36)}`;
    const tag = `ui-tag-${Date.now().toString(36)}`;
    const shlinkApi = async (path: string): Promise<unknown> =>
      (await fetch(`${endpoints().generation}/rest/v3${path}`, { headers: { 'x-api-key': key } })).json();
    const click = async (code: string) => (await fetch(`${endpoints().redirect}/${code}`, { redirect: 'manual', headers: { 'user-agent': UA } })).arrayBuffer();
    /** The number a counter shows (`Visits: 1,234` → 1234), -1 when it shows none (loading). */
    const countIn = (text: string) => {
      const m = /(\d[\d,]*)\s*$/.exec(text.trim());
      return m ? Number(m[1].replace(/,/g, '')) : -1;
    };
    /** The count of a visits screen's badge (`Visits: N`, the visits it holds). */
    const badge = async () => countIn(await page.getByTestId('badge').first().innerText());
    /** A CSV's lines, each its fields (Shlink's UI quotes every one, `""` a quote inside; none here holds a line break). */
    const csvLines = (body: Buffer) =>
      body
        .toString('utf8')
        .trim()
        .split(/\r?\n/)
        .map((line) => [...line.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g)].map((m) => (m[1] ?? m[2] ?? '').replace(/""/g, '"')));
    /** Clicks `button` and returns what the page downloads then (its file name and text). */
    const download = async (button: ReturnType<Page['getByRole']>): Promise<{ name: string; body: Buffer }> => {
      const [file] = await Promise.all([page.waitForEvent('download', { timeout: 45_000 }), button.click()]);
      const path = await file.path();
      return { name: file.suggestedFilename(), body: readFileSync(path) };
    };

    it('opens the overview with the server’s health, tags, domains and live counters: every request answered', async () => {
      await open('/');
      await waitFor(/Create a short URL/, 'overview');
      await waitFor(/Orphan visits/, 'overview');
      await page.waitForTimeout(500);
      await clean('overview');
    });

    it('creates a short URL from the overview, and its visit counts there live (Mercure)', async () => {
      await page.getByPlaceholder('URL to be shortened').fill('https://example.com/from-shlink-ui');
      await page.getByPlaceholder('Custom slug').fill(slug);
      await page.getByRole('button', { name: 'Save' }).click();
      await waitFor(new RegExp(slug), 'create');
      await clean('create');
      // The overview's "Visits" card (a link to the non-orphan visits): its number, -1 while it loads.
      const visits = async () => countIn(await page.locator('a[href$="/non-orphan-visits"]').first().innerText());
      await eventually('the Visits card shows 0', async () => (await visits()) === 0, 45_000);
      const deadline = Date.now() + 60_000;
      // The hub joins the click stream with the page's subscription: visit until the counter moves, without a reload.
      while ((await visits()) < 1 && Date.now() < deadline) {
        await click(slug);
        await page.waitForTimeout(700);
      }
      expect(await visits()).toBeGreaterThanOrEqual(1);
      await clean('live counter');
    });

    it('lists, edits and shows the visits of the short URL (its OS recognised)', async () => {
      await page.getByRole('link', { name: 'List short URLs' }).click();
      await waitFor(new RegExp(slug), 'list');
      await clean('list');
      await open(`/short-code/${slug}/edit`);
      const title = page.getByPlaceholder('Title');
      await title.waitFor({ timeout: 45_000 });
      await title.fill('Edited in Shlink’s UI');
      await page.getByRole('button', { name: 'Save' }).click();
      await waitFor(/properly edited/i, 'edit');
      await page.waitForTimeout(500);
      await clean('edit');
      // The hub sends a visit as the click is published; the visits store has it once the analytics consumer wrote it.
      await eventually(
        'the visit in the visits store',
        async () => ((await shlinkApi(`/short-urls/${slug}/visits`)) as { visits: { pagination: { totalItems: number } } }).visits.pagination.totalItems >= 1,
        60_000,
      );
      await open(`/short-code/${slug}/visits`);
      await waitFor(/By context/, 'visits');
      await page.getByText('By context').click();
      await waitFor(/Windows/, 'visits (OS)');
      await clean('visits');
    });

    it('exports the short URL’s visits as CSV (what the visits screen holds)', async () => {
      const csv = await download(page.getByRole('button', { name: /^Export \(\d+\)$/ }));
      expect(csv.name).toMatch(new RegExp(`^short-url_.*${slug}_visits\\.csv$`));
      const [header, ...rows] = csvLines(csv.body);
      expect(header).toEqual(VISITS_CSV_HEADER);
      expect(rows.length).toBeGreaterThanOrEqual(1);
      expect(rows[0][header.indexOf('os')]).toBe('Windows');
      expect(rows[0][header.indexOf('browser')]).toBe('Chrome');
      await clean('export visits');
    });

    it('deletes the short URL’s visits from its visits screen (Options, Danger zone)', async () => {
      await open(`/short-code/${slug}/visits`);
      await waitFor(/By context/, 'visits');
      await page.getByText('Options', { exact: true }).click();
      await page.getByRole('button', { name: 'Delete visits' }).click();
      await page.getByRole('button', { name: 'Click again to confirm' }).click();
      await waitFor(/There are no visits|No visits|0 visits|Visits: 0/i, 'visits deleted');
      await clean('delete visits');
      // The store applies the deletion in the background (a mutation): soon none is listed.
      await eventually(
        'no visit listed',
        async () => ((await shlinkApi(`/short-urls/${slug}/visits`)) as { visits: { pagination: { totalItems: number } } }).visits.pagination.totalItems === 0,
      );
    });

    it('counts a click live on the open visits screen (Mercure), with no reload', async () => {
      await open(`/short-code/${slug}/visits`);
      await waitFor(/There are no visits/, 'visits screen, none left');
      expect(await badge()).toBe(0);
      const navigations: string[] = [];
      page.on('framenavigated', (f) => f === page.mainFrame() && navigations.push(f.url()));
      const deadline = Date.now() + 60_000;
      while ((await badge()) < 1 && Date.now() < deadline) {
        await click(slug);
        await page.waitForTimeout(700);
      }
      expect(await badge()).toBeGreaterThanOrEqual(1);
      expect(navigations).toEqual([]);
      await page.getByText('By context').click();
      await waitFor(/Windows/, 'live visit (OS)');
      await clean('live visits screen');
    });

    it('shows the short URL’s QR code (drawn in the page from its short URL, which redirects) and downloads it', async () => {
      await open(`/list-short-urls/1?search=${slug}`);
      await waitFor(new RegExp(slug), 'list before QR');
      await page.getByRole('row').filter({ hasText: slug }).getByRole('button', { name: 'Options' }).click();
      await page.getByText('QR code', { exact: true }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText(/QR code for/).waitFor({ timeout: 45_000 });
      // Shlink's UI draws the code itself (qr-code-styling): no request but the short URL the code holds.
      await dialog.locator('#qr-code-canvas-container canvas').waitFor({ timeout: 45_000 });
      const shortUrl = await dialog.getByRole('link').first().getAttribute('href');
      const short = ((await shlinkApi(`/short-urls/${slug}`)) as { shortUrl: string }).shortUrl;
      expect(shortUrl).toBe(short);
      // The short URL the code holds redirects (asked of the redirect host, which serves the short domain).
      const res = await fetch(`${endpoints().redirect}${new URL(short).pathname}`, { redirect: 'manual', headers: { 'user-agent': UA } });
      await res.arrayBuffer();
      expect(res.status).toBe(302);
      const png = await download(dialog.getByRole('button', { name: /Download/ }));
      expect(png.name).toBe(`${slug}-qr-code.png`);
      expect(png.body.subarray(1, 4).toString('latin1')).toBe('PNG');
      await clean('QR code');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden', timeout: 45_000 });
    });

    it('exports the short URLs as CSV (every page of the listing, as searched)', async () => {
      await open(`/list-short-urls/1?search=${slug}`);
      await waitFor(new RegExp(slug), 'list before export');
      const csv = await download(page.getByRole('button', { name: /^Export \(\d+\)$/ }));
      expect(csv.name).toBe('short_urls.csv');
      const [header, ...rows] = csvLines(csv.body);
      expect(header).toEqual(['createdAt', 'domain', 'shortCode', 'shortUrl', 'longUrl', 'title', 'tags', 'visits']);
      const total = ((await shlinkApi(`/short-urls?itemsPerPage=1&searchTerm=${slug}`)) as { shortUrls: { pagination: { totalItems: number } } }).shortUrls
        .pagination.totalItems;
      expect(rows).toHaveLength(total);
      expect(rows.find((r) => r[2] === slug)).toEqual([
        expect.any(String),
        expect.any(String),
        slug,
        expect.stringMatching(new RegExp(`/${slug}$`)),
        'https://example.com/from-shlink-ui',
        'Edited in Shlink’s UI',
        '',
        expect.stringMatching(/^\d+$/),
      ]);
      await clean('export short URLs');
    });

    it('opens every other screen: tags, tag, domain, orphan and non-orphan visits, creation', async () => {
      const created = await fetch(`${endpoints().generation}/rest/v3/short-urls`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ longUrl: 'https://example.com/tagged-in-ui', tags: [tag] }),
      });
      expect(created.status).toBe(200);
      const screens: Array<[string, RegExp]> = [
        ['/manage-tags', new RegExp(tag)],
        [`/tag/${tag}/visits`, /By context/],
        ['/domain/DEFAULT/visits', /By context/],
        ['/orphan-visits', /By context/],
        ['/non-orphan-visits', /By context/],
        ['/create-short-url', /URL to be shortened|Customize the short URL/],
      ];
      for (const [path, text] of screens) {
        await open(path);
        await waitFor(text, path);
        await page.waitForTimeout(300);
        await clean(path);
      }
    });

    it('renames a tag and deletes it (manage tags)', async () => {
      const renamed = `${tag}-renamed`;
      const tags = async () => ((await shlinkApi('/tags')) as { tags: { data: string[] } }).tags.data;
      await open('/manage-tags');
      await waitFor(new RegExp(tag), 'tags');
      await page.getByRole('row').filter({ hasText: tag }).getByRole('button', { name: 'Options' }).click();
      await page.getByText('Edit', { exact: true }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByPlaceholder('Tag').fill(renamed);
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'hidden', timeout: 45_000 });
      await waitFor(new RegExp(renamed), 'tag renamed');
      await clean('rename tag');
      expect(await tags()).toEqual(expect.arrayContaining([renamed]));
      expect(await tags()).not.toContain(tag);

      await page.getByRole('row').filter({ hasText: renamed }).getByRole('button', { name: 'Options' }).click();
      await page.getByText('Delete tag', { exact: true }).click();
      await dialog.getByRole('button', { name: 'Delete tag' }).click();
      await page.getByRole('row').filter({ hasText: renamed }).waitFor({ state: 'detached', timeout: 45_000 });
      await clean('delete tag');
      expect(await tags()).not.toContain(renamed);
    });

    it('lists, exports and deletes the orphan visits (an unknown code visited on the redirect host)', async () => {
      const unknown = `zz-ui-${Date.now().toString(36)}`;
      await click(unknown);
      type Visits = { visits: { data: Array<{ visitedUrl?: string }> } };
      const listed = async () => ((await shlinkApi('/visits/orphan?itemsPerPage=-1')) as Visits).visits.data.some((v) => v.visitedUrl?.endsWith(`/${unknown}`));
      await eventually('the orphan visit in the visits store', listed, 60_000);
      await open('/orphan-visits');
      await waitFor(/By context/, 'orphan visits');
      await eventually('the orphan visits loaded', async () => (await badge()) >= 1, 45_000);
      await clean('orphan visits');
      const csv = await download(page.getByRole('button', { name: /^Export \(\d+\)$/ }));
      expect(csv.name).toBe('orphan_visits.csv');
      const [header, ...rows] = csvLines(csv.body);
      expect(header).toEqual(VISITS_CSV_HEADER);
      expect(rows.find((r) => r[header.indexOf('visitedUrl')].endsWith(`/${unknown}`))?.[header.indexOf('type')]).toBe('invalid_short_url');
      await clean('export orphan visits');

      await page.getByText('Options', { exact: true }).click();
      await page.getByRole('button', { name: 'Delete visits' }).click();
      await page.getByRole('button', { name: 'Click again to confirm' }).click();
      await eventually('the screen holds no orphan visit', async () => (await badge()) === 0, 45_000);
      await clean('delete orphan visits');
      await eventually('the orphan visit deleted', async () => !(await listed()), 60_000);
    });

    it('lists and exports the non-orphan visits', async () => {
      await open('/non-orphan-visits');
      await waitFor(/By context/, 'non-orphan visits');
      await eventually('the visits loaded', async () => (await badge()) >= 1, 45_000);
      const csv = await download(page.getByRole('button', { name: /^Export \(\d+\)$/ }));
      expect(csv.name).toBe('non_orphan_visits.csv');
      const [header, ...rows] = csvLines(csv.body);
      expect(header).toEqual(VISITS_CSV_HEADER);
      expect(rows.length).toBeGreaterThanOrEqual(1);
      await clean('non-orphan visits');
    });

    it('adds a redirect rule and saves the rules', async () => {
      await open(`/short-code/${slug}/redirect-rules`);
      await waitFor(/Add rule/, 'rules');
      await page.getByRole('button', { name: 'Add rule' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByPlaceholder('https://www.example.com').fill('https://example.com/rule-target');
      await dialog.getByRole('button', { name: 'Add condition' }).click();
      // A device condition (the first kind offered): Android.
      await dialog.locator('select').nth(1).selectOption('android');
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await dialog.waitFor({ state: 'hidden', timeout: 45_000 });
      await page.getByRole('button', { name: 'Save rules' }).click();
      await waitFor(/saved/i, 'rules saved');
      await clean('rules');
      expect(await shlinkApi(`/short-urls/${slug}/redirect-rules`)).toMatchObject({
        redirectRules: [{ longUrl: 'https://example.com/rule-target', conditions: [{ type: 'device', matchValue: 'android' }] }],
      });
    });

    it('edits a domain’s redirects (the two 404 redirects apart)', async () => {
      await open('/manage-domains');
      await waitFor(/Regular 404/, 'domains');
      await page.getByRole('button', { name: 'Options' }).first().click();
      await page.getByText('Edit redirects').click();
      const dialog = page.getByRole('dialog');
      const inputs = dialog.getByPlaceholder('No redirect');
      await inputs.nth(1).fill('https://example.com/ui-regular-404');
      await inputs.nth(2).fill('https://example.com/ui-invalid');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await waitFor(/ui-regular-404/, 'domain redirects');
      await clean('domains');
      const { domains } = (await shlinkApi('/domains')) as { domains: { defaultRedirects: Record<string, string | null> } };
      expect(domains.defaultRedirects).toMatchObject({
        regular404Redirect: 'https://example.com/ui-regular-404',
        invalidShortUrlRedirect: 'https://example.com/ui-invalid',
      });
    });

    it('deletes the short URL', async () => {
      await open(`/list-short-urls/1?search=${slug}`);
      await waitFor(new RegExp(slug), 'list before delete');
      const row = page.getByRole('row').filter({ hasText: slug });
      await row.getByRole('button', { name: 'Options' }).click();
      await page.getByText('Delete short URL').click();
      const dialog = page.getByRole('dialog');
      await dialog.getByPlaceholder('delete').fill('delete');
      await dialog.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('row').filter({ hasText: slug }).waitFor({ state: 'detached', timeout: 45_000 });
      await clean('delete');
      const gone = await fetch(`${endpoints().generation}/rest/v3/short-urls/${slug}`, { headers: { 'x-api-key': key } });
      await gone.arrayBuffer();
      expect(gone.status).toBe(404);
    });
  });
}
