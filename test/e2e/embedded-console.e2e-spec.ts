import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { describeConsoleJourney } from './console-journey';
import { API_KEY, startEmbedded } from './support';

/** The console on the embedded profile (`npm start`, which builds the console first; npm test builds it before the e2e tier). */
describe('embedded profile: the console', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-console-'));
    // SSO to a provider on 127.0.0.1 (http); its callback and the console it returns to stay at their defaults (localhost).
    // The test's own requests may say where a sign-in came from (a proxy of ours on 127.0.0.1).
    ({ proc, endpoints } = await startEmbedded(dataDir, {
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      SSO_ALLOW_INSECURE_ISSUERS: 'true',
      TRUSTED_PROXIES: '127.0.0.1',
    }));
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeConsoleJourney(
    () => endpoints.generation,
    () => endpoints.redirect,
    // One process: its output holds the start banner and the generation app's log lines.
    { generationOutput: () => proc.output(), banner: () => proc.output() },
  );
});
