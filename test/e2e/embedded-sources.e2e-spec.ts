import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, startEmbedded } from './support';
import { describeSourcesJourney } from './sources-journey';

/** Issue 19 on the embedded profile with the city database: QR scans counted apart, and cities. */
describe('embedded profile: QR scans and cities (issue 19)', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-sources-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, {
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      GEO_DATABASE: 'city',
    }));
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeSourcesJourney(() => endpoints);
});
