import { GeoLocator } from '@shortlink/visitors-domain';
import { LinkRules, RedirectDecision, RedirectRequest } from './link-rules';
import { CachedLink, RedirectRules } from '@shortlink/links-domain';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const PIXEL = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

/** Countries by the first octet, so tests can name a visitor's country. */
const countryOf = (a: string) => ({ '81': 'GB', '5': 'DE', '8': 'US' })[a.split('.')[0]] ?? null;
const geo: GeoLocator = { countryOf, placeOf: (a) => ({ country: countryOf(a), region: null, city: null }), builtAt: null, detail: 'country' };

const link = (rules?: RedirectRules, over: Partial<CachedLink> = {}): CachedLink => ({
  id: String(Math.floor(Math.random() * 1e12)),
  tenantId: 't',
  targetUrl: 'https://example.com/main',
  redirectType: 302,
  expiresAt: null,
  status: 'active',
  version: 1,
  createdAt: 0,
  ...(rules ? { rules } : {}),
  ...over,
});

const request = (over: Partial<RedirectRequest> = {}): RedirectRequest => ({
  address: '8.8.8.8',
  userAgent: WINDOWS,
  query: undefined,
  counts: true,
  acknowledged: false,
  passwordAccepted: false,
  ...over,
});
const locationOf = (d: RedirectDecision) => (d.kind === 'redirect' ? d.location : d.kind);

