import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, startEmbedded } from './support';
import { describeSdkCliJourney } from './sdk-cli-journey';

/** The SDK and the `shortlink` CLI against `npm start` (the embedded profile). */
describe('embedded profile: SDK and CLI', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-sdk-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeSdkCliJourney(() => endpoints);
});
