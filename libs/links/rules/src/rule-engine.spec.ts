import { GeoLocator, GeoPlace } from '@shortlink/visitors-domain';
import { BlockList } from 'net';
import { acceptedLanguages, compileRules, ipv4Number, ipv6Groups, RuleMatcher, RuleRequest } from './rule-engine';
import { normaliseAddressPattern, RedirectCondition, RedirectRule } from '@shortlink/links-domain';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const PIXEL = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const WINDOWS_EDGE = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0';
const MAC_SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
const UBUNTU_FIREFOX = 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0';
const CHROMEOS = 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

const PLACES: Record<string, GeoPlace> = {
  '5.1.1.1': { country: 'DE', region: 'Bavaria', city: 'Munich' },
  '5.2.2.2': { country: 'DE', region: 'Berlin', city: 'Berlin' },
  '8.8.8.8': { country: 'US', region: 'California', city: 'Mountain View' },
};
let lookups = 0;
const geo: GeoLocator = {
  countryOf: (a) => PLACES[a]?.country ?? null,
  placeOf: (a) => {
    lookups++;
    return PLACES[a] ?? { country: null, region: null, city: null };
  },
  builtAt: null,
  detail: 'city',
};

const rule = (url: string, ...conditions: RedirectCondition[]): RedirectRule => ({ url, conditions });
const req = (over: Partial<RuleRequest> = {}): RuleRequest => ({ address: '8.8.8.8', userAgent: WINDOWS_EDGE, query: undefined, ...over });
const NOW = Date.UTC(2027, 5, 1);

