import { DomainError } from '@shortlink/core';
import { checkRedirectRules, deviceTargetsOf, geoTargetsOf, RedirectRule, rulesFromTargets, withShorthand } from './redirect-rules';

/** A URL check that takes any https URL and refuses the rest, as the URL policy would. */
const url = async (raw: unknown, field: string) => {
  if (typeof raw !== 'string' || !raw.startsWith('https://')) throw new DomainError('INVALID_URL' as never, `${field} is not an https URL`, { field });
  return new URL(raw).href;
};
const fieldOf = async (value: unknown) => {
  try {
    await checkRedirectRules(value, url);
  } catch (error) {
    return (error as DomainError).details?.field;
  }
  return 'accepted';
};
const country = (value: string, target: string): RedirectRule => ({ url: target, conditions: [{ type: 'country', value }] });
const device = (value: 'ios' | 'android' | 'desktop', target: string): RedirectRule => ({ url: target, conditions: [{ type: 'device', value }] });
const language = (value: string, target: string): RedirectRule => ({ url: target, conditions: [{ type: 'language', value }] });

describe('redirect rules: validation', () => {
  it('normalises what it accepts', async () => {
    const rules = await checkRedirectRules(
      [
        {
          url: 'https://example.com/a',
          conditions: [
            { type: 'language', value: 'ES_mx' },
            { type: 'country', value: 'de' },
            { type: 'device', value: 'IOS' },
            { type: 'ip-address', value: '2001:DB8::/32' },
            { type: 'ip-address', value: '10.*.*.1' },
            { type: 'after-date', value: '2027-01-01T01:00:00+01:00' },
            { type: 'query-param', name: 'ref', value: '' },
            { type: 'query-param', name: 'utm', value: null },
            { type: 'city', value: '  Zürich ' },
          ],
        },
      ],
      url,
    );
    expect(rules).toEqual([
      {
        url: 'https://example.com/a',
        conditions: [
          { type: 'language', value: 'es-MX' },
          { type: 'country', value: 'DE' },
          { type: 'device', value: 'ios' },
          { type: 'ip-address', value: '2001:db8::/32' },
          { type: 'ip-address', value: '10.*.*.1' },
          { type: 'after-date', value: '2027-01-01T00:00:00.000Z' },
          { type: 'query-param', name: 'ref', value: '' },
          { type: 'query-param', name: 'utm' },
          { type: 'city', value: 'Zürich' },
        ],
      },
    ]);
    expect(await checkRedirectRules([], url)).toBeNull();
    expect(await checkRedirectRules(null, url)).toBeNull();
  });

  it('names the field of what it refuses', async () => {
    const ok = { type: 'country', value: 'DE' };
    expect(await fieldOf({})).toBe('redirectRules');
    expect(await fieldOf([{ url: 'https://e.x/', conditions: [] }])).toBe('redirectRules.0.conditions');
    expect(await fieldOf([{ url: 'https://e.x/', conditions: Array(11).fill(ok) }])).toBe('redirectRules.0.conditions');
    expect(await fieldOf(Array(101).fill({ url: 'https://e.x/', conditions: [ok] }))).toBe('redirectRules');
    expect(await fieldOf([{ url: 'https://e.x/', conditions: [ok], priority: 1 }])).toBe('redirectRules.0');
    expect(await fieldOf([{ url: 'http://e.x/', conditions: [ok] }])).toBe('redirectRules.0.url');
    const bad: Array<[object, string]> = [
      [{ type: 'weather', value: 'rain' }, 'type'],
      [{ type: 'country', value: 'Germany' }, 'value'],
      [{ type: 'language', value: 'english please' }, 'value'],
      [{ type: 'ip-address', value: '10.0.0.0/33' }, 'value'],
      [{ type: 'ip-address', value: '300.*.*.*' }, 'value'],
      [{ type: 'ip-address', value: 'localhost' }, 'value'],
      [{ type: 'before-date', value: 'tomorrow' }, 'value'],
      [{ type: 'after-date', value: '2027-01-01T00:00:00' }, 'value'],
      [{ type: 'device', value: 'tablet' }, 'value'],
      [{ type: 'os', value: 'beos' }, 'value'],
      [{ type: 'browser', value: 'lynx' }, 'value'],
      [{ type: 'query-param', name: '' }, 'name'],
      [{ type: 'query-param', name: 'a', value: 'x\ny' }, 'value'],
      [{ type: 'city', value: '' }, 'value'],
      [{ type: 'region', value: 'x'.repeat(101) }, 'value'],
      [{ type: 'country', value: 'DE', name: 'x' }, 'name'],
    ];
    for (const [condition, field] of bad) {
      expect([condition, await fieldOf([{ url: 'https://e.x/', conditions: [ok, condition] }])]).toEqual([condition, `redirectRules.0.conditions.1.${field}`]);
    }
  });
});

describe('redirect rules: the shorthand of country and device targets', () => {
  const rules = [country('DE', 'https://de/'), language('es', 'https://es/'), country('FR', 'https://fr/'), device('ios', 'https://ios/')];

  it('reads rules of one country or device condition as geoTargets and deviceTargets', () => {
    expect(geoTargetsOf(rules)).toEqual({ DE: 'https://de/', FR: 'https://fr/' });
    expect(deviceTargetsOf(rules)).toEqual({ ios: 'https://ios/' });
    expect(geoTargetsOf([language('es', 'https://es/')])).toBeNull();
    // A rule of more conditions is no target.
    expect(geoTargetsOf([{ url: 'https://x/', conditions: [...country('DE', '').conditions, ...language('de', '').conditions] }])).toBeNull();
  });

  it('changes the rules of its kind in place; sending back what was read changes nothing', () => {
    expect(withShorthand(rules, 'country', geoTargetsOf(rules))).toEqual(rules);
    expect(withShorthand(rules, 'device', deviceTargetsOf(rules))).toEqual(rules);
    expect(withShorthand(rules, 'country', { FR: 'https://fr2/', IT: 'https://it/' })).toEqual([
      language('es', 'https://es/'),
      country('FR', 'https://fr2/'),
      country('IT', 'https://it/'),
      device('ios', 'https://ios/'),
    ]);
    expect(withShorthand(rules, 'country', null)).toEqual([language('es', 'https://es/'), device('ios', 'https://ios/')]);
    expect(withShorthand(rules, 'device', { android: 'https://and/' })).toEqual([...rules.slice(0, 3), device('android', 'https://and/')]);
  });

  it('puts new country rules before the device rules, new device rules last', () => {
    const onlyDevice = [language('es', 'https://es/'), device('ios', 'https://ios/')];
    expect(withShorthand(onlyDevice, 'country', { DE: 'https://de/' })).toEqual([
      language('es', 'https://es/'),
      country('DE', 'https://de/'),
      device('ios', 'https://ios/'),
    ]);
    expect(withShorthand(null, 'device', { desktop: 'https://d/' })).toEqual([device('desktop', 'https://d/')]);
    expect(withShorthand(null, 'device', null)).toBeNull();
  });

  it('turns the targets of a link stored before rules into rules, countries first', () => {
    expect(rulesFromTargets({ DE: 'https://de/' }, { desktop: 'https://d/', ios: 'https://ios/' })).toEqual([
      country('DE', 'https://de/'),
      device('ios', 'https://ios/'),
      device('desktop', 'https://d/'),
    ]);
    expect(rulesFromTargets(null, undefined)).toBeNull();
  });
});
