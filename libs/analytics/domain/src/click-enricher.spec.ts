import { GeoLocator, GeoPlace, VisitorIds } from '@shortlink/visitors-domain';
import { cityOfValue, cityValueOf, rollupsOf } from './aggregation';
import { ClickEnricher, MAX_USER_AGENT, RawClick } from './click-enricher';
import { countedOf } from './testing/counted-clicks';
import { visitRowAt, visitsOf } from './visits';

const PLACES: Record<string, GeoPlace> = {
  '198.51.100.1': { country: 'US', region: 'Illinois', city: 'Springfield' },
  '198.51.100.2': { country: 'US', region: 'Massachusetts', city: 'Springfield' },
  '203.0.113.9': { country: 'DE', region: null, city: null },
};

/** A city database in a table; counts its lookups. */
class TableGeo implements GeoLocator {
  readonly builtAt = null;
  readonly detail = 'city' as const;
  lookups = 0;
  countryOf(address: string): string | null {
    return this.placeOf(address).country;
  }
  placeOf(address: string): GeoPlace {
    this.lookups++;
    return PLACES[address] ?? { country: null, region: null, city: null };
  }
}

const AT = Date.UTC(2026, 11, 5, 8, 0, 0);
const raw = (seq: number, address: string, source: RawClick['source']): RawClick => ({
  seq,
  kind: 'click',
  at: AT,
  tenantId: 't1',
  linkId: '1',
  domain: 'sho.rt',
  code: 'abc1234',
  address,
  userAgent: 'Mozilla/5.0',
  referer: null,
  variant: null,
  source,
});

describe('ClickEnricher with a city database', () => {
  it('gives each click its country, region and city, looked up once per address of a batch, and keeps its source', () => {
    const geo = new TableGeo();
    const events = new ClickEnricher('p1', geo, new VisitorIds('k'.repeat(32))).enrich([
      raw(0, '198.51.100.1', 'qr'),
      raw(1, '198.51.100.1', 'link'),
      raw(2, '198.51.100.2', 'link'),
      raw(3, '203.0.113.9', 'qr'),
      raw(4, '10.0.0.1', 'link'),
    ]);
    expect(events.map((e) => [e.source, e.country, e.region, e.city])).toEqual([
      ['qr', 'US', 'Illinois', 'Springfield'],
      ['link', 'US', 'Illinois', 'Springfield'],
      ['link', 'US', 'Massachusetts', 'Springfield'],
      ['qr', 'DE', null, null],
      ['link', null, null, null],
    ]);
    expect(geo.lookups).toBe(4);
    // The raw visits carry what the event carries.
    const visits = visitsOf(countedOf(events));
    expect(visitRowAt(visits, 0)).toMatchObject({ source: 'qr', country: 'US', region: 'Illinois', city: 'Springfield' });
    expect(visitRowAt(visits, 4)).toMatchObject({ source: 'link', country: null, region: null, city: null });
  });

  it('rolls clicks up by source and by city with its country and region; an unknown city is none', () => {
    const events = new ClickEnricher('p1', new TableGeo(), new VisitorIds('k'.repeat(32))).enrich([
      raw(0, '198.51.100.1', 'qr'),
      raw(1, '198.51.100.1', 'link'),
      raw(2, '198.51.100.2', 'qr'),
      raw(3, '203.0.113.9', 'link'),
    ]);
    const dims = new Map<string, number>();
    for (const row of rollupsOf(countedOf(events))) {
      for (const { dimension, value } of row.values) {
        if (dimension === 'sources' || dimension === 'cities') dims.set(`${dimension}:${value}`, (dims.get(`${dimension}:${value}`) ?? 0) + row.clicks);
      }
    }
    expect(Object.fromEntries(dims)).toEqual({
      'sources:qr': 2,
      'sources:link': 2,
      'cities:US\tIllinois\tSpringfield': 2,
      'cities:US\tMassachusetts\tSpringfield': 1,
      'cities:': 1,
    });
  });
});

