import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, startEmbedded } from './support';
import { describeVisitorPages } from './visitor-pages-journey';

const DEFAULT_DOMAIN = 'sho.rt.test';

/** On the embedded profile (`npm start`); this profile keeps the screenshots in docs/img/. */
describe('embedded profile: pages for visitors and domain settings', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-visitor-pages-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, SHORTLINK_PUBLIC_BASE_URL: `http://${DEFAULT_DOMAIN}` }));
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeVisitorPages(() => ({ generation: endpoints.generation, redirects: [endpoints.redirect], defaultDomain: DEFAULT_DOMAIN }), {
    screenshots: true,
    run: Date.now().toString(36),
  });
});
