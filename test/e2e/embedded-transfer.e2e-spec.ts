import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, startEmbedded } from './support';
import { describeTransferJourney } from './transfer-journey';

/** Two installations of `npm start` (each its own data directory, ports and default domain): export from one, import into the other. */
describe('embedded profile: export and import between installations', () => {
  const installations: Array<{ proc: RunningProcess; endpoints: Endpoints; dataDir: string }> = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const dataDir = mkdtempSync(join(tmpdir(), `shortlink-e2e-transfer-${i}-`));
      const { proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY });
      installations.push({ proc, endpoints, dataDir });
    }
  });

  afterAll(async () => {
    for (const { proc, dataDir } of installations) {
      await proc?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describeTransferJourney(() => ({ source: installations[0].endpoints, target: installations[1].endpoints }));
});
