import { loadConfig } from '@shortlink/config';
import { startBanner } from './banner';

describe('the start banner', () => {
  const lineOf = (banner: string, label: string) => banner.split('\n').find((line) => line.trimStart().startsWith(`${label} `));

  it('names the console, the three apps and the operator listeners on the configured ports', () => {
    const banner = startBanner(loadConfig({ GENERATION_PORT: '18081', REDIRECT_PORT: '18080', ANALYTICS_PORT: '18082', ADMIN_HOST: '127.0.0.2' }), null);
    expect(lineOf(banner, 'console')).toBe('  console     http://localhost:18081/console/');
    expect(lineOf(banner, 'generation')).toContain('http://127.0.0.1:18081   (API docs: http://127.0.0.1:18081/docs)');
    expect(lineOf(banner, 'redirect')).toBe('  redirect    http://127.0.0.1:18080');
    expect(lineOf(banner, 'analytics')).toContain('http://127.0.0.1:18082   (dashboard: http://127.0.0.1:18082/dashboard');
    expect(lineOf(banner, 'operators')).toContain('http://127.0.0.2:9081 · :9080 · :9082');
  });

  it('prints the console where SHORTLINK_CONSOLE_URL puts it', () => {
    const banner = startBanner(loadConfig({ SHORTLINK_CONSOLE_URL: 'https://links.example.com/console/' }), null);
    expect(lineOf(banner, 'console')).toBe('  console     https://links.example.com/console/');
  });

  it('shows a first run its generated key, in the commands too', () => {
    const banner = startBanner(loadConfig({}), 'sl_generatedKeyForTheBannerSpec');
    expect(banner).toContain('Your API key (shown this once; only its hash is stored): sl_generatedKeyForTheBannerSpec');
    expect(banner).toContain(
      `curl -s -X POST http://127.0.0.1:8081/api/v1/links -H 'content-type: application/json' -H 'x-api-key: sl_generatedKeyForTheBannerSpec'`,
    );
  });

  it('never prints a key it did not generate', () => {
    const config = loadConfig({ SHORTLINK_BOOTSTRAP_API_KEY: 'sl_theOperatorsOwnSecretKey' });
    const banner = startBanner(config, null);
    expect(banner).not.toContain('sl_theOperatorsOwnSecretKey');
    expect(banner).toContain("-H 'x-api-key: <your API key>'");
  });
});
