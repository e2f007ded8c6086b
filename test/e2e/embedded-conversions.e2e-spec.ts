import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, createTenant, startEmbedded } from './support';
import { describeConversionsJourney } from './conversions-journey';
import { describeTagTrackingJourney } from './tag-tracking-journey';

/** Conversions on the embedded profile (`npm start`: the in-process conversions log, SQLite meta database, chdb). */
describe('embedded profile: conversions', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-conversions-'));
    ({ proc, endpoints } = await startEmbedded(dataDir, {
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      CLICK_BUFFER_FLUSH_MS: '50',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      CONVERSION_METADATA_MAX_BYTES: '1024',
      PLAN_FREE_CONVERSIONS_PER_MONTH: '3',
      PLAN_FREE_CONVERSION_METADATA_BYTES: '64',
    }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeConversionsJourney(
    () => endpoints,
    (plan) => createTenant(endpoints, plan),
  );
  describeTagTrackingJourney(
    () => endpoints,
    () => createTenant(endpoints),
  );
});
