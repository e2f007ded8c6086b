import type { GeoLocator } from '@shortlink/visitors-domain';
import { SessionClients } from './session-client';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

/** A city database that knows one address. */
const geo: GeoLocator = {
  builtAt: null,
  detail: 'city',
  countryOf: (a) => (a === '81.2.69.142' ? 'GB' : null),
  placeOf: (a) => (a === '81.2.69.142' ? { country: 'GB', region: 'England', city: 'London' } : { country: null, region: null, city: null }),
};

describe('what a sign-in came from', () => {
  const clients = new SessionClients(geo);

  it('names the device, browser and OS of the user agent and the place of the address', () => {
    expect(clients.describe(IPHONE, '81.2.69.142')).toEqual({
      device: 'mobile',
      browser: 'Mobile Safari',
      os: 'iOS',
      country: 'GB',
      region: 'England',
      city: 'London',
    });
    expect(clients.describe(WINDOWS, '10.0.0.7')).toEqual({ device: 'desktop', browser: 'Chrome', os: 'Windows', country: null, region: null, city: null });
  });

  it('knows nothing of a request without a user agent or an address, and keeps nothing else', () => {
    expect(clients.describe(undefined, null)).toEqual({ device: null, browser: null, os: null, country: null, region: null, city: null });
    expect(new SessionClients(null).describe(['a', 'b'], '81.2.69.142')).toEqual({
      device: null,
      browser: null,
      os: null,
      country: null,
      region: null,
      city: null,
    });
  });
});
