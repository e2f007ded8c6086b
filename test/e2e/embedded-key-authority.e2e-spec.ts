import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { describeKeyAuthorityJourney } from './key-authority-journey';
import { API_KEY, startEmbedded } from './support';

/** Keys within the role of their person (docs/design.md, "Security model") on the embedded profile (`npm start`). */
describe('embedded profile: a key never outranks its person', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-key-authority-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeKeyAuthorityJourney(() => [endpoints.generation, endpoints.generation]);
});
