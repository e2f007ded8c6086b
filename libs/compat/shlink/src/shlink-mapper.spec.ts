import type { VisitRow } from '@shortlink/clicks-domain';
import { checkRedirectRules, Link, NO_OPTIONS, RedirectRule, rulesFromTargets } from '@shortlink/links-domain';
import { ShlinkError } from './shlink-problem';
import { atom, creationOf, editOf, matchesCreation, paginate, redirectsEditOf, redirectsOf, selectShortUrls, shortUrlOf, visitOf } from './shlink-mapper';
import { redirectRulesInputOf, redirectRulesListOf } from './shlink-redirect-rules';
import { redirectRulesSetSchema, shortUrlsQuery } from './shlink.schemas';

const at = (iso: string) => new Date(iso);
const link = (over: Partial<Link> = {}): Link => ({
  ...NO_OPTIONS,
  id: '1',
  domain: 'sho.rt',
  code: 'abc1234',
  targetUrl: 'https://example.com/a',
  tenantId: 't1',
  createdAt: at('2026-01-02T03:04:05.678Z'),
  updatedAt: at('2026-01-02T03:04:05.678Z'),
  expiresAt: null,
  status: 'active',
  redirectType: 302,
  version: 1,
  moderation: 'clear',
  moderationReason: null,
  ...over,
});
const ctx = { defaultDomain: 'sho.rt', shortUrl: (l: Link) => `https://${l.domain}/${l.code}` };
const query = (q: Record<string, unknown>) => shortUrlsQuery.parse(q);

