import { bundledGeoDatabase, MmdbGeoLookup } from './mmdb-geo-lookup';

describe('MmdbGeoLookup on the bundled DB-IP country database', () => {
  const geo = new MmdbGeoLookup();

  it('finds the country of well-known public addresses, IPv4, IPv6 and IPv4-mapped', () => {
    expect(geo.countryOf('8.8.8.8')).toBe('US');
    expect(geo.countryOf('::ffff:8.8.8.8')).toBe('US');
    expect(geo.countryOf('2a00:1450:4001::1')).toBe('DE');
    expect(geo.countryOf('1.0.16.1')).toBe('JP');
  });

  it('answers null for private, loopback and malformed addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '192.168.1.1', '::1', 'not-an-ip', '']) expect(geo.countryOf(a)).toBeNull();
  });

  it('knows when its database was built, and that it has no cities: a place is its country alone', () => {
    expect(geo.builtAt).toBeInstanceOf(Date);
    expect(geo.builtAt!.getUTCFullYear()).toBeGreaterThanOrEqual(2025);
    expect(geo.detail).toBe('country');
    expect(geo.placeOf('8.8.8.8')).toEqual({ country: 'US', region: null, city: null });
    expect(geo.placeOf('10.1.2.3')).toEqual({ country: null, region: null, city: null });
  });
});

describe('MmdbGeoLookup on the bundled DB-IP city database (an IPv4 and an IPv6 file)', () => {
  const geo = new MmdbGeoLookup(bundledGeoDatabase('city'));

  it('names country, region and city of IPv4, IPv4-mapped and IPv6 addresses', () => {
    expect(geo.detail).toBe('city');
    expect(geo.placeOf('8.8.8.8')).toEqual({ country: 'US', region: 'California', city: 'Mountain View' });
    expect(geo.placeOf('::ffff:81.2.69.142')).toEqual({ country: 'GB', region: 'England', city: 'London' });
    expect(geo.placeOf('2a00:1450:4001::1')).toEqual({ country: 'DE', region: 'Hesse', city: 'Frankfurt am Main' });
  });

  it('answers countries as the country database does, so it can replace it', () => {
    const countries = new MmdbGeoLookup();
    for (const a of ['8.8.8.8', '1.0.16.1', '81.2.69.142', '2a00:1450:4001::1', '127.0.0.1']) expect(geo.countryOf(a)).toBe(countries.countryOf(a));
  });

  it('knows no place for private, loopback and malformed addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '::1', 'fe80::1', 'nope']) expect(geo.placeOf(a)).toEqual({ country: null, region: null, city: null });
  });

  it('reads the IPv4 file alone, and then knows no IPv6 address', () => {
    const v4only = new MmdbGeoLookup([bundledGeoDatabase('city')[0]]);
    expect(v4only.placeOf('8.8.8.8').city).toBe('Mountain View');
    expect(v4only.placeOf('2a00:1450:4001::1')).toEqual({ country: null, region: null, city: null });
  });

  it('pairs the IPv4 city file with the country file (less memory): cities of IPv4 clients, countries of IPv6 ones', () => {
    const mixed = new MmdbGeoLookup([bundledGeoDatabase('city')[0], ...bundledGeoDatabase('country')]);
    expect(mixed.placeOf('8.8.8.8')).toEqual({ country: 'US', region: 'California', city: 'Mountain View' });
    expect(mixed.placeOf('2a00:1450:4001::1')).toEqual({ country: 'DE', region: null, city: null });
  });
});
