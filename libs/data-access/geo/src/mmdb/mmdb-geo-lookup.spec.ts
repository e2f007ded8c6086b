import { MmdbGeoLookup } from './mmdb-geo-lookup';

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

  it('knows when its database was built', () => {
    expect(geo.builtAt).toBeInstanceOf(Date);
    expect(geo.builtAt!.getUTCFullYear()).toBeGreaterThanOrEqual(2025);
  });
});