describe('Shlink mapper: short URLs', () => {
  it('maps a link onto Shlink’s short URL: ATOM dates, domain null for the default, meta, device long URLs and visit summary', () => {
    const view = shortUrlOf(
      link({
        title: 'T',
        tags: ['a'],
        maxClicks: 5,
        expiresAt: at('2027-01-01T00:00:00Z'),
        crawlable: true,
        redirectRules: rulesFromTargets(null, { ios: 'https://example.com/ios' }),
      }),
      ctx,
      { total: 7, bots: 2 },
    );
    expect(view).toEqual({
      shortCode: 'abc1234',
      shortUrl: 'https://sho.rt/abc1234',
      longUrl: 'https://example.com/a',
      deviceLongUrls: { android: null, ios: 'https://example.com/ios', desktop: null },
      dateCreated: '2026-01-02T03:04:05+00:00',
      visitsSummary: { total: 7, nonBots: 5, bots: 2 },
      tags: ['a'],
      meta: { validSince: null, validUntil: '2027-01-01T00:00:00+00:00', maxVisits: 5 },
      domain: null,
      title: 'T',
      crawlable: true,
      forwardQuery: true,
      hasRedirectRules: true, // a device long URL is a redirect rule, as in Shlink 4
    });
    expect(shortUrlOf(link({ domain: 'own.example' }), ctx).domain).toBe('own.example');
    // A/B variants are no redirect rule of Shlink's: the link's own URL, split.
    expect(shortUrlOf(link({ variants: [{ url: 'https://example.com/b', weight: 1 }] }), ctx).hasRedirectRules).toBe(false);
  });

  it('maps a create: customSlug → alias, validUntil → expiresAt, maxVisits → maxClicks, device long URLs → device targets', () => {
    expect(
      creationOf(
        {
          longUrl: 'https://example.com/x',
          customSlug: 'mine',
          domain: 'own.example',
          tags: ['t'],
          title: 'Title',
          validUntil: '2027-01-01T00:00:00+00:00',
          maxVisits: 3,
          crawlable: true,
          forwardQuery: false,
          deviceLongUrls: { android: 'https://example.com/android', ios: null },
        },
        't1',
      ),
    ).toEqual({
      tenantId: 't1',
      url: 'https://example.com/x',
      alias: 'mine',
      domain: 'own.example',
      tags: ['t'],
      title: 'Title',
      expiresAt: '2027-01-01T00:00:00.000Z',
      maxClicks: 3,
      crawlable: true,
      forwardQuery: false,
      deviceTargets: { android: 'https://example.com/android' },
    });
    expect(creationOf({ longUrl: 'https://example.com/x', title: null, maxVisits: null }, 't1')).toEqual({ tenantId: 't1', url: 'https://example.com/x' });
  });

  it('refuses what it cannot honour with INVALID_ARGUMENT naming the field: a future validSince, another code length, a bad date', () => {
    const now = Date.parse('2026-06-01T00:00:00Z');
    const fieldOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return [(e as ShlinkError).kind, (e as ShlinkError).extra.invalidElements];
      }
      return null;
    };
    expect(fieldOf(() => creationOf({ longUrl: 'https://e.x', validSince: '2026-07-01T00:00:00Z' }, 't', now))).toEqual(['INVALID_ARGUMENT', ['validSince']]);
    expect(creationOf({ longUrl: 'https://e.x', validSince: '2026-05-01T00:00:00Z' }, 't', now)).toEqual({ tenantId: 't', url: 'https://e.x' });
    expect(fieldOf(() => creationOf({ longUrl: 'https://e.x', shortCodeLength: 5 }, 't'))).toEqual(['INVALID_ARGUMENT', ['shortCodeLength']]);
    expect(creationOf({ longUrl: 'https://e.x', shortCodeLength: 7 }, 't')).toEqual({ tenantId: 't', url: 'https://e.x' });
    expect(fieldOf(() => creationOf({ longUrl: 'https://e.x', validUntil: 'soon' }, 't'))).toEqual(['INVALID_ARGUMENT', ['validUntil']]);
  });

  it('maps an edit: absent stays, null clears, device long URLs merge into the current ones', () => {
    const current = link({ redirectRules: rulesFromTargets(null, { ios: 'https://example.com/ios', android: 'https://example.com/android' }) });
    expect(editOf({ title: null, maxVisits: null, validUntil: null, deviceLongUrls: { ios: null, desktop: 'https://example.com/desk' } }, current)).toEqual({
      title: null,
      maxClicks: null,
      expiresAt: null,
      deviceTargets: { android: 'https://example.com/android', desktop: 'https://example.com/desk' },
    });
    expect(editOf({ longUrl: 'https://example.com/b', tags: [], forwardQuery: false }, current)).toEqual({
      url: 'https://example.com/b',
      tags: [],
      forwardQuery: false,
    });
    expect(editOf({}, current)).toEqual({});
    expect(editOf({ deviceLongUrls: { ios: null, android: null } }, current)).toEqual({ deviceTargets: null });
  });

  it('findIfExists matches only when every given field matches an active link', () => {
    const l = link({ tags: ['b', 'a'], title: 'T' });
    expect(matchesCreation(l, { longUrl: 'https://example.com/a' }, 'sho.rt')).toBe(true);
    expect(matchesCreation(l, { longUrl: 'https://example.com/a', tags: ['a', 'b'], title: 'T', customSlug: 'abc1234' }, 'sho.rt')).toBe(true);
    expect(matchesCreation(l, { longUrl: 'https://example.com/a', tags: ['a'] }, 'sho.rt')).toBe(false);
    expect(matchesCreation(l, { longUrl: 'https://example.com/a', customSlug: 'other' }, 'sho.rt')).toBe(false);
    expect(matchesCreation(l, { longUrl: 'https://example.com/a' }, 'own.example')).toBe(false);
    expect(matchesCreation(l, { longUrl: 'https://example.com/b' }, 'sho.rt')).toBe(false);
    expect(matchesCreation(link({ status: 'disabled' }), { longUrl: 'https://example.com/a' }, 'sho.rt')).toBe(false);
  });
});

