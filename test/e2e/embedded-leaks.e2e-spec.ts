import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { describeLeaksJourney, LEAKS_SETTINGS } from './leaks-journey';
import { API_KEY, startEmbedded } from './support';

/** The smaller leaks between tenants on the embedded profile (`npm start`: one process, the in-process bus and stores). */
describe('embedded profile: smaller leaks between tenants', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-leaks-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, ...LEAKS_SETTINGS }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeLeaksJourney(() => ({ endpoints, redirects: [endpoints.redirect] }));
});