describe('redirect rules (RuleMatcher)', () => {
  let matcher: RuleMatcher;
  beforeEach(() => {
    matcher = new RuleMatcher(geo);
    lookups = 0;
  });
  const target = (rules: RedirectRule[], r: Partial<RuleRequest> = {}, now = NOW) => matcher.targetOf(compileRules(rules), req(r), now);
  const holds = (condition: RedirectCondition, r: Partial<RuleRequest> = {}, now = NOW) =>
    target([rule('https://x.example/', condition)], r, now) !== undefined;

  it('takes the first rule whose conditions all hold; none: undefined', () => {
    const rules = [
      rule('https://a.example/', { type: 'country', value: 'DE' }, { type: 'device', value: 'ios' }),
      rule('https://b.example/', { type: 'country', value: 'DE' }),
      rule('https://c.example/', { type: 'os', value: 'windows' }),
    ];
    expect(target(rules, { address: '5.1.1.1', userAgent: IPHONE })).toBe('https://a.example/');
    expect(target(rules, { address: '5.1.1.1', userAgent: PIXEL })).toBe('https://b.example/');
    expect(target(rules, { address: '8.8.8.8' })).toBe('https://c.example/');
    expect(target(rules, { address: '8.8.8.8', userAgent: MAC_SAFARI })).toBeUndefined();
  });

  it('one request’s facts never carry over to the next (one holder serves every request)', () => {
    const rules = compileRules([
      rule('https://lang.example/', { type: 'language', value: 'es' }),
      rule('https://query.example/', { type: 'query-param', name: 'ref' }),
      rule('https://net.example/', { type: 'ip-address', value: '10.0.0.0/8' }),
      rule('https://mobile.example/', { type: 'device', value: 'mobile' }),
      rule('https://de.example/', { type: 'country', value: 'DE' }),
    ]);
    const first = { address: '10.1.2.3', userAgent: PIXEL, query: 'ref=a', acceptLanguage: 'es' };
    expect(matcher.targetOf(rules, req(first), NOW)).toBe('https://lang.example/');
    expect(matcher.targetOf(rules, req({ ...first, acceptLanguage: undefined }), NOW)).toBe('https://query.example/');
    expect(matcher.targetOf(rules, req({ ...first, acceptLanguage: undefined, query: undefined }), NOW)).toBe('https://net.example/');
    expect(matcher.targetOf(rules, req({ userAgent: PIXEL, address: '5.1.1.1' }), NOW)).toBe('https://mobile.example/');
    expect(matcher.targetOf(rules, req({ address: '5.1.1.1' }), NOW)).toBe('https://de.example/');
    expect(matcher.targetOf(rules, req(), NOW)).toBeUndefined();
  });

  it('languages: with a quality of at least 0.9; a language rule takes its regions, a region rule only itself', () => {
    expect(acceptedLanguages('fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5')).toEqual(['fr-CH', 'fr']);
    expect(acceptedLanguages('en;q=0.95, es-mx')).toEqual(['es-MX', 'en']);
    expect(acceptedLanguages('de;q=0, x!y, ;q=1')).toEqual([]);
    expect(holds({ type: 'language', value: 'fr' }, { acceptLanguage: 'fr-CH, en;q=0.8' })).toBe(true);
    expect(holds({ type: 'language', value: 'en' }, { acceptLanguage: 'fr-CH, en;q=0.8' })).toBe(false);
    expect(holds({ type: 'language', value: 'fr-CH' }, { acceptLanguage: 'fr-ch' })).toBe(true);
    expect(holds({ type: 'language', value: 'fr-FR' }, { acceptLanguage: 'fr-CH, fr' })).toBe(false);
    expect(holds({ type: 'language', value: 'fr' }, {})).toBe(false);
    expect(holds({ type: 'language', value: 'zh-Hant' }, { acceptLanguage: 'zh-Hant-TW' })).toBe(true);
  });

  it('query parameters: present with any value, or one occurrence equal (decoded; "" is present without a value)', () => {
    expect(holds({ type: 'query-param', name: 'ref' }, { query: 'a=1&ref' })).toBe(true);
    expect(holds({ type: 'query-param', name: 'ref' }, { query: 'a=1' })).toBe(false);
    expect(holds({ type: 'query-param', name: 'ref' }, {})).toBe(false);
    expect(holds({ type: 'query-param', name: 'ref', value: 'mail list' }, { query: 'ref=web&ref=mail+list' })).toBe(true);
    expect(holds({ type: 'query-param', name: 'ref', value: 'mail' }, { query: 'ref=web' })).toBe(false);
    expect(holds({ type: 'query-param', name: 'ref', value: '' }, { query: 'ref' })).toBe(true);
    expect(holds({ type: 'query-param', name: 'ref', value: '' }, { query: 'ref=x' })).toBe(false);
    expect(holds({ type: 'query-param', name: 'ü', value: 'é' }, { query: '%C3%BC=%C3%A9' })).toBe(true);
  });

  it('addresses: one address, a CIDR block of either family, an IPv4 pattern; an IPv4 client on a dual-stack socket as IPv4', () => {
    expect(holds({ type: 'ip-address', value: '8.8.8.8' })).toBe(true);
    expect(holds({ type: 'ip-address', value: '8.8.8.0/24' }, { address: '::ffff:8.8.8.200' })).toBe(true);
    expect(holds({ type: 'ip-address', value: '8.8.4.0/24' })).toBe(false);
    expect(holds({ type: 'ip-address', value: '8.*.*.8' })).toBe(true);
    expect(holds({ type: 'ip-address', value: '8.*.*.9' })).toBe(false);
    expect(holds({ type: 'ip-address', value: '2001:db8::/32' }, { address: '2001:db8:1::5' })).toBe(true);
    expect(holds({ type: 'ip-address', value: '2001:db8::/32' }, { address: '2001:db9::5' })).toBe(false);
    // Families never mix: an IPv4 client is not in an IPv6 block, nor an IPv6 one in an IPv4 pattern.
    expect(holds({ type: 'ip-address', value: '::/0' })).toBe(false);
    expect(holds({ type: 'ip-address', value: '*.*.*.*' }, { address: '2001:db8::1' })).toBe(false);
    expect(holds({ type: 'ip-address', value: '8.8.8.8' }, { address: '' })).toBe(false);
  });

  it('addresses agree with Node’s BlockList on blocks of every length, both families (the engine compares numbers instead)', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    const v4 = () => [next() % 256, next() % 256, next() % 256, next() % 256].join('.');
    const v6 = () => Array.from({ length: 8 }, () => (next() % 4 === 0 ? '0' : (next() % 65_536).toString(16))).join(':');
    let checked = 0;
    let inside = 0;
    for (let i = 0; i < 400; i++) {
      const family = i % 2 === 0 ? 'ipv4' : 'ipv6';
      const network = family === 'ipv4' ? v4() : v6();
      const bits = next() % (family === 'ipv4' ? 33 : 129);
      const list = new BlockList();
      list.addSubnet(network, bits, family);
      const pattern = normaliseAddressPattern(`${network}/${bits}`)!;
      // Clients near the network (same leading parts) as well as anywhere.
      const near =
        family === 'ipv4'
          ? `${network.split('.').slice(0, 3).join('.')}.${next() % 256}`
          : `${network.split(':').slice(0, 6).join(':')}::${(next() % 65_536).toString(16)}`;
      for (const client of [network, near, family === 'ipv4' ? v4() : v6()]) {
        const expected = list.check(client, family);
        expect([pattern, client, holds({ type: 'ip-address', value: pattern }, { address: client })]).toEqual([pattern, client, expected]);
        checked++;
        if (expected) inside++;
      }
    }
    expect(checked).toBe(1200);
    expect(inside).toBeGreaterThan(300);
    expect(ipv6Groups('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(ipv6Groups('fe80::1%eth0')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    expect([ipv4Number('1.2.3.4'), ipv4Number('256.1.1.1'), ipv4Number('1.2.3'), ipv4Number('1.2.3.4.5'), ipv4Number('01.2.3.4x')]).toEqual([
      0x01020304, -1, -1, -1, -1,
    ]);
  });

  it('dates: before and after an instant', () => {
    const at = '2027-06-01T00:00:00.000Z';
    expect(holds({ type: 'before-date', value: at }, {}, NOW - 1)).toBe(true);
    expect(holds({ type: 'before-date', value: at }, {}, NOW)).toBe(false);
    expect(holds({ type: 'after-date', value: at }, {}, NOW + 1)).toBe(true);
    expect(holds({ type: 'after-date', value: at }, {}, NOW)).toBe(false);
  });

  it('devices, operating systems and browsers from the user agent', () => {
    expect(holds({ type: 'device', value: 'ios' }, { userAgent: IPHONE })).toBe(true);
    expect(holds({ type: 'device', value: 'mobile' }, { userAgent: PIXEL })).toBe(true);
    expect(holds({ type: 'device', value: 'mobile' }, { userAgent: MAC_SAFARI })).toBe(false);
    // desktop is every platform that is neither iOS nor Android, as device targets always were (an empty agent too).
    expect(holds({ type: 'device', value: 'desktop' }, { userAgent: '' })).toBe(true);
    expect(holds({ type: 'device', value: 'desktop' }, { userAgent: IPHONE })).toBe(false);
    expect(holds({ type: 'os', value: 'windows' })).toBe(true);
    expect(holds({ type: 'os', value: 'macos' }, { userAgent: MAC_SAFARI })).toBe(true);
    expect(holds({ type: 'os', value: 'linux' }, { userAgent: UBUNTU_FIREFOX })).toBe(true);
    expect(holds({ type: 'os', value: 'chromeos' }, { userAgent: CHROMEOS })).toBe(true);
    expect(holds({ type: 'os', value: 'android' }, { userAgent: PIXEL })).toBe(true);
    expect(holds({ type: 'browser', value: 'edge' })).toBe(true);
    expect(holds({ type: 'browser', value: 'chrome' })).toBe(false);
    expect(holds({ type: 'browser', value: 'chrome' }, { userAgent: PIXEL })).toBe(true);
    expect(holds({ type: 'browser', value: 'safari' }, { userAgent: IPHONE })).toBe(true);
    expect(holds({ type: 'browser', value: 'firefox' }, { userAgent: UBUNTU_FIREFOX })).toBe(true);
  });

  it('country, region and city from the IP database, names without case', () => {
    expect(holds({ type: 'country', value: 'DE' }, { address: '5.1.1.1' })).toBe(true);
    expect(holds({ type: 'region', value: 'bavaria' }, { address: '5.1.1.1' })).toBe(true);
    expect(holds({ type: 'region', value: 'Bavaria' }, { address: '5.2.2.2' })).toBe(false);
    expect(holds({ type: 'city', value: 'MOUNTAIN VIEW' })).toBe(true);
    expect(holds({ type: 'city', value: 'Munich' }, { address: '10.0.0.1' })).toBe(false);
  });

  it('a run of country rules is one look-up, the first rule of a country winning; the place is looked up once per address', () => {
    const rules = [
      rule('https://de.example/', { type: 'country', value: 'DE' }),
      rule('https://de2.example/', { type: 'country', value: 'DE' }),
      rule('https://us.example/', { type: 'country', value: 'US' }),
      rule('https://munich.example/', { type: 'city', value: 'Munich' }),
      rule('https://fr.example/', { type: 'country', value: 'FR' }),
    ];
    const compiled = compileRules(rules);
    expect(compiled).toHaveLength(3);
    expect(target(rules, { address: '5.1.1.1' })).toBe('https://de.example/');
    expect(target(rules, { address: '8.8.8.8' })).toBe('https://us.example/');
    expect(target(rules, { address: '10.0.0.1' })).toBeUndefined();
    expect(lookups).toBe(3);
    expect(target(rules, { address: '5.1.1.1' })).toBe('https://de.example/');
    expect(lookups).toBe(3);
  });

  it('reads nothing a rule does not ask for', () => {
    const seen: string[] = [];
    const spy: GeoLocator = { ...geo, placeOf: (a) => (seen.push(a), geo.placeOf(a)) };
    const own = new RuleMatcher(spy);
    const rules = compileRules([rule('https://q.example/', { type: 'query-param', name: 'x' }), rule('https://c.example/', { type: 'city', value: 'Munich' })]);
    expect(own.targetOf(rules, req({ query: 'x=1' }), NOW)).toBe('https://q.example/');
    expect(seen).toEqual([]);
    expect(own.targetOf(rules, req({ address: '5.1.1.1' }), NOW)).toBe('https://c.example/');
    expect(seen).toEqual(['5.1.1.1']);
  });
});
