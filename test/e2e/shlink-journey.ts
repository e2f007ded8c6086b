import { randomUUID } from 'crypto';
import { ShlinkApiClient } from '@shlinkio/shlink-js-sdk';
import { UAParser } from 'ua-parser-js';
import { ErrorType } from '@shlinkio/shlink-js-sdk/dist/api-contract';
import { NodeHttpClient } from '@shlinkio/shlink-js-sdk/dist/node';
import { FetchHttpClient } from '@shlinkio/shlink-js-sdk/dist/fetch';
import { Endpoints, eventually } from '@shortlink/harness';
import { API_KEY, BROWSER_UA } from './support';
import { api } from './tenant-journey';

/** Shlink's problem details as the SDK rejects with them. */
type Problem = { type: string; title: string; detail: string; status: number; [extra: string]: unknown };

async function problemOf(promise: Promise<unknown>): Promise<Problem> {
  try {
    await promise;
  } catch (error) {
    return error as Problem;
  }
  throw new Error('the call succeeded; a problem was expected');
}

const BOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const ANDROID_UA = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';

async function visit(redirect: string, code: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(`${redirect}/${code}`, { redirect: 'manual', headers });
  await res.arrayBuffer();
  return res.status;
}

/** Where the redirect sends a visitor with these headers (a GET of `/{code}{query}`). */
async function locationOf(redirect: string, codeAndQuery: string, headers: Record<string, string>): Promise<string | null> {
  const res = await fetch(`${redirect}/${codeAndQuery}`, { redirect: 'manual', headers });
  await res.arrayBuffer();
  return res.headers.get('location');
}

/** A Mercure subscription as Shlink's web client opens one (EventSource with the JWT as a bearer token): the updates' data as they come. */
async function subscribeHub(hubUrl: string, token: string, topics: string[], headers: Record<string, string> = {}) {
  const url = new URL(hubUrl);
  for (const topic of topics) url.searchParams.append('topic', topic);
  const aborted = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers }, signal: aborted.signal });
  const updates: Array<{ id: string; data: Record<string, unknown> }> = [];
  if (res.status === 200 && res.body) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffered += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = buffered.indexOf('\n\n')) >= 0) {
            const block = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            const id = /^id: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (id && data) updates.push({ id, data: JSON.parse(data) });
          }
        }
      } catch {
        // aborted
      }
    })();
  } else {
    await res.arrayBuffer();
  }
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    lastEventId: res.headers.get('last-event-id'),
    updates,
    close: () => aborted.abort(),
  };
}

/**
 * Shlink REST v3 as Shlink's users call it: the official JS SDK (`@shlinkio/shlink-js-sdk`
 * 3, its Node HTTP client) against /rest/v3 with one of our keys, every SDK method that maps to a
 * feature of ours, and the 501 of those that do not (README, "Shlink REST v3").
 */
