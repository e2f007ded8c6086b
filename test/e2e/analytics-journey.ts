import { Endpoints, eventually } from '@shortlink/harness';
import { API_KEY, createLink, redirectOf } from './support';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const SLACKBOT = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';
const DIMENSIONS = ['countries', 'referers', 'devices', 'browsers', 'os', 'variants', 'sources', 'cities'] as const;

type Item = { value: string | null; clicks: number; visitors: number; share: number };

/**
 * What an analyst does, on either profile: clicks from two people in two countries (a desktop
 * browser behind a news referer, an iPhone typed in) and a link-preview bot, then every endpoint
 * of the query API, as JSON and as CSV, and the errors a mistyped query gets. The processes must
 * trust loopback as a proxy (TRUSTED_PROXIES), so X-Forwarded-For carries the visitors' addresses,
 * and locate them on the city database (GEO_DATABASE=city).
 */
export function describeAnalyticsJourney(endpoints: () => Endpoints, otherTenantKey: () => Promise<string>) {
  describe('analytics', () => {
    let code: string;
    let domain: string;
    const orphan = `no-such-${Date.now().toString(36)}`;
    const api = (path: string, key = API_KEY) => fetch(`${endpoints().analytics}${path}`, { headers: { 'x-api-key': key } });
    const json = async <T>(path: string, key = API_KEY): Promise<T> => {
      const res = await api(path, key);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.headers.get('content-type')).toContain('application/json');
      return (await res.json()) as T;
    };
    const stats = (query = '') =>
      json<{ totals: { clicks: number; visitors: number }; botClicks: number; granularity: string; series: Array<{ time: string; clicks: number }> }>(
        `/api/v1/links/${code}/stats?from=${from}${query}`,
      );
    let from: number;

    beforeAll(async () => {
      from = Math.floor(Date.now() / 1000) - 120;
      const created = await createLink(endpoints(), { url: `https://example.com/analytics?t=${Date.now()}` });
      code = created.body.code as string;
      domain = created.body.domain as string;
      const click = async (headers: Record<string, string>) => expect((await redirectOf(endpoints(), code, headers)).status).toBe(302);
      for (let i = 0; i < 3; i++) await click({ 'x-forwarded-for': '8.8.8.8', referer: 'https://www.news.example/story' });
      for (let i = 0; i < 2; i++) await click({ 'x-forwarded-for': '81.2.69.142', 'user-agent': IPHONE });
      await click({ 'x-forwarded-for': '8.8.4.4', 'user-agent': SLACKBOT });
      for (let i = 0; i < 2; i++) expect((await redirectOf(endpoints(), orphan, { 'x-forwarded-for': '5.9.0.1' })).status).toBe(404);
      await eventually(
        'the clicks in stats',
        async () => {
          const s = await stats('&bots=include');
          return s.totals.clicks === 6 ? s : null;
        },
        60_000,
        250,
      );
    });

    it('shows clicks and unique visitors without the bot, and the bot apart, at minute, hour and day granularity', async () => {
      for (const granularity of ['minute', 'hour', 'day']) {
        const s = await stats(`&granularity=${granularity}`);
        expect({ granularity: s.granularity, totals: s.totals, botClicks: s.botClicks }).toEqual({
          granularity,
          totals: { clicks: 5, visitors: 2, leads: 0, sales: 0, revenue: {} },
          botClicks: 1,
        });
        expect(s.series.reduce((n, p) => n + p.clicks, 0)).toBe(5);
      }
      expect((await stats('&bots=include')).totals).toEqual({ clicks: 6, visitors: 3, leads: 0, sales: 0, revenue: {} });
      expect((await stats('&bots=only')).totals).toEqual({ clicks: 1, visitors: 1, leads: 0, sales: 0, revenue: {} });
    });

    it('breaks the clicks down by country, referer, device, browser, OS, variant, source and city', async () => {
      const expected: Record<(typeof DIMENSIONS)[number], Array<[string | null, number]>> = {
        countries: [
          ['US', 3],
          ['GB', 2],
        ],
        referers: [
          ['news.example', 3],
          [null, 2],
        ],
        devices: [
          ['desktop', 3],
          ['mobile', 2],
        ],
        browsers: [
          ['Chrome', 3],
          ['Mobile Safari', 2],
        ],
        os: [
          ['Windows', 3],
          ['iOS', 2],
        ],
        variants: [[null, 5]],
        // Clicks of the short URL itself, located on the city database (GEO_DATABASE=city).
        sources: [['link', 5]],
        cities: [
          ['Mountain View', 3],
          ['London', 2],
        ],
      };
      for (const dimension of DIMENSIONS) {
        const b = await json<{ dimension: string; totals: { clicks: number }; items: Item[] }>(`/api/v1/links/${code}/breakdown/${dimension}?from=${from}`);
        expect({ dimension, items: b.items.map((i) => [i.value, i.clicks]) }).toEqual({ dimension, items: expected[dimension] });
        expect(b.totals.clicks).toBe(5);
        expect(b.items.reduce((n, i) => n + i.share, 0)).toBeCloseTo(1, 3);
      }
      const bots = await json<{ items: Item[] }>(`/api/v1/links/${code}/breakdown/devices?from=${from}&bots=only`);
      expect(bots.items.map((i) => [i.value, i.clicks])).toEqual([['bot', 1]]);
      const top1 = await json<{ items: Item[] }>(`/api/v1/links/${code}/breakdown/countries?from=${from}&limit=1`);
      expect(top1.items.map((i) => i.value)).toEqual(['US']);
    });

    it("lists the tenant's top links and the orphan visits of its domain", async () => {
      const top = await json<{ links: Array<{ domain: string; code: string; clicks: number; visitors: number }> }>(
        `/api/v1/stats/top-links?from=${from}&limit=1000`,
      );
      expect(top.links.find((l) => l.code === code)).toEqual({ domain, code, clicks: 5, visitors: 2 });
      const orphans = await eventually(
        'the orphan visits',
        async () => {
          const o = await json<{ totals: { visits: number }; codes: Array<{ domain: string; code: string; visits: number }>; series: unknown[] }>(
            `/api/v1/stats/orphans?from=${from}&limit=1000`,
          );
          return o.codes.some((c) => c.code === orphan) ? o : null;
        },
        30_000,
        250,
      );
      expect(orphans.codes.find((c) => c.code === orphan)).toEqual({ domain, code: orphan, visits: 2 });
      expect(orphans.series.length).toBeGreaterThan(0);
    });

    it('lists the raw visits newest first, page by page, as JSON and as CSV (Accept: text/csv or ?format=csv), never with an address', async () => {
      type Visit = { id: string; time: string; country: string | null; referer: string | null; device: string; browser: string; os: string; bot: boolean };
      type Page = { visits: Visit[]; next: string | null };
      const all = await json<Page>(`/api/v1/links/${code}/visits?bots=include`);
      expect(all.next).toBeNull();
      expect(all.visits).toHaveLength(6);
      const times = all.visits.map((v) => Date.parse(v.time));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      const facts = (v: Visit) => [v.country, v.referer, v.device, v.browser, v.os, v.bot];
      expect(all.visits.map(facts).sort()).toEqual(
        [
          ...Array(3).fill(['US', 'news.example', 'desktop', 'Chrome', 'Windows', false]),
          ...Array(2).fill(['GB', null, 'mobile', 'Mobile Safari', 'iOS', false]),
          ['US', null, 'bot', 'Other', 'Other', true],
        ].sort(),
      );
      expect(JSON.stringify(all)).not.toMatch(/8\.8\.8\.8|81\.2\.69\.142|8\.8\.4\.4/);
      // Without the bot, two at a time: three pages that together are the same visits, in the same order.
      const seen: Visit[] = [];
      let next: string | null = null;
      for (let i = 0; i < 3; i++) {
        const page: Page = await json<Page>(`/api/v1/links/${code}/visits?limit=2${next ? `&cursor=${next}` : ''}`);
        seen.push(...page.visits);
        next = page.next;
      }
      expect(next).toBeNull();
      expect(seen.map((v) => v.id)).toEqual(all.visits.filter((v) => !v.bot).map((v) => v.id));
      for (const res of [
        await fetch(`${endpoints().analytics}/api/v1/links/${code}/visits?bots=include`, { headers: { 'x-api-key': API_KEY, accept: 'text/csv' } }),
        await api(`/api/v1/links/${code}/visits?bots=include&format=csv`),
      ]) {
        expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({ status: 200, type: 'text/csv; charset=utf-8' });
        const lines = (await res.text()).trim().split('\r\n');
        expect(lines[0]).toBe('id,time,country,region,city,referer,device,browser,os,variant,source,bot,visitor');
        expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(all.visits.map((v) => v.id));
      }
      const other = await otherTenantKey();
      expect((await json<Page>(`/api/v1/links/${code}/visits?bots=include`, other)).visits).toEqual([]);
      for (const [path, problem] of [
        [`/api/v1/links/${code}/visits?cursor=bm9wZQ`, 'INVALID_CURSOR'],
        [`/api/v1/links/${code}/visits?limit=0`, 'VALIDATION_FAILED'],
        [`/api/v1/links/${code}/visits?from=2000&to=1000`, 'INVALID_TIME_RANGE'],
      ]) {
        const res = await api(path);
        expect({ path, status: res.status, type: res.headers.get('content-type')?.split(';')[0], code: ((await res.json()) as { code: string }).code }).toEqual(
          {
            path,
            status: 400,
            type: 'application/problem+json',
            code: problem,
          },
        );
      }
    });

    it('answers every endpoint as CSV with ?format=csv', async () => {
      const paths: Array<[string, string]> = [
        [`/api/v1/links/${code}/stats?from=${from}&format=csv`, 'time,clicks,visitors,botClicks'],
        [`/api/v1/stats/top-links?from=${from}&format=csv`, 'domain,code,clicks,visitors'],
        [`/api/v1/stats/orphans?from=${from}&format=csv`, 'time,domain,visits,visitors'],
        ...DIMENSIONS.map((d): [string, string] => [
          `/api/v1/links/${code}/breakdown/${d}?from=${from}&format=csv`,
          d === 'cities' ? 'value,country,region,clicks,visitors,share' : 'value,clicks,visitors,share',
        ]),
      ];
      for (const [path, header] of paths) {
        const res = await api(path);
        expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({ path, status: 200, type: 'text/csv; charset=utf-8' });
        const lines = (await res.text()).trim().split('\r\n');
        expect(lines[0]).toBe(header);
        expect(lines.length).toBeGreaterThan(1);
      }
      const csv = await (await api(`/api/v1/links/${code}/breakdown/countries?from=${from}&format=csv`)).text();
      expect(csv).toBe('value,clicks,visitors,share\r\nUS,3,1,0.6\r\nGB,2,1,0.4\r\n');
    });

    it('refuses odd queries with problem+json naming the problem, a missing key with 401, and shows another tenant nothing', async () => {
      const cases: Array<[string, number, string]> = [
        [`/api/v1/links/${code}/stats?granularity=week`, 400, 'VALIDATION_FAILED'],
        [`/api/v1/links/${code}/stats?from=2026-13-40`, 400, 'INVALID_TIME_RANGE'],
        [`/api/v1/links/${code}/stats?from=2000&to=1000`, 400, 'INVALID_TIME_RANGE'],
        [`/api/v1/links/${code}/stats?from=0&to=${40 * 86_400}&granularity=minute`, 400, 'INVALID_TIME_RANGE'],
        [`/api/v1/links/${code}/stats?unknown=1`, 400, 'VALIDATION_FAILED'],
        [`/api/v1/links/${code}/stats?from=1&from=2`, 400, 'VALIDATION_FAILED'],
        [`/api/v1/links/${code}/stats?domain=bad%20host`, 400, 'VALIDATION_FAILED'],
        [`/api/v1/links/${code}/breakdown/planets`, 400, 'VALIDATION_FAILED'],
        [`/api/v1/links/${code}/breakdown/countries?limit=0`, 400, 'VALIDATION_FAILED'],
        [`/api/v1/links/${code}/breakdown/countries?limit=abc`, 400, 'VALIDATION_FAILED'],
        [`/api/v1/links/%F0%9F%98%80/stats`, 400, 'VALIDATION_FAILED'],
        [`/api/v1/stats/top-links?format=xml`, 400, 'VALIDATION_FAILED'],
        [`/api/v1/stats/orphans?bots=maybe`, 400, 'VALIDATION_FAILED'],
      ];
      for (const [path, status, problem] of cases) {
        const res = await api(path);
        const body = (await res.json()) as { code: string };
        expect({ path, status: res.status, type: res.headers.get('content-type')?.split(';')[0], code: body.code }).toEqual({
          path,
          status,
          type: 'application/problem+json',
          code: problem,
        });
      }
      const anonymous = await fetch(`${endpoints().analytics}/api/v1/stats/top-links`);
      expect(anonymous.status).toBe(401);
      const other = await otherTenantKey();
      expect((await json<{ totals: { clicks: number } }>(`/api/v1/links/${code}/stats?from=${from}`, other)).totals.clicks).toBe(0);
      expect((await json<{ links: unknown[] }>(`/api/v1/stats/top-links?from=${from}`, other)).links).toEqual([]);
    });

    it('publishes every analytics endpoint in its OpenAPI document, and serves the dashboard with its chart library', async () => {
      const doc = (await (await fetch(`${endpoints().analytics}/docs/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths).sort()).toEqual([
        '/api/v1/auth/login',
        '/api/v1/auth/logout',
        '/api/v1/events/stream',
        '/api/v1/links/{code}/breakdown/{dimension}',
        '/api/v1/links/{code}/stats',
        '/api/v1/links/{code}/visits',
        '/api/v1/me',
        '/api/v1/stats/conversions',
        '/api/v1/stats/conversions/breakdown/{dimension}',
        '/api/v1/stats/conversions/series',
        '/api/v1/stats/orphans',
        '/api/v1/stats/overview',
        '/api/v1/stats/top-links',
      ]);
      const page = await fetch(`${endpoints().analytics}/dashboard`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await page.text()).toContain('/dashboard/assets/uPlot.iife.min.js');
      for (const asset of ['uPlot.iife.min.js', 'uPlot.min.css', 'dashboard.js', 'dashboard.css'])
        expect((await fetch(`${endpoints().analytics}/dashboard/assets/${asset}`)).status).toBe(200);
      expect((await fetch(`${endpoints().analytics}/dashboard/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
    });
  });
}
