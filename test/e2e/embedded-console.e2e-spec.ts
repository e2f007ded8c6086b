import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { describeConsoleJourney } from './console-journey';
import { API_KEY, startEmbedded } from './support';

/** Issue 21 on the embedded profile (`npm start`, which builds the console first; npm test builds it before the e2e tier). */
describe('embedded profile: the console', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-console-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY }));
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeConsoleJourney(
    () => endpoints.generation,
    () => endpoints.redirect,
  );
});