export function describeShlinkJourney(endpoints: () => Endpoints, tenant: () => Promise<{ tenantId: string; apiKey: string }>) {
  const sdk = (apiKey: string) => new ShlinkApiClient(new NodeHttpClient(), { baseUrl: endpoints().generation, apiKey });
  let key: string;
  let client: ShlinkApiClient;
  const slug = (name: string) => `${name}-${randomUUID().slice(0, 6)}`;

  describe('Shlink REST v3 with the official SDK', () => {
    beforeAll(async () => {
      key = (await tenant()).apiKey;
      client = sdk(key);
    });

    it('health passes, without a key', async () => {
      const health = await sdk('').health();
      expect(health).toMatchObject({ status: 'pass' });
      // A semantic version, as Shlink's web client reads it to turn on the screens of each release (date conditions: 5.0.0).
      expect(health.version).toBe('5.0.0');
    });

    it('answers /rest/v3 on the redirect host as on the generation host: health there, the rest relayed with the key', async () => {
      const onShortHost = (apiKey: string) => new ShlinkApiClient(new NodeHttpClient(), { baseUrl: endpoints().redirect, apiKey });
      expect(await onShortHost('').health()).toMatchObject({ status: 'pass', version: '5.0.0' });
      const customSlug = slug('relay');
      const created = await onShortHost(key).createShortUrl({ longUrl: 'https://example.com/relayed', customSlug, tags: ['relayed'] });
      expect(created).toMatchObject({ shortCode: customSlug, longUrl: 'https://example.com/relayed', tags: ['relayed'] });
      expect((await client.getShortUrl({ shortCode: customSlug })).longUrl).toBe('https://example.com/relayed');
      expect((await onShortHost(key).listShortUrls({ searchTerm: customSlug })).data.map((s) => s.shortCode)).toEqual([customSlug]);
      await onShortHost(key).updateShortUrl({ shortCode: customSlug }, { title: 'Edited on the short host' });
      expect((await client.getShortUrl({ shortCode: customSlug })).title).toBe('Edited on the short host');
      expect(await problemOf(onShortHost('sl_not_a_key_0123456789').listTags())).toMatchObject({ type: ErrorType.INVALID_API_KEY, status: 401 });
      expect(await problemOf(onShortHost(key).getShortUrl({ shortCode: 'no-such-code-here' }))).toMatchObject({
        type: ErrorType.INVALID_SHORTCODE,
        status: 404,
      });
      // The short URL itself still redirects on that host.
      expect(await visit(endpoints().redirect, customSlug, { 'user-agent': BROWSER_UA })).toBe(302);
    });

    it('allows any origin to call it with a key (CORS on by default, never with credentials), on both hosts', async () => {
      const origin = 'https://shlink-ui.example.org';
      for (const base of [endpoints().generation, endpoints().redirect]) {
        const preflight = await fetch(`${base}/rest/v3/short-urls`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key,content-type' },
        });
        await preflight.arrayBuffer();
        expect(preflight.status).toBe(204);
        expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
        expect(preflight.headers.get('access-control-allow-headers')).toContain('x-api-key');
        expect(preflight.headers.get('access-control-allow-methods')).toContain('DELETE');
        expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
        const res = await fetch(`${base}/rest/v3/tags`, { headers: { origin, 'x-api-key': key } });
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      }
      // Our own API keeps CORS_ORIGINS (none here).
      const ours = await fetch(`${endpoints().generation}/api/v1/links`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } });
      await ours.arrayBuffer();
      expect(ours.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('creates a short URL with every Shlink option, reads it back, finds it again with findIfExists, and refuses a slug in use', async () => {
      const customSlug = slug('shl');
      const validUntil = new Date(Date.now() + 7 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
      const created = await client.createShortUrl({
        longUrl: 'https://example.com/shlink/create',
        customSlug,
        tags: ['shlink', 'create'],
        title: 'Made by the Shlink SDK',
        validUntil,
        maxVisits: 50,
        crawlable: true,
        forwardQuery: true, // the SDK leaves false values out of a create: false is set by the edit below
      });
      expect(created).toMatchObject({
        shortCode: customSlug,
        longUrl: 'https://example.com/shlink/create',
        tags: ['shlink', 'create'],
        title: 'Made by the Shlink SDK',
        meta: { validSince: null, validUntil, maxVisits: 50 },
        crawlable: true,
        forwardQuery: true,
        domain: null,
        visitsSummary: { total: 0, nonBots: 0, bots: 0 },
      });
      expect(created.shortUrl).toMatch(new RegExp(`/${customSlug}$`));
      expect(await client.getShortUrl({ shortCode: customSlug })).toEqual(created);
      // The same long URL with findIfExists: the existing short URL, not a new one.
      const again = await client.createShortUrl({ longUrl: 'https://example.com/shlink/create', tags: ['create', 'shlink'], findIfExists: true });
      expect(again.shortCode).toBe(customSlug);
      // A generated code for a URL never shortened before.
      const generated = await client.createShortUrl({ longUrl: `https://example.com/shlink/${randomUUID()}` });
      expect(generated.shortCode).toMatch(/^[0-9A-Za-z]{7}$/);
      const taken = await problemOf(client.createShortUrl({ longUrl: 'https://example.com/other', customSlug }));
      expect(taken).toMatchObject({ type: ErrorType.INVALID_SLUG, status: 400, title: 'Invalid custom slug', customSlug });
      const invalid = await problemOf(client.createShortUrl({ longUrl: 'not a url' }));
      expect(invalid).toMatchObject({ type: ErrorType.INVALID_ARGUMENT, status: 400, invalidElements: ['longUrl'] });
    });

    it('lists with Shlink’s pagination, search term, tags (any and all), excluded tags, order and date range', async () => {
      const mark = randomUUID().slice(0, 8);
      const start = new Date(Date.now() - 1000).toISOString();
      const codes: string[] = [];
      for (const [i, tags] of [['pa', 'pb'], ['pa'], ['pb'], ['pa', 'pb']].entries()) {
        const tagged = tags.map((t) => `${t}-${mark}`);
        codes.push((await client.createShortUrl({ longUrl: `https://example.com/list/${mark}/${i}`, customSlug: `l${i}-${mark}`, tags: tagged })).shortCode);
      }
      const [pa, pb] = [`pa-${mark}`, `pb-${mark}`];
      const all = await client.listShortUrls({ searchTerm: mark, itemsPerPage: 3, page: '1' });
      expect(all.pagination).toMatchObject({ currentPage: 1, pagesCount: 2, totalItems: 4 });
      expect(all.data.map((s) => s.shortCode)).toEqual([codes[3], codes[2], codes[1]]); // newest first
      const second = await client.listShortUrls({ searchTerm: mark, itemsPerPage: 3, page: '2' });
      expect(second.data.map((s) => s.shortCode)).toEqual([codes[0]]);
      const both = await client.listShortUrls({ tags: [pa, pb], tagsMode: 'all', orderBy: { field: 'shortCode', dir: 'ASC' } });
      expect(both.data.map((s) => s.shortCode)).toEqual([codes[0], codes[3]]);
      const any = await client.listShortUrls({ tags: [pa, pb], tagsMode: 'any', itemsPerPage: -1 });
      expect(any.pagination.totalItems).toBe(4);
      const aNotB = await client.listShortUrls({ tags: [pa], excludeTags: [pb] });
      expect(aNotB.data.map((s) => s.shortCode)).toEqual([codes[1]]);
      const notBoth = await client.listShortUrls({
        searchTerm: mark,
        excludeTags: [pa, pb],
        excludeTagsMode: 'all',
        orderBy: { field: 'shortCode', dir: 'ASC' },
      });
      expect(notBoth.data.map((s) => s.shortCode)).toEqual([codes[1], codes[2]]);
      const onlyA = await client.listShortUrls({ tags: [pa] });
      expect(onlyA.data.map((s) => s.shortCode).sort()).toEqual([codes[0], codes[1], codes[3]].sort());
      const inRange = await client.listShortUrls({ searchTerm: mark, startDate: start, endDate: new Date(Date.now() + 1000).toISOString() });
      expect(inRange.pagination.totalItems).toBe(4);
      const before = await client.listShortUrls({ searchTerm: mark, endDate: start });
      expect(before.pagination.totalItems).toBe(0);
    });

    it('edits (null clears) and deletes; a deleted short URL is Shlink’s not found', async () => {
      const shortCode = slug('edit');
      await client.createShortUrl({ longUrl: 'https://example.com/before', customSlug: shortCode, title: 'Before', maxVisits: 3, tags: ['e1'] });
      const edited = await client.updateShortUrl(
        { shortCode },
        { longUrl: 'https://example.com/after', title: null, maxVisits: null, tags: ['e2', 'e3'], crawlable: true, forwardQuery: false, validUntil: null },
      );
      expect(edited).toMatchObject({
        shortCode,
        longUrl: 'https://example.com/after',
        title: null,
        tags: ['e2', 'e3'],
        crawlable: true,
        forwardQuery: false,
        meta: { maxVisits: null, validUntil: null },
      });
      // The redirect follows the edit.
      const res = await fetch(`${endpoints().redirect}/${shortCode}?ref=visitor`, { redirect: 'manual' });
      expect(res.headers.get('location')).toBe('https://example.com/after'); // forwardQuery false: the visitor's query stays behind
      await client.deleteShortUrl({ shortCode });
      const gone = await problemOf(client.getShortUrl({ shortCode }));
      expect(gone).toMatchObject({ type: ErrorType.INVALID_SHORTCODE, status: 404, title: 'Short URL not found', shortCode });
      expect(await problemOf(client.deleteShortUrl({ shortCode }))).toMatchObject({ type: ErrorType.INVALID_SHORTCODE, status: 404 });
    });

    it('lists, counts, renames and deletes tags across short URLs', async () => {
      const own = sdk((await tenant()).apiKey); // a tenant of its own: its tags are only these
      await own.createShortUrl({ longUrl: 'https://example.com/t1', tags: ['red', 'blue'] });
      await own.createShortUrl({ longUrl: 'https://example.com/t2', tags: ['red'] });
      expect(await own.listTags()).toEqual({ data: ['blue', 'red'] });
      const stats = await own.tagsStats();
      expect(stats.data).toEqual([
        { tag: 'blue', shortUrlsCount: 1, visitsSummary: { total: 0, nonBots: 0, bots: 0 } },
        { tag: 'red', shortUrlsCount: 2, visitsSummary: { total: 0, nonBots: 0, bots: 0 } },
      ]);
      expect(await own.editTag({ oldName: 'red', newName: 'green' })).toEqual({ oldName: 'red', newName: 'green' });
      expect((await own.listTags()).data).toEqual(['blue', 'green']);
      expect(await problemOf(own.editTag({ oldName: 'green', newName: 'blue' }))).toMatchObject({ type: ErrorType.TAG_CONFLICT, status: 409 });
      expect(await problemOf(own.editTag({ oldName: 'nope', newName: 'other' }))).toMatchObject({ type: ErrorType.TAG_NOT_FOUND, status: 404 });
      await own.deleteTags(['green']);
      expect((await own.listTags()).data).toEqual(['blue']);
      const left = await own.listShortUrls({ itemsPerPage: -1 });
      expect(left.data.map((s) => s.tags).sort()).toEqual([[], ['blue']]);
    });

    it('answers visits in Shlink’s shape per short URL, tag, domain and overall, with totals in the short URL and the overview', async () => {
      const own = sdk((await tenant()).apiKey);
      const shortCode = slug('vis');
      await own.createShortUrl({ longUrl: 'https://example.com/visited', customSlug: shortCode, tags: ['visited'] });
      expect(await visit(endpoints().redirect, shortCode, { 'user-agent': BROWSER_UA, referer: 'https://news.example.org/story' })).toBe(302);
      expect(await visit(endpoints().redirect, shortCode, { 'user-agent': BROWSER_UA })).toBe(302);
      expect(await visit(endpoints().redirect, shortCode, { 'user-agent': BOT_UA })).toBe(302);
      const visits = await eventually('three visits', async () => {
        const page = await own.getShortUrlVisits({ shortCode });
        return page.pagination.totalItems === 3 && page;
      });
      expect(visits.data[0]).toEqual(
        expect.objectContaining({
          date: expect.stringMatching(/\+00:00$/),
          potentialBot: expect.any(Boolean),
          userAgent: expect.any(String),
          visitLocation: null,
        }),
      );
      expect(visits.data.filter((v) => v.potentialBot)).toHaveLength(1);
      // The visitor's browser and OS read back from the visit's userAgent, as Shlink's web client parses it (we keep no user agent).
      const parsed = (ua: string) => ({ browser: new UAParser(ua).getBrowser().name, os: new UAParser(ua).getOS().name });
      const people = visits.data.filter((v) => !v.potentialBot);
      expect(people.map((v) => parsed(v.userAgent))).toEqual([parsed(BROWSER_UA), parsed(BROWSER_UA)]);
      expect(parsed(BROWSER_UA).os).toBeTruthy();
      expect(visits.data.map((v) => v.referer)).toContain('news.example.org');
      expect(visits.data.every((v) => v.visitedUrl?.endsWith(`/${shortCode}`))).toBe(true);
      expect((await own.getShortUrlVisits({ shortCode }, { excludeBots: true })).pagination.totalItems).toBe(2);
      expect((await own.getShortUrlVisits({ shortCode }, { itemsPerPage: 2, page: 2 })).data).toHaveLength(1);
      expect((await own.getTagVisits('visited')).pagination.totalItems).toBe(3);
      expect((await own.getDomainVisits('DEFAULT')).pagination.totalItems).toBe(3);
      expect((await own.getNonOrphanVisits()).pagination.totalItems).toBe(3);
      expect((await own.getShortUrlVisits({ shortCode }, { endDate: new Date(Date.now() - 3_600_000).toISOString() })).data).toEqual([]);
      const overview = await eventually('the overview counts them', async () => {
        const o = await own.getVisitsOverview();
        return o.nonOrphanVisits.total === 3 && o;
      });
      expect(overview.nonOrphanVisits).toEqual({ total: 3, nonBots: 2, bots: 1 });
      expect((await own.getShortUrl({ shortCode })).visitsSummary).toEqual({ total: 3, nonBots: 2, bots: 1 });
      expect((await own.tagsStats()).data).toEqual([{ tag: 'visited', shortUrlsCount: 1, visitsSummary: { total: 3, nonBots: 2, bots: 1 } }]);
      expect(await problemOf(own.getTagVisits('no-such-tag'))).toMatchObject({ type: ErrorType.TAG_NOT_FOUND, status: 404 });
      expect(await problemOf(own.getDomainVisits('not-ours.example'))).toMatchObject({ type: ErrorType.DOMAIN_NOT_FOUND, status: 404 });
    });

    it('orphan visits (unknown codes on the service’s domains) for the operator, none for a tenant without domains of its own', async () => {
      const operator = sdk(API_KEY);
      const unknown = `zz${randomUUID().slice(0, 6)}`;
      expect(await visit(endpoints().redirect, unknown, { 'user-agent': BROWSER_UA })).toBe(404);
      const orphans = await eventually('the orphan visit', async () => {
        const page = await operator.getOrphanVisits({ itemsPerPage: -1 });
        return page.data.find((v) => v.visitedUrl?.endsWith(`/${unknown}`));
      });
      expect(orphans).toMatchObject({ type: 'invalid_short_url', potentialBot: false });
      expect((await operator.getVisitsOverview()).orphanVisits.total).toBeGreaterThanOrEqual(1);
      expect((await client.getOrphanVisits()).data).toEqual([]);
    });

    it('deletes a short URL’s visits and the orphan visits from every table of the analytics store, audited', async () => {
      const own = await tenant();
      const mine = sdk(own.apiKey);
      const shortCode = slug('del');
      const keptCode = slug('keep');
      await mine.createShortUrl({ longUrl: 'https://example.com/deleted-visits', customSlug: shortCode, tags: ['deleting'] });
      await mine.createShortUrl({ longUrl: 'https://example.com/kept-visits', customSlug: keptCode, tags: ['deleting'] });
      for (const code of [shortCode, shortCode, keptCode]) expect(await visit(endpoints().redirect, code, { 'user-agent': BROWSER_UA })).toBe(302);
      await eventually(
        'the visits are counted',
        async () =>
          (await mine.getShortUrl({ shortCode })).visitsSummary?.total === 2 && (await mine.getShortUrlVisits({ shortCode })).pagination.totalItems === 2,
      );
      await eventually('the other link’s too', async () => (await mine.getShortUrlVisits({ shortCode: keptCode })).pagination.totalItems === 1);

      expect(await mine.deleteShortUrlVisits({ shortCode })).toEqual({ deletedVisits: 2 });
      await eventually('gone from the raw visits and the counts', async () => {
        const [visits, summary, tag] = await Promise.all([mine.getShortUrlVisits({ shortCode }), mine.getShortUrl({ shortCode }), mine.tagsStats()]);
        return visits.pagination.totalItems === 0 && summary.visitsSummary?.total === 0 && tag.data[0]?.visitsSummary?.total === 1;
      });
      expect((await mine.getShortUrlVisits({ shortCode: keptCode })).pagination.totalItems).toBe(1);
      expect((await mine.getVisitsOverview()).nonOrphanVisits.total).toBe(1);
      const log = await api(endpoints().generation, 'GET', `/api/v1/audit-log?target=${shortCode}&action=link.visits_deleted`, own.apiKey);
      expect(log.status).toBe(200);
      expect(log.body.entries).toEqual([expect.objectContaining({ action: 'link.visits_deleted', details: { deletedVisits: 2 } })]);
      expect(await problemOf(mine.deleteShortUrlVisits({ shortCode: 'no-such-code-here' }))).toMatchObject({ type: ErrorType.INVALID_SHORTCODE, status: 404 });
      const reader = await api(endpoints().generation, 'POST', '/api/v1/keys', own.apiKey, { name: 'visits-reader', scopes: ['links:read', 'analytics:read'] });
      expect(await problemOf(sdk(reader.body.apiKey as string).deleteShortUrlVisits({ shortCode: keptCode }))).toMatchObject({
        status: 403,
        code: 'INSUFFICIENT_SCOPE',
      });

      // Orphan visits: a tenant without domains of its own sees none and deletes none; the operator those of the service's domains.
      expect(await mine.deleteOrphanVisits()).toEqual({ deletedVisits: 0 });
      const operator = sdk(API_KEY);
      const unknown = `zz${randomUUID().slice(0, 6)}`;
      expect(await visit(endpoints().redirect, unknown, { 'user-agent': BROWSER_UA })).toBe(404);
      await eventually('the orphan visit', async () =>
        (await operator.getOrphanVisits({ itemsPerPage: -1 })).data.some((v) => v.visitedUrl?.endsWith(`/${unknown}`)),
      );
      expect((await operator.deleteOrphanVisits()).deletedVisits).toBeGreaterThanOrEqual(1);
      await eventually(
        'no orphan visit left',
        async () =>
          (await operator.getOrphanVisits({ itemsPerPage: -1 })).pagination.totalItems === 0 && (await operator.getVisitsOverview()).orphanVisits.total === 0,
      );
      const operatorLog = await api(endpoints().generation, 'GET', '/api/v1/audit-log?action=orphan_visits.deleted', API_KEY);
      expect(operatorLog.body.entries[0]).toMatchObject({ action: 'orphan_visits.deleted', details: { deletedVisits: expect.any(Number) } });
    });

    it('lists domains with their redirects and sets the default domain’s three redirects (operators only), which the redirect applies', async () => {
      const operator = sdk(API_KEY);
      const domains = await client.listDomains();
      const defaultDomain = domains.data.find((d) => d.isDefault)!;
      expect(defaultDomain).toBeDefined();
      const redirects = await operator.editDomainRedirects({
        domain: defaultDomain.domain,
        baseUrlRedirect: 'https://example.com/home',
        regular404Redirect: 'https://example.com/no-such-page',
        invalidShortUrlRedirect: 'https://example.com/missing',
      });
      // Shlink's two 404 redirects are two settings.
      expect(redirects).toEqual({
        baseUrlRedirect: 'https://example.com/home',
        regular404Redirect: 'https://example.com/no-such-page',
        invalidShortUrlRedirect: 'https://example.com/missing',
      });
      expect((await operator.listDomains()).defaultRedirects).toEqual(redirects);
      // Absent stays.
      expect(await operator.editDomainRedirects({ domain: defaultDomain.domain, baseUrlRedirect: 'https://example.com/home2' })).toEqual({
        ...redirects,
        baseUrlRedirect: 'https://example.com/home2',
      });

      // The redirect sends a browser to each: an unknown code, any other path, the root.
      const html = { 'user-agent': BROWSER_UA, accept: 'text/html,application/xhtml+xml' };
      const unknownCode = `zz${randomUUID().slice(0, 6)}`;
      // Both edits reach the redirect at its next refresh; the second (the root's) is the one to wait for.
      await eventually(
        'the redirect has the new settings',
        async () =>
          (await locationOf(endpoints().redirect, '', html)) === 'https://example.com/home2' &&
          (await locationOf(endpoints().redirect, unknownCode, html)) === 'https://example.com/missing',
      );
      expect(await locationOf(endpoints().redirect, 'wp-login.php', html)).toBe('https://example.com/no-such-page');
      expect(await locationOf(endpoints().redirect, 'assets/x/y.png', html)).toBe('https://example.com/no-such-page');
      expect(await locationOf(endpoints().redirect, '', html)).toBe('https://example.com/home2');
      // A program keeps the 404 problem.
      const plain = await fetch(`${endpoints().redirect}/wp-login.php`, { redirect: 'manual', headers: { accept: 'application/json' } });
      expect(plain.status).toBe(404);
      expect(plain.headers.get('content-type')).toContain('application/problem+json');
      expect((await plain.json()).code).toBe('ROUTE_NOT_FOUND');

      // A tenant's key cannot change the service's default domain for every tenant: a problem, nothing saved.
      const refused = await problemOf(client.editDomainRedirects({ domain: defaultDomain.domain, baseUrlRedirect: 'https://example.com/x' }));
      expect(refused).toMatchObject({ status: 403, code: 'INSUFFICIENT_SCOPE' });
      expect(refused.detail).toMatch(/admin scope/);
      expect(await problemOf(operator.editDomainRedirects({ domain: defaultDomain.domain, regular404Redirect: 'not a url' }))).toMatchObject({
        type: ErrorType.INVALID_ARGUMENT,
        status: 400,
      });
      expect((await operator.listDomains()).defaultRedirects.baseUrlRedirect).toBe('https://example.com/home2');

      await operator.editDomainRedirects({ domain: defaultDomain.domain, baseUrlRedirect: null, regular404Redirect: null, invalidShortUrlRedirect: null });
      expect((await operator.listDomains()).defaultRedirects).toEqual({ baseUrlRedirect: null, regular404Redirect: null, invalidShortUrlRedirect: null });
      await eventually('the redirect drops them', async () => (await locationOf(endpoints().redirect, 'wp-login.php', html)) === null);
    });

    it('reads and replaces redirect rules (the rules of /api/v1/links), and the redirect takes the first rule whose conditions all hold', async () => {
      const shortCode = slug('rules');
      const longUrl = 'https://example.com/rules';
      const created = await api(endpoints().generation, 'POST', '/api/v1/links', key, {
        url: longUrl,
        alias: shortCode,
        deviceTargets: { android: `${longUrl}/android` },
      });
      expect(created.status).toBe(201);
      // A device target of ours is a rule of one device condition.
      expect(await client.getShortUrlRedirectRules({ shortCode })).toEqual({
        defaultLongUrl: longUrl,
        redirectRules: [{ longUrl: `${longUrl}/android`, priority: 1, conditions: [{ type: 'device', matchKey: null, matchValue: 'android' }] }],
      });

      const past = new Date(Date.now() - 86_400_000).toISOString();
      const cond = (type: string, matchValue: string | null, matchKey: string | null = null) =>
        ({ type, matchKey, matchValue }) as Parameters<ShlinkApiClient['setShortUrlRedirectRules']>[1]['redirectRules'][number]['conditions'][number];
      const set = await client.setShortUrlRedirectRules(
        { shortCode },
        {
          redirectRules: [
            { longUrl: `${longUrl}/es-spring`, conditions: [cond('language', 'es'), cond('query-param', 'spring', 'campaign')] },
            { longUrl: `${longUrl}/es`, conditions: [cond('language', 'es')] },
            { longUrl: `${longUrl}/windows`, conditions: [cond('device', 'windows')] },
            { longUrl: `${longUrl}/expired`, conditions: [cond('device', 'android'), cond('before-date', past)] },
            {
              longUrl: `${longUrl}/local`,
              conditions: [cond('ip-address', '127.0.0.0/8'), cond('after-date', past), cond('any-value-query-param', null, 'src')],
            },
          ],
        },
      );
      expect(set.defaultLongUrl).toBe(longUrl);
      expect(set.redirectRules.map((r) => [r.priority, r.longUrl.slice(longUrl.length)])).toEqual([
        [1, '/es-spring'],
        [2, '/es'],
        [3, '/windows'],
        [4, '/expired'],
        [5, '/local'],
      ]);
      expect(set.redirectRules[0].conditions).toEqual([cond('language', 'es'), cond('query-param', 'spring', 'campaign')]);
      expect(set.redirectRules[4].conditions[2]).toEqual(cond('any-value-query-param', null, 'src'));
      expect(await client.getShortUrlRedirectRules({ shortCode })).toEqual(set);
      expect((await client.getShortUrl({ shortCode })).hasRedirectRules).toBe(true);

      // Our own API reads the same rules, in our words.
      const ours = await api(endpoints().generation, 'GET', `/api/v1/links/${shortCode}`, key);
      expect(ours.status).toBe(200);
      expect(ours.body.redirectRules).toHaveLength(5);
      expect(ours.body.redirectRules[2]).toEqual({ url: `${longUrl}/windows`, conditions: [{ type: 'os', value: 'windows' }] });
      expect(ours.body.redirectRules[4].conditions[2]).toEqual({ type: 'query-param', name: 'src' });
      expect(ours.body.deviceTargets).toBeNull(); // the Android rule was replaced

      const redirect = endpoints().redirect;
      // Both conditions of rule 1 hold; the visitor's query is forwarded (forwardQuery).
      expect(await locationOf(redirect, `${shortCode}?campaign=spring`, { 'user-agent': BROWSER_UA, 'accept-language': 'es-MX,es;q=0.95' })).toBe(
        `${longUrl}/es-spring?campaign=spring`,
      );
      expect(await locationOf(redirect, shortCode, { 'user-agent': BROWSER_UA, 'accept-language': 'es' })).toBe(`${longUrl}/es`);
      // Spanish below the 0.9 quality does not count: the Windows rule is next.
      expect(await locationOf(redirect, shortCode, { 'user-agent': BROWSER_UA, 'accept-language': 'en-GB,es;q=0.5' })).toBe(`${longUrl}/windows`);
      // Android: rule 4's date has passed, rule 5 needs its parameter; then the long URL.
      expect(await locationOf(redirect, `${shortCode}?src=qr`, { 'user-agent': ANDROID_UA })).toBe(`${longUrl}/local?src=qr`);
      expect(await locationOf(redirect, shortCode, { 'user-agent': ANDROID_UA })).toBe(longUrl);

      // Invalid rules are Shlink's invalid data, and change nothing.
      const refused = await problemOf(
        client.setShortUrlRedirectRules({ shortCode }, { redirectRules: [{ longUrl, conditions: [cond('language', 'not a language')] }] }),
      );
      expect(refused).toMatchObject({ type: ErrorType.INVALID_ARGUMENT, status: 400 });
      expect(refused.detail).toMatch(/redirectRules\.0\.conditions\.0\.value/);
      expect(await client.getShortUrlRedirectRules({ shortCode })).toEqual(set);

      // [] removes them all.
      expect(await client.setShortUrlRedirectRules({ shortCode }, { redirectRules: [] })).toEqual({ defaultLongUrl: longUrl, redirectRules: [] });
      expect((await client.getShortUrl({ shortCode })).hasRedirectRules).toBe(false);
      await eventually(
        'the redirect drops the rules',
        async () => (await locationOf(redirect, shortCode, { 'user-agent': BROWSER_UA, 'accept-language': 'es' })) === longUrl,
      );
    });

    it('publishes visits through a Mercure hub (mercure-info: its URL on the host asked and a JWT), per tenant and topic, on both hosts', async () => {
      const shortCode = slug('live');
      await client.createShortUrl({ longUrl: 'https://example.com/live', customSlug: shortCode });
      const info = await client.mercureInfo();
      expect(info.mercureHubUrl).toBe(`${endpoints().generation}/.well-known/mercure`);
      expect(info.token.split('.')).toHaveLength(3);
      const onShortHost = new ShlinkApiClient(new NodeHttpClient(), { baseUrl: endpoints().redirect, apiKey: key });
      const shortHostInfo = await onShortHost.mercureInfo();
      expect(shortHostInfo.mercureHubUrl).toBe(`${endpoints().redirect}/.well-known/mercure`);

      const everyVisit = await subscribeHub(info.mercureHubUrl, info.token, ['https://shlink.io/new-visit']);
      const thisLink = await subscribeHub(shortHostInfo.mercureHubUrl, shortHostInfo.token, [`https://shlink.io/new-visit/${shortCode}`]);
      const otherLink = await subscribeHub(info.mercureHubUrl, info.token, ['https://shlink.io/new-visit/no-such-code']);
      const stranger = await tenant();
      const strangerInfo = await sdk(stranger.apiKey).mercureInfo();
      const strangers = await subscribeHub(strangerInfo.mercureHubUrl, strangerInfo.token, ['https://shlink.io/new-visit']);
      try {
        expect(everyVisit).toMatchObject({ status: 200, contentType: expect.stringContaining('text/event-stream') });
        expect(thisLink.status).toBe(200);
        // The hub's consumer joins the click topic with the first subscription: visit until an update comes.
        await eventually(
          'an update on both hubs',
          async () => {
            expect(await visit(endpoints().redirect, shortCode, { 'user-agent': BROWSER_UA })).toBe(302);
            await new Promise((r) => setTimeout(r, 300));
            return everyVisit.updates.some((u) => (u.data.shortUrl as { shortCode: string }).shortCode === shortCode) && thisLink.updates.length > 0;
          },
          60_000,
        );
        const update = thisLink.updates[0];
        expect(update.id).toMatch(/^urn:uuid:/);
        expect(update.data.shortUrl).toMatchObject({ shortCode, longUrl: 'https://example.com/live', visitsSummary: expect.any(Object) });
        expect(update.data.visit).toMatchObject({ shortCode, potentialBot: false, date: expect.stringMatching(/\+00:00$/) });
        expect(new UAParser((update.data.visit as { userAgent: string }).userAgent).getOS().name).toBe('Windows');
        expect(otherLink.updates).toEqual([]);
        expect(strangers.updates).toEqual([]);

        // A reconnection with the last id it got (as EventSource sends it, through the redirect host's relay) first gets what it missed.
        thisLink.close();
        const lastId = thisLink.updates.at(-1)!.id;
        const seen = everyVisit.updates.length;
        for (let i = 0; i < 2; i++) expect(await visit(endpoints().redirect, shortCode, { 'user-agent': BROWSER_UA })).toBe(302);
        await eventually('the hub made the missed updates', async () => everyVisit.updates.length >= seen + 2, 60_000);
        // Missed: every update of the link after the last one it got (the hub makes each once, for every subscriber; a click of the loop above may have come after it too).
        const ofLink = everyVisit.updates.filter((u) => (u.data.shortUrl as { shortCode: string }).shortCode === shortCode).map((u) => u.id);
        const missed = ofLink.slice(ofLink.indexOf(lastId) + 1);
        expect(missed.length).toBeGreaterThanOrEqual(2);
        const again = await subscribeHub(shortHostInfo.mercureHubUrl, shortHostInfo.token, [`https://shlink.io/new-visit/${shortCode}`], {
          'last-event-id': lastId,
        });
        try {
          expect(again.lastEventId).toBe(lastId);
          await eventually('the missed updates replayed', async () => again.updates.length >= missed.length, 10_000);
          expect(again.updates.map((u) => u.id)).toEqual(missed);
        } finally {
          again.close();
        }
        // An id the hub does not keep: `earliest`, nothing replayed (the lastEventID parameter, as a first EventSource connection can send it).
        const unknownId = await subscribeHub(`${info.mercureHubUrl}?lastEventID=urn:uuid:not-kept`, info.token, ['https://shlink.io/new-visit']);
        unknownId.close();
        expect(unknownId).toMatchObject({ status: 200, lastEventId: 'earliest', updates: [] });
      } finally {
        for (const s of [everyVisit, thisLink, otherLink, strangers]) s.close();
      }

      // Orphan visits: the operator's token names the service's domains.
      const operatorInfo = await sdk(API_KEY).mercureInfo();
      const orphans = await subscribeHub(operatorInfo.mercureHubUrl, operatorInfo.token, ['https://shlink.io/new-orphan-visit']);
      try {
        const unknown = `zz${randomUUID().slice(0, 6)}`;
        await eventually(
          'the orphan visit update',
          async () => {
            expect(await visit(endpoints().redirect, unknown, { 'user-agent': BROWSER_UA })).toBe(404);
            await new Promise((r) => setTimeout(r, 300));
            return orphans.updates.find((u) => (u.data.visit as { visitedUrl: string }).visitedUrl.endsWith(`/${unknown}`));
          },
          60_000,
        );
        expect(orphans.updates[0].data.visit).toMatchObject({ type: 'invalid_short_url' });
      } finally {
        orphans.close();
      }

      // Refusals: no token or a bad one (401), a topic the token does not allow (403); CORS as for the API.
      expect((await subscribeHub(info.mercureHubUrl, 'not.a.token', ['https://shlink.io/new-visit'])).status).toBe(401);
      const wrongTopic = await subscribeHub(info.mercureHubUrl, info.token, ['https://example.com/elsewhere']);
      expect(wrongTopic.status).toBe(403);
      const bare = await fetch(`${info.mercureHubUrl}?topic=https://shlink.io/new-visit`);
      await bare.arrayBuffer();
      expect(bare.status).toBe(401);
      const preflight = await fetch(info.mercureHubUrl, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://shlink-ui.example.org',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization,last-event-id',
        },
      });
      await preflight.arrayBuffer();
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    });

    it('answers each method of the SDK’s ShlinkApiClient (every one its prototype has) in its documented shape, none with 501 or any failure', async () => {
      // Every request the SDK makes, with the status it got (the SDK's own fetch client, given a recording fetch).
      const answered: Array<{ request: string; status: number }> = [];
      const recording: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        answered.push({ request: `${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`, status: res.status });
        return res;
      };
      const own = await tenant();
      const mine = new ShlinkApiClient(new FetchHttpClient(recording), { baseUrl: endpoints().generation, apiKey: own.apiKey });
      const code = slug('every');
      const tag = slug('every-tag');
      const summary = { total: expect.any(Number), nonBots: expect.any(Number), bots: expect.any(Number) };
      const pagination = expect.objectContaining({ currentPage: expect.any(Number), pagesCount: expect.any(Number), totalItems: expect.any(Number) });
      const shortUrl = (shortCode: string) => ({
        shortCode,
        shortUrl: expect.stringMatching(new RegExp(`/${shortCode}$`)),
        longUrl: expect.any(String),
        dateCreated: expect.any(String),
        domain: null,
        visitsSummary: summary,
        meta: { validSince: null, validUntil: null, maxVisits: null },
        tags: expect.any(Array),
      });
      const visitsList = (minimum: number) => async (list: Awaited<ReturnType<ShlinkApiClient['getShortUrlVisits']>>) => {
        expect(list).toEqual({ data: expect.any(Array), pagination });
        expect(list.data.length).toBeGreaterThanOrEqual(minimum);
        for (const v of list.data) expect(v).toMatchObject({ date: expect.any(String), userAgent: expect.any(String), potentialBot: expect.any(Boolean) });
      };
      // An asymmetric matcher (Jest's equality calls asymmetricMatch): null or a string.
      const nullOrString = { asymmetricMatch: (v: unknown) => v === null || typeof v === 'string', toString: () => 'null or a string' };
      const redirects = { baseUrlRedirect: nullOrString, regular404Redirect: nullOrString, invalidShortUrlRedirect: nullOrString };
      // In order: each method once, the short URL created first and deleted last.
      const calls: Record<string, () => Promise<void>> = {
        health: async () => expect(await mine.health()).toMatchObject({ status: 'pass', version: expect.stringMatching(/^\d+\.\d+\.\d+$/) }),
        createShortUrl: async () => {
          expect(await mine.createShortUrl({ longUrl: 'https://example.com/every-method', customSlug: code, tags: [tag] })).toMatchObject(shortUrl(code));
          expect(await visit(endpoints().redirect, code, { 'user-agent': BROWSER_UA })).toBe(302);
          await eventually('the visit stored', async () => (await mine.getShortUrl({ shortCode: code })).visitsSummary.total === 1, 60_000);
        },
        getShortUrl: async () => expect(await mine.getShortUrl({ shortCode: code })).toMatchObject({ ...shortUrl(code), tags: [tag] }),
        listShortUrls: async () => {
          const list = await mine.listShortUrls({ itemsPerPage: 10, tags: [tag], orderBy: { field: 'dateCreated', dir: 'DESC' } });
          expect(list).toEqual({ data: [expect.objectContaining(shortUrl(code))], pagination });
        },
        updateShortUrl: async () =>
          expect(await mine.updateShortUrl({ shortCode: code }, { title: 'Every method' })).toMatchObject({ ...shortUrl(code), title: 'Every method' }),
        setShortUrlRedirectRules: async () =>
          expect(
            await mine.setShortUrlRedirectRules(
              { shortCode: code },
              { redirectRules: [{ longUrl: 'https://example.com/every-android', conditions: [{ type: 'device', matchKey: null, matchValue: 'android' }] }] },
            ),
          ).toEqual({
            defaultLongUrl: 'https://example.com/every-method',
            redirectRules: [
              { longUrl: 'https://example.com/every-android', priority: 1, conditions: [{ type: 'device', matchKey: null, matchValue: 'android' }] },
            ],
          }),
        getShortUrlRedirectRules: async () =>
          expect(await mine.getShortUrlRedirectRules({ shortCode: code })).toMatchObject({
            defaultLongUrl: 'https://example.com/every-method',
            redirectRules: [{ longUrl: 'https://example.com/every-android', priority: 1 }],
          }),
        getVisitsOverview: async () => expect(await mine.getVisitsOverview()).toMatchObject({ nonOrphanVisits: summary, orphanVisits: summary }),
        getShortUrlVisits: async () => visitsList(1)(await mine.getShortUrlVisits({ shortCode: code })),
        getTagVisits: async () => visitsList(1)(await mine.getTagVisits(tag)),
        getDomainVisits: async () => visitsList(1)(await mine.getDomainVisits('DEFAULT')),
        getNonOrphanVisits: async () => visitsList(1)(await mine.getNonOrphanVisits()),
        getOrphanVisits: async () => visitsList(0)(await mine.getOrphanVisits()),
        listTags: async () => expect(await mine.listTags()).toEqual({ data: expect.arrayContaining([tag]) }),
        tagsStats: async () => expect((await mine.tagsStats()).data).toEqual(expect.arrayContaining([{ tag, shortUrlsCount: 1, visitsSummary: summary }])),
        editTag: async () => {
          expect(await mine.editTag({ oldName: tag, newName: `${tag}-x` })).toEqual({ oldName: tag, newName: `${tag}-x` });
          expect((await mine.getShortUrl({ shortCode: code })).tags).toEqual([`${tag}-x`]);
        },
        deleteTags: async () => {
          expect(await mine.deleteTags([`${tag}-x`])).toEqual({ tags: [`${tag}-x`] });
          expect((await mine.getShortUrl({ shortCode: code })).tags).toEqual([]);
        },
        listDomains: async () => {
          const domains = await mine.listDomains();
          expect(domains).toEqual({ data: expect.any(Array), defaultRedirects: redirects });
          expect(domains.data).toContainEqual({ domain: expect.any(String), isDefault: true, redirects });
        },
        editDomainRedirects: async () => {
          // The default domain's redirects are every tenant's: an operator key edits them (Shlink's admin key); set to what they are.
          const operator = new ShlinkApiClient(new FetchHttpClient(recording), { baseUrl: endpoints().generation, apiKey: API_KEY });
          const domains = await operator.listDomains();
          const current = domains.data.find((d) => d.isDefault)!;
          expect(await operator.editDomainRedirects({ domain: current.domain, ...current.redirects })).toEqual({ ...current.redirects });
        },
        mercureInfo: async () =>
          expect(await mine.mercureInfo()).toEqual({
            mercureHubUrl: `${endpoints().generation}/.well-known/mercure`,
            token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
          }),
        deleteShortUrlVisits: async () => expect(await mine.deleteShortUrlVisits({ shortCode: code })).toEqual({ deletedVisits: 1 }),
        deleteOrphanVisits: async () => expect(await mine.deleteOrphanVisits()).toEqual({ deletedVisits: 0 }),
        deleteShortUrl: async () => {
          expect(await mine.deleteShortUrl({ shortCode: code })).toBeUndefined();
          expect(await problemOf(mine.getShortUrl({ shortCode: code }))).toMatchObject({ type: ErrorType.INVALID_SHORTCODE, status: 404 });
        },
      };
      const methods = Object.getOwnPropertyNames(ShlinkApiClient.prototype).filter(
        (name) => name !== 'constructor' && typeof (ShlinkApiClient.prototype as unknown as Record<string, unknown>)[name] === 'function',
      );
      // A method the SDK gains fails here until it is called above.
      expect(Object.keys(calls).sort()).toEqual([...methods].sort());
      for (const [method, call] of Object.entries(calls)) {
        const from = answered.length;
        try {
          await call();
        } catch (error) {
          throw new Error(`${method}: ${error instanceof Error ? error.message : JSON.stringify(error)}`, { cause: error });
        }
        const made = answered.slice(from);
        expect({
          method,
          requests: made.length > 0,
          failed: made.filter((a) => a.status >= 400 && !(method === 'deleteShortUrl' && a.status === 404)),
        }).toEqual({
          method,
          requests: true,
          failed: [],
        });
      }
      // @shlinkio/shlink-js-sdk 3.2.1 has 23.
      expect(methods).toHaveLength(23);
      expect(answered.filter((a) => a.status === 501)).toEqual([]);
    });

    it('answers every SDK method (none is 501 any more), and Shlink’s auth problems; keys keep their scopes, plan headers and audit log', async () => {
      const shortCode = (await client.createShortUrl({ longUrl: 'https://example.com/unmapped' })).shortCode;

      expect(await problemOf(sdk('sl_not_a_key_0123456789').listTags())).toMatchObject({ type: ErrorType.INVALID_API_KEY, status: 401 });
      const reader = await api(endpoints().generation, 'POST', '/api/v1/keys', key, { name: 'shlink-reader', scopes: ['links:read'] });
      expect(reader.status).toBe(201);
      const readOnly = sdk(reader.body.apiKey as string);
      expect((await readOnly.listShortUrls()).pagination.totalItems).toBeGreaterThan(0);
      expect(await problemOf(readOnly.createShortUrl({ longUrl: 'https://example.com/refused' }))).toMatchObject({ status: 403, code: 'INSUFFICIENT_SCOPE' });
      expect(await problemOf(readOnly.getVisitsOverview())).toMatchObject({ status: 403 });

      const res = await fetch(`${endpoints().generation}/rest/v3/tags`, { headers: { 'x-api-key': key } });
      expect(res.status).toBe(200);
      expect(Number(res.headers.get('ratelimit-limit'))).toBeGreaterThan(0);
      const log = await api(endpoints().generation, 'GET', `/api/v1/audit-log?target=${shortCode}&action=link.created`, key);
      expect(log.status).toBe(200);
      expect(log.body.entries).toHaveLength(1);

      const doc = await (await fetch(`${endpoints().generation}/docs/shlink/openapi.json`)).json();
      expect(doc.paths['/rest/v3/short-urls'].post.operationId).toBe('createShortUrl');
      expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['ShlinkShortUrl', 'ShlinkVisit', 'ShlinkProblem']));
    });
  });
}