describe('Shlink mapper: listing', () => {
  const links = [
    link({ code: 'c1', targetUrl: 'https://b.example', tags: ['x'], createdAt: at('2026-01-01T00:00:00Z') }),
    link({ code: 'a2', targetUrl: 'https://c.example', tags: ['x', 'y'], createdAt: at('2026-01-02T00:00:00Z'), maxClicks: 2 }),
    link({ code: 'b3', targetUrl: 'https://a.example', tags: ['y'], createdAt: at('2026-01-03T00:00:00Z'), expiresAt: at('2026-01-04T00:00:00Z') }),
  ];
  const clicks = (l: Link) => ({ a2: { total: 2, bots: 0 }, b3: { total: 5, bots: 4 } })[l.code] ?? { total: 0, bots: 0 };
  const codes = (q: Record<string, unknown>, now = Date.parse('2026-01-10T00:00:00Z')) => selectShortUrls(links, query(q), clicks, now).data.map((l) => l.code);

  it('pages Shlink’s way: page, itemsPerPage, -1 for all, counts', () => {
    expect(paginate([1, 2, 3, 4, 5], 2, 2)).toEqual({
      data: [3, 4],
      pagination: { currentPage: 2, pagesCount: 3, itemsPerPage: 2, itemsInCurrentPage: 2, totalItems: 5 },
    });
    expect(paginate([1, 2, 3], 1, -1).pagination).toEqual({ currentPage: 1, pagesCount: 1, itemsPerPage: -1, itemsInCurrentPage: 3, totalItems: 3 });
    expect(paginate([], 1, 10).pagination).toEqual({ currentPage: 1, pagesCount: 1, itemsPerPage: 10, itemsInCurrentPage: 0, totalItems: 0 });
    expect(paginate([1, 2], 5, 10).data).toEqual([]);
  });

  it('orders newest first by default, and by each of Shlink’s fields both ways', () => {
    expect(codes({})).toEqual(['b3', 'a2', 'c1']);
    expect(codes({ orderBy: 'shortCode-ASC' })).toEqual(['a2', 'b3', 'c1']);
    expect(codes({ orderBy: 'longUrl-DESC' })).toEqual(['a2', 'c1', 'b3']);
    expect(codes({ orderBy: 'visits-DESC' })).toEqual(['b3', 'a2', 'c1']);
    expect(codes({ orderBy: 'nonBotVisits-DESC' })).toEqual(['a2', 'b3', 'c1']);
    expect(codes({ orderBy: 'dateCreated-ASC' })).toEqual(['c1', 'a2', 'b3']);
  });

  it('filters by tags (any, all; tags[] as the SDK sends them), dates and Shlink’s exclusions', () => {
    expect(codes({ 'tags[]': ['x', 'y'] })).toEqual(['b3', 'a2', 'c1']);
    expect(codes({ 'tags[]': ['x', 'y'], tagsMode: 'all' })).toEqual(['a2']);
    expect(codes({ tags: 'y' })).toEqual(['b3', 'a2']);
    expect(codes({ startDate: '2026-01-02T00:00:00Z' })).toEqual(['b3', 'a2']);
    expect(codes({ endDate: '2026-01-01T12:00:00+00:00' })).toEqual(['c1']);
    expect(codes({ excludeMaxVisitsReached: 'true' })).toEqual(['b3', 'c1']);
    expect(codes({ excludePastValidUntil: 'true' })).toEqual(['a2', 'c1']);
    expect(codes({ excludePastValidUntil: 'false' })).toEqual(['b3', 'a2', 'c1']);
  });

  it('leaves out the excluded tags (excludeTags[]: any of them by default, or all of them), with or without tags to keep', () => {
    expect(codes({ 'excludeTags[]': ['y'] })).toEqual(['c1']);
    expect(codes({ excludeTags: 'x' })).toEqual(['b3']);
    expect(codes({ 'excludeTags[]': ['x', 'y'], excludeTagsMode: 'all' })).toEqual(['b3', 'c1']);
    expect(codes({ 'excludeTags[]': ['x', 'y'], excludeTagsMode: 'any' })).toEqual([]);
    expect(codes({ 'tags[]': ['x'], 'excludeTags[]': ['y'] })).toEqual(['c1']);
  });

  it('looks through the store’s page as given: a page past the end is empty, with the counts', () => {
    const page = selectShortUrls(links, query({ page: '9', itemsPerPage: '2' }), clicks);
    expect(page.data).toEqual([]);
    expect(page.pagination).toEqual({ currentPage: 9, pagesCount: 2, itemsPerPage: 2, itemsInCurrentPage: 0, totalItems: 3 });
  });

  it('refuses a query Shlink would refuse: unknown order, page 0', () => {
    expect(shortUrlsQuery.safeParse({ orderBy: 'size-ASC' }).success).toBe(false);
    expect(shortUrlsQuery.safeParse({ page: '0' }).success).toBe(false);
    expect(shortUrlsQuery.parse({ page: '2', itemsPerPage: '-1' })).toEqual({ page: 2, itemsPerPage: -1 });
  });
});

