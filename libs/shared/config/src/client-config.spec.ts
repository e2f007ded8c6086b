import { ConfigError } from './config';
import { DEFAULT_API_URL, loadClientConfig } from './client-config';

describe('loadClientConfig (the API clients: shortlink CLI, links:import, links:export)', () => {
  it('reads SHORTLINK_API_URL (trailing slash dropped) and SHORTLINK_API_KEY; defaults to npm start’s API and no key', () => {
    expect(loadClientConfig({})).toEqual({ apiUrl: DEFAULT_API_URL, apiKey: null });
    expect(loadClientConfig({ SHORTLINK_API_URL: 'https://api.sho.rt/', SHORTLINK_API_KEY: 'sl_abc' })).toEqual({
      apiUrl: 'https://api.sho.rt',
      apiKey: 'sl_abc',
    });
    expect(loadClientConfig({ SHORTLINK_API_KEY: '' })).toEqual({ apiUrl: DEFAULT_API_URL, apiKey: null });
  });

  it('refuses an address that is not a URL, and ignores server settings that would not boot an app', () => {
    expect(() => loadClientConfig({ SHORTLINK_API_URL: 'api.sho.rt' })).toThrow(ConfigError);
    expect(() => loadClientConfig({ SHORTLINK_API_URL: 'api.sho.rt' })).toThrow(/SHORTLINK_API_URL/);
    expect(loadClientConfig({ DB_DRIVER: 'mysql', GENERATION_PORT: 'nope', SHORTLINK_API_KEY: 'sl_x' })).toEqual({ apiUrl: DEFAULT_API_URL, apiKey: 'sl_x' });
  });
});
