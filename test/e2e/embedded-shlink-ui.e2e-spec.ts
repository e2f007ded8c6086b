import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, startEmbedded } from './support';
import { describeShlinkUiJourney } from './shlink-ui-journey';

/** Shlink's own web UI on the embedded profile (`npm start`). */
describe('embedded profile: Shlink’s web UI', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-shlink-ui-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, CLICK_BUFFER_FLUSH_MS: '50' }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeShlinkUiJourney(
    () => endpoints,
    async () => API_KEY,
  );
});