describe('Shlink mapper: visits and domains', () => {
  const row: VisitRow = {
    id: '9',
    time: Date.parse('2026-02-03T04:05:06.789Z'),
    tenantId: 't1',
    domain: 'sho.rt',
    code: 'abc1234',
    linkId: '1',
    country: 'DE',
    region: 'Berlin',
    city: 'Berlin',
    refererHost: 'news.example.org',
    device: 'desktop',
    browser: 'Firefox',
    os: 'Linux',
    variant: null,
    source: 'link',
    bot: false,
    visitor: 1,
    producer: 'p',
    seq: 1,
  };
  const vctx = { defaultDomain: 'sho.rt', shortUrlOf: (d: string, c: string) => `https://${d}/${c}` };

  it('maps a raw visit onto Shlink’s visit with its visitLocation (country named, no coordinates)', () => {
    expect(visitOf(row, vctx)).toEqual({
      referer: 'news.example.org',
      date: '2026-02-03T04:05:06+00:00',
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0',
      visitLocation: {
        countryCode: 'DE',
        countryName: 'Germany',
        regionName: 'Berlin',
        cityName: 'Berlin',
        latitude: null,
        longitude: null,
        timezone: null,
        isEmpty: false,
      },
      potentialBot: false,
      visitedUrl: 'https://sho.rt/abc1234',
      redirectUrl: null,
      shortCode: 'abc1234',
      domain: null,
    });
  });

  it('maps a visit without place or referer, and an orphan one with its type', () => {
    const bare = { ...row, country: null, region: null, city: null, refererHost: null, browser: 'Other', os: 'Other', bot: true, domain: 'own.example' };
    expect(visitOf(bare, vctx)).toMatchObject({ referer: '', visitLocation: null, userAgent: '', potentialBot: true, domain: 'own.example' });
    const orphan = visitOf({ ...bare, tenantId: '' }, vctx, true);
    expect(orphan).toMatchObject({ type: 'invalid_short_url', visitedUrl: 'https://own.example/abc1234' });
    expect(orphan).not.toHaveProperty('shortCode');
  });

  it('maps domain redirects both ways; the two 404 redirects are two settings (an unknown code, any other path)', () => {
    expect(redirectsOf({ rootRedirect: 'https://e.x/home', notFoundRedirect: 'https://e.x/404', pathNotFoundRedirect: 'https://e.x/path' })).toEqual({
      baseUrlRedirect: 'https://e.x/home',
      regular404Redirect: 'https://e.x/path',
      invalidShortUrlRedirect: 'https://e.x/404',
    });
    expect(redirectsOf(null)).toEqual({ baseUrlRedirect: null, regular404Redirect: null, invalidShortUrlRedirect: null });
    expect(redirectsEditOf({ baseUrlRedirect: null, invalidShortUrlRedirect: 'https://e.x/404' })).toEqual({
      rootRedirect: null,
      notFoundRedirect: 'https://e.x/404',
    });
    expect(redirectsEditOf({ regular404Redirect: 'https://e.x/a', invalidShortUrlRedirect: 'https://e.x/b' })).toEqual({
      notFoundRedirect: 'https://e.x/b',
      pathNotFoundRedirect: 'https://e.x/a',
    });
    expect(redirectsEditOf({ regular404Redirect: null })).toEqual({ pathNotFoundRedirect: null });
    expect(redirectsEditOf({})).toEqual({});
  });

  it('writes dates as Shlink does (ATOM, seconds, +00:00)', () => {
    expect(atom(new Date('2026-12-31T23:59:59.999Z'))).toBe('2026-12-31T23:59:59+00:00');
  });
});

/** Every kind of condition of ours, as LinkService stores them. */
const RULES: RedirectRule[] = [
  {
    url: 'https://example.com/es-mail',
    conditions: [
      { type: 'language', value: 'es-MX' },
      { type: 'query-param', name: 'ref', value: 'mail' },
      { type: 'query-param', name: 'promo' },
      { type: 'query-param', name: 'debug', value: '' },
      { type: 'ip-address', value: '10.0.0.0/8' },
      { type: 'after-date', value: '2027-01-01T00:00:00.000Z' },
      { type: 'before-date', value: '2028-01-01T12:30:00.000Z' },
      { type: 'browser', value: 'firefox' },
    ],
  },
  { url: 'https://example.com/linux', conditions: [{ type: 'os', value: 'linux' }] },
  { url: 'https://example.com/mobile', conditions: [{ type: 'device', value: 'mobile' }] },
  {
    url: 'https://example.com/place',
    conditions: [
      { type: 'country', value: 'DE' },
      { type: 'region', value: 'Bavaria' },
      { type: 'city', value: 'Munich' },
    ],
  },
];

const accept = async (url: unknown) => String(url);

