import { execFileSync } from 'child_process';
import { existsSync, readFileSync } from 'fs';
import { join } from 'path';
import { CONSOLE_DIRS } from '@shortlink/console-feature';
import { InProcessGeneration, startGenerationInProcess } from '../testing/in-process-generation';

const ROOT = join(__dirname, '../../../../..');

/** The console's static files as the generation app serves them (the build is apps/console's, `npm run console:build`). */
describe('console at /console', () => {
  let generation: InProcessGeneration;
  let html: string;

  beforeAll(async () => {
    if (!existsSync(join(CONSOLE_DIRS[0], 'index.html')))
      execFileSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn', '--config', 'apps/console/vite.config.mts'], {
        cwd: ROOT,
        stdio: 'pipe',
      });
    generation = await startGenerationInProcess('sl_console_spec_operator_0123456789');
  }, 60_000);

  afterAll(() => generation?.close());

  it('serves index.html with a strict CSP (no inline script or style), no-cache, no framing', async () => {
    const res = await generation.call(null, 'GET', '/console');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    html = res.body;
    expect(html).toBe(readFileSync(join(CONSOLE_DIRS[0], 'index.html'), 'utf8'));
    // Nothing inline: every script names a file.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style/);
    // The same app at any page path under /console/ (SSO sends people back to /console/); a missing file is 404.
    for (const path of ['/console/accept-invitation', '/console/', '/console/links/abc']) expect((await generation.call(null, 'GET', path)).body).toBe(html);
    expect((await generation.call(null, 'GET', '/console/nope.js')).statusCode).toBe(404);
  });

  it('serves the hashed assets index.html names for a year (immutable), and nothing else from assets/', async () => {
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      expect(asset).toMatch(/-[A-Za-z0-9_-]{8}\.(js|css)$/);
      const res = await generation.call(null, 'GET', asset);
      expect({ asset, status: res.statusCode, cache: res.headers['cache-control'] }).toEqual({
        asset,
        status: 200,
        cache: 'public, max-age=31536000, immutable',
      });
      expect(res.headers['content-type']).toMatch(asset.endsWith('.js') ? /^application\/javascript/ : /^text\/css/);
    }
    for (const missing of [
      '/console/assets/nope-12345678.js',
      '/console/assets/..%2F..%2Fpackage.json',
      '/console/assets/.env',
      '/console/assets/first-load.json',
    ])
      expect({ missing, status: (await generation.call(null, 'GET', missing)).statusCode }).toEqual({ missing, status: 404 });
  });

  it('tells the console where the analytics dashboard is (the console host on ANALYTICS_PORT, or SHORTLINK_ANALYTICS_URL) and the service domains', async () => {
    const res = await generation.call(null, 'GET', '/console/settings.json', undefined, { host: 'console.example:8081' });
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.json()).toEqual({
      analyticsUrl: 'http://console.example:8082',
      dashboardUrl: 'http://console.example:8082/dashboard',
      defaultDomain: 'sho.rt',
      sharedDomains: [],
    });
    const configured = await startGenerationInProcess('sl_console_spec_operator_0123456789', {
      SHORTLINK_ANALYTICS_URL: 'https://stats.example/',
      SHORTLINK_DOMAINS: 'go.example,sho.rt',
    });
    try {
      expect((await configured.call(null, 'GET', '/console/settings.json')).json()).toEqual({
        analyticsUrl: 'https://stats.example',
        dashboardUrl: 'https://stats.example/dashboard',
        defaultDomain: 'sho.rt',
        sharedDomains: ['go.example'],
      });
    } finally {
      await configured.close();
    }
  });

  it('keeps the console out of the OpenAPI document (static files, not API routes)', async () => {
    const doc = (await generation.call(null, 'GET', '/docs/openapi.json')).json();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
  });
});