describe('LinkRules', () => {
  let exhausted: Set<string>;
  let rules: LinkRules;
  beforeEach(() => {
    exhausted = new Set();
    rules = new LinkRules(geo, { isKnownExhausted: (l) => exhausted.has(l.id) });
  });

  it('sends a plain link to its target, with the query forwarded by default', () => {
    expect(rules.decide(link(), request())).toEqual({ kind: 'redirect', location: 'https://example.com/main', variant: null, reserve: false });
    expect(locationOf(rules.decide(link(), request({ query: 'x=1' })))).toBe('https://example.com/main?x=1');
    expect(locationOf(rules.decide(link({ forwardQuery: false }), request({ query: 'x=1' })))).toBe('https://example.com/main');
  });

  it('applies the order: moderation, max clicks, password, visitor limit, geo, device, variant, UTM, query', () => {
    const all: RedirectRules = {
      maxClicks: 10,
      passwordHash: 'h',
      clicksPerIpPerMinute: 2,
      geoTargets: { GB: 'https://example.co.uk/' },
      deviceTargets: { ios: 'https://apps.apple.com/x' },
      variants: [{ url: 'https://a.example/', weight: 1 }],
      utm: { source: 'sl' },
    };
    const banned = link(all, { moderation: 'banned' });
    const flagged = link(all, { moderation: 'flagged' });
    const l = link(all);
    expect(rules.decide(banned, request({ acknowledged: true, passwordAccepted: true })).kind).toBe('blocked');
    expect(rules.decide(flagged, request({ passwordAccepted: true })).kind).toBe('warning');
    exhausted.add(l.id);
    expect(rules.decide(l, request({ passwordAccepted: true })).kind).toBe('exhausted');
    exhausted.delete(l.id);
    expect(rules.decide(l, request()).kind).toBe('password');
    const ok = { passwordAccepted: true, query: 'q=1' };
    expect(rules.decide(l, request({ ...ok, address: '81.2.69.142', userAgent: IPHONE }))).toEqual({
      kind: 'redirect',
      location: 'https://example.co.uk/?utm_source=sl&q=1',
      variant: null,
      reserve: true,
    });
    expect(rules.decide(l, request({ ...ok, address: '81.2.69.142', userAgent: IPHONE })).kind).toBe('redirect');
    expect(rules.decide(l, request({ ...ok, address: '81.2.69.142', userAgent: IPHONE }))).toMatchObject({ kind: 'limited' });
    expect(locationOf(rules.decide(l, request({ ...ok, address: '5.9.0.1', userAgent: IPHONE })))).toBe('https://apps.apple.com/x?utm_source=sl&q=1');
    expect(rules.decide(l, request({ ...ok, address: '8.8.8.8', userAgent: WINDOWS }))).toEqual({
      kind: 'redirect',
      location: 'https://a.example/?utm_source=sl&q=1',
      variant: 0,
      reserve: true,
    });
    expect(rules.decide(flagged, request({ ...ok, acknowledged: true })).kind).toBe('redirect');
  });

  it('takes the first redirect rule whose conditions all hold, else the variants, else the target', () => {
    const l = link({
      redirectRules: [
        {
          url: 'https://example.de/es',
          conditions: [
            { type: 'country', value: 'DE' },
            { type: 'language', value: 'es' },
          ],
        },
        { url: 'https://example.de/', conditions: [{ type: 'country', value: 'DE' }] },
        { url: 'https://m.example/', conditions: [{ type: 'device', value: 'mobile' }] },
      ],
      variants: [{ url: 'https://v.example/', weight: 1 }],
      utm: { source: 'sl' },
    });
    const at = (over: Partial<RedirectRequest>) => rules.decide(l, request(over));
    expect(locationOf(at({ address: '5.1.2.3', acceptLanguage: 'es-ES,es;q=0.9' }))).toBe('https://example.de/es?utm_source=sl');
    expect(locationOf(at({ address: '5.1.2.3', acceptLanguage: 'fr, es;q=0.5', userAgent: PIXEL }))).toBe('https://example.de/?utm_source=sl');
    expect(locationOf(at({ address: '8.1.2.3', userAgent: IPHONE }))).toBe('https://m.example/?utm_source=sl');
    // No rule holds: the variant (the link's own URL split by weight), as before rules.
    expect(at({ address: '8.1.2.3' })).toMatchObject({ location: 'https://v.example/?utm_source=sl', variant: 0 });
    expect(locationOf(rules.decide(link({ redirectRules: l.rules!.redirectRules }), request({ address: '8.1.2.3' })))).toBe('https://example.com/main');
  });

  it('reads the country and device targets of a value cached before redirect rules as the rules they are', () => {
    const legacy = link({ geoTargets: { DE: 'https://example.de/' }, deviceTargets: { ios: 'https://apps.example/' } });
    expect(locationOf(rules.decide(legacy, request({ address: '5.1.2.3', userAgent: IPHONE })))).toBe('https://example.de/');
    expect(locationOf(rules.decide(legacy, request({ address: '8.1.2.3', userAgent: IPHONE })))).toBe('https://apps.example/');
  });

  it('falls through a geo rule without the visitor’s country, and a device rule without the device, to the target', () => {
    const l = link({ geoTargets: { DE: 'https://example.de/' }, deviceTargets: { android: 'https://play.example/' } });
    expect(locationOf(rules.decide(l, request({ address: '5.1.2.3' })))).toBe('https://example.de/');
    expect(locationOf(rules.decide(l, request({ address: '10.0.0.1', userAgent: PIXEL })))).toBe('https://play.example/');
    expect(locationOf(rules.decide(l, request({ address: '10.0.0.1', userAgent: IPHONE })))).toBe('https://example.com/main');
  });

  it('offers the app of the visitor’s device: a scheme with the device target or target as fallback, a universal link as the redirect', () => {
    const l = link({
      deviceTargets: { ios: 'https://apps.apple.com/app/id1' },
      appTargets: { ios: 'myapp://product/42', android: 'https://shop.example/p/42' },
      utm: { source: 'sl' },
    });
    expect(rules.decide(l, request({ userAgent: IPHONE, query: 'q=1' }))).toEqual({
      kind: 'redirect',
      location: 'https://apps.apple.com/app/id1?utm_source=sl&q=1',
      variant: null,
      reserve: false,
      app: 'myapp://product/42',
    });
    expect(rules.decide(l, request({ userAgent: PIXEL, query: 'q=1' }))).toEqual({
      kind: 'redirect',
      location: 'https://shop.example/p/42?utm_source=sl&q=1',
      variant: null,
      reserve: false,
    });
    const desktop = rules.decide(l, request({ userAgent: WINDOWS }));
    expect(desktop).toEqual({ kind: 'redirect', location: 'https://example.com/main?utm_source=sl', variant: null, reserve: false });
    // Without a device target the link's own target is the fallback; a device without an app target gets the redirect.
    const onlyAndroid = link({ appTargets: { android: 'myapp://x' } });
    expect(rules.decide(onlyAndroid, request({ userAgent: PIXEL }))).toMatchObject({ location: 'https://example.com/main', app: 'myapp://x' });
    expect(rules.decide(onlyAndroid, request({ userAgent: IPHONE }))).not.toHaveProperty('app');
  });

  it('limits each visitor per link and minute; HEAD is not counted, and the window ends', () => {
    const l = link({ clicksPerIpPerMinute: 2 });
    const t0 = Date.UTC(2026, 0, 1, 12, 0, 0);
    const kinds = (r: Partial<RedirectRequest>, at: number) => rules.decide(l, request(r), at).kind;
    expect([kinds({ counts: false }, t0), kinds({}, t0), kinds({}, t0), kinds({}, t0), kinds({ counts: false }, t0)]).toEqual([
      'redirect',
      'redirect',
      'redirect',
      'limited',
      'limited',
    ]);
    expect(kinds({ address: '5.5.5.5' }, t0)).toBe('redirect');
    expect(rules.decide(link({ clicksPerIpPerMinute: 2 }), request(), t0).kind).toBe('redirect'); // another link, its own count
    expect(rules.decide(l, request(), t0 + 30_000)).toEqual({ kind: 'limited', retryAfterSeconds: 30 });
    expect(kinds({}, t0 + 60_000)).toBe('redirect');
  });

  it('does not take a click on HEAD: only a counting request reserves', () => {
    const l = link({ maxClicks: 5 });
    expect(rules.decide(l, request({ counts: false }))).toMatchObject({ kind: 'redirect', reserve: false });
    expect(rules.decide(l, request())).toMatchObject({ kind: 'redirect', reserve: true });
  });

  it('gives a visitor the same variant on every request and every instance', () => {
    const l = link({
      variants: [
        { url: 'https://a.example/', weight: 1 },
        { url: 'https://b.example/', weight: 1 },
        { url: 'https://c.example/', weight: 1 },
      ],
    });
    const other = new LinkRules(geo, { isKnownExhausted: () => false });
    for (let i = 0; i < 200; i++) {
      const r = request({ address: `203.0.113.${i}`, userAgent: `agent-${i % 7}` });
      const first = rules.decide(l, r);
      expect(rules.decide(l, r)).toEqual(first);
      expect(other.decide(l, r)).toEqual(first);
    }
  });

  it('splits 10 000 distinct visitors by weight, each share within ±3 points', () => {
    const weights = [1, 2, 7];
    const l = link({ variants: weights.map((weight, i) => ({ url: `https://v${i}.example/`, weight })) });
    const counts = [0, 0, 0];
    const locations: Array<[string, string]> = [];
    for (let i = 0; i < 10_000; i++) {
      const d = rules.decide(l, request({ address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, userAgent: i % 3 ? WINDOWS : IPHONE }));
      if (d.kind !== 'redirect' || d.variant === null) throw new Error('expected a variant');
      locations.push([d.location, `https://v${d.variant}.example/`]);
      counts[d.variant]++;
    }
    expect(locations.map(([got]) => got)).toEqual(locations.map(([, wanted]) => wanted)); // one assertion, not 10 000
    const shares = counts.map((c) => (100 * c) / 10_000);
    weights.forEach((w, i) => expect(Math.abs(shares[i] - (100 * w) / 10)).toBeLessThanOrEqual(3));
  });
});
