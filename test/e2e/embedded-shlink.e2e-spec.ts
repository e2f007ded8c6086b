import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, createTenant, startEmbedded } from './support';
import { describeShlinkJourney } from './shlink-journey';

/** Shlink REST v3 on the embedded profile (`npm start`: SQLite, in-process bus, chdb read in process). */
describe('embedded profile: Shlink REST v3', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-shlink-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, CLICK_BUFFER_FLUSH_MS: '50' }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeShlinkJourney(
    () => endpoints,
    () => createTenant(endpoints),
  );
});
