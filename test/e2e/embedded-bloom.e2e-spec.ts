import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, createTenant, startEmbedded } from './support';
import { describeBloomGrowthJourney } from './bloom-journey';

/** The Bloom filter's growth on the embedded profile (`npm start`: SQLite shards, in-process cache). */
describe('embedded profile: the Bloom filter grows with the links', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-e2e-bloom-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, {
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      BLOOM_CAPACITY: '1000',
      BLOOM_LAYOUT_REFRESH_MS: '100',
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
      RATE_LIMIT_GLOBAL_PER_SECOND: '0',
    }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeBloomGrowthJourney(
    () => endpoints,
    async () => (await createTenant(endpoints)).apiKey,
    3000,
  );
});