describe('Shlink redirect rules', () => {
  it('lists a link’s rules in Shlink’s words: priorities from 1, matchKey only for query parameters, ATOM dates', () => {
    const list = redirectRulesListOf(link({ redirectRules: RULES }));
    expect(list.defaultLongUrl).toBe('https://example.com/a');
    expect(list.redirectRules.map((r) => [r.priority, r.longUrl])).toEqual([
      [1, 'https://example.com/es-mail'],
      [2, 'https://example.com/linux'],
      [3, 'https://example.com/mobile'],
      [4, 'https://example.com/place'],
    ]);
    expect(list.redirectRules[0].conditions).toEqual([
      { type: 'language', matchKey: null, matchValue: 'es-MX' },
      { type: 'query-param', matchKey: 'ref', matchValue: 'mail' },
      { type: 'any-value-query-param', matchKey: 'promo', matchValue: null },
      { type: 'valueless-query-param', matchKey: 'debug', matchValue: null },
      { type: 'ip-address', matchKey: null, matchValue: '10.0.0.0/8' },
      { type: 'after-date', matchKey: null, matchValue: '2027-01-01T00:00:00+00:00' },
      { type: 'before-date', matchKey: null, matchValue: '2028-01-01T12:30:00+00:00' },
      { type: 'browser', matchKey: null, matchValue: 'firefox' },
    ]);
    expect(list.redirectRules[1].conditions).toEqual([{ type: 'device', matchKey: null, matchValue: 'linux' }]);
    expect(list.redirectRules[3].conditions.map((c) => c.type)).toEqual(['geolocation-country-code', 'geolocation-region-name', 'geolocation-city-name']);
    expect(redirectRulesListOf(link({ redirectRules: null })).redirectRules).toEqual([]);
  });

  it('sending back what was read gives the same rules (every condition type, in order)', async () => {
    const read = redirectRulesListOf(link({ redirectRules: RULES }));
    const body = redirectRulesSetSchema.parse({ redirectRules: read.redirectRules.map(({ longUrl, conditions }) => ({ longUrl, conditions })) });
    expect(await checkRedirectRules(redirectRulesInputOf(body), accept)).toEqual(RULES);
  });

  it('takes what Shlink’s web client sends: device types that are operating systems, absent matchKey, upper-case devices', async () => {
    const body = redirectRulesSetSchema.parse({
      redirectRules: [
        { longUrl: 'https://example.com/win', conditions: [{ type: 'device', matchValue: 'Windows' }] },
        { longUrl: 'https://example.com/ios', conditions: [{ type: 'device', matchKey: null, matchValue: 'ios' }] },
        { longUrl: 'https://example.com/de', conditions: [{ type: 'geolocation-country-code', matchKey: null, matchValue: 'de' }] },
      ],
    });
    expect(await checkRedirectRules(redirectRulesInputOf(body), accept)).toEqual([
      { url: 'https://example.com/win', conditions: [{ type: 'os', value: 'windows' }] },
      { url: 'https://example.com/ios', conditions: [{ type: 'device', value: 'ios' }] },
      { url: 'https://example.com/de', conditions: [{ type: 'country', value: 'DE' }] },
    ]);
  });

  it('refuses, as Shlink’s invalid data naming the condition, a missing value or parameter and an unknown device', () => {
    const refusal = (condition: Record<string, unknown>) => {
      const body = redirectRulesSetSchema.parse({ redirectRules: [{ longUrl: 'https://example.com/x', conditions: [condition] }] });
      try {
        redirectRulesInputOf(body);
      } catch (error) {
        expect(error).toBeInstanceOf(ShlinkError);
        expect((error as ShlinkError).status).toBe(400);
        return (error as ShlinkError).message;
      }
      throw new Error('accepted');
    };
    expect(refusal({ type: 'language', matchKey: null, matchValue: null })).toMatch(/redirectRules\.0\.conditions\.0\.matchValue is required/);
    expect(refusal({ type: 'query-param', matchKey: 'ref', matchValue: null })).toMatch(/matchValue is required/);
    expect(refusal({ type: 'any-value-query-param', matchKey: null, matchValue: null })).toMatch(/matchKey \(the query parameter\) is required/);
    expect(refusal({ type: 'device', matchKey: null, matchValue: 'toaster' })).toMatch(/must be one of android, ios, mobile, windows/);
    expect(redirectRulesSetSchema.safeParse({ redirectRules: [{ longUrl: 'https://example.com/x', conditions: [{ type: 'moon-phase' }] }] }).success).toBe(
      false,
    );
  });
});