describe('ClickEnricher visitor ids', () => {
  it("hashes the visitor per tenant: one address and agent is one visitor on a tenant's links, another on another tenant's", () => {
    const ids = new VisitorIds('k'.repeat(32));
    const events = new ClickEnricher('p1', new TableGeo(), ids).enrich([
      raw(0, '198.51.100.1', 'link'),
      { ...raw(1, '198.51.100.1', 'link'), linkId: '2', code: 'other1' },
      { ...raw(2, '198.51.100.1', 'link'), tenantId: 't2', linkId: '3', code: 'theirs1' },
      { ...raw(3, '198.51.100.1', 'link'), kind: 'orphan', tenantId: '', linkId: '', code: 'nolink1' },
    ]);
    const [a, sameTenant, otherTenant, orphan] = events.map((e) => e.visitor);
    expect(sameTenant).toBe(a);
    expect(otherTenant).not.toBe(a);
    expect(orphan).not.toBe(a);
    expect(a).toBe(ids.idOf('t1', '198.51.100.1', 'Mozilla/5.0', AT));
    expect(otherTenant).toBe(ids.idOf('t2', '198.51.100.1', 'Mozilla/5.0', AT));
  });
  it('gives every click of a batch the id of its day, tenant, address and agent: bursts, alternating visitors, a long agent, midnight', () => {
    const ids = new VisitorIds('k'.repeat(32));
    const long = 'A'.repeat(600);
    const nextDay = AT + 16 * 3_600_000;
    const raws: RawClick[] = [
      raw(0, '198.51.100.1', 'link'),
      raw(1, '198.51.100.1', 'link'),
      raw(2, '198.51.100.2', 'link'),
      raw(3, '198.51.100.1', 'link'),
      { ...raw(4, '198.51.100.1', 'link'), userAgent: long },
      { ...raw(5, '198.51.100.1', 'link'), userAgent: long },
      { ...raw(6, '198.51.100.1', 'link'), tenantId: 't2' },
      { ...raw(7, '198.51.100.1', 'link'), at: nextDay },
      { ...raw(8, '198.51.100.2', 'link'), at: nextDay },
      raw(9, '198.51.100.1', 'link'), // a click of the day before, late in the batch
    ];
    const enricher = new ClickEnricher('p1', new TableGeo(), ids, 3);
    const expected = raws.map((r) => ids.idOf(r.tenantId, r.address, r.userAgent.slice(0, MAX_USER_AGENT), r.at));
    const events = enricher.enrich(raws);
    expect(events.map((e) => e.visitor)).toEqual(expected);
    // The ids are kept across batches (at most 3 visitors here): the next batch gives the same ones.
    expect(enricher.enrich(raws).map((e) => e.visitor)).toEqual(expected);
    expect(enricher.enrich([...raws].reverse()).map((e) => e.visitor)).toEqual([...expected].reverse());
    expect(events.map((e) => e.country)).toEqual(raws.map((r) => PLACES[r.address]?.country ?? null));
    expect(events[4].userAgent).toHaveLength(MAX_USER_AGENT);
    expect(events[5].userAgent).toBe(events[4].userAgent);
  });
});

describe('cityValueOf and cityOfValue', () => {
  it('keep a city with its country and region, and read it back', () => {
    expect(cityOfValue(cityValueOf({ country: 'US', region: 'Illinois', city: 'Springfield' }))).toEqual({
      country: 'US',
      region: 'Illinois',
      city: 'Springfield',
    });
    expect(cityOfValue(cityValueOf({ country: 'SG', region: null, city: 'Singapore' }))).toEqual({ country: 'SG', region: null, city: 'Singapore' });
    // A tab in a name cannot shift the parts.
    expect(cityOfValue(cityValueOf({ country: 'XX', region: 'a\tb', city: 'c\nd' }))).toEqual({ country: 'XX', region: 'a b', city: 'c d' });
  });

  it('make none of a place without a city or a country, and read none, OTHER and odd values as no city', () => {
    expect(cityValueOf({ country: 'DE', region: 'Hesse', city: null })).toBe('');
    expect(cityValueOf({ country: null, region: null, city: 'Nowhere' })).toBe('');
    for (const v of ['', '(other)', 'US\tIllinois', '\t\tX', 'US\tIL\t']) expect(cityOfValue(v)).toBeNull();
  });
});
