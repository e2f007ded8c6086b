import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, createTenant, startEmbedded } from './support';
import { describeStreamJourney } from './stream-journey';

/** Live click stream on the embedded profile (`npm start`: the in-process bus). */
describe('embedded profile: live click stream', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-stream-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, {
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      CLICK_BUFFER_FLUSH_MS: '50',
      ANALYTICS_STREAM_REPLAY_EVENTS: '5',
      ANALYTICS_STREAM_MAX_PER_TENANT: '4',
    }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeStreamJourney(
    () => endpoints,
    () => createTenant(endpoints),
  );
});
