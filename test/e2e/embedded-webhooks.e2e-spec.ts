import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, RunningProcess } from '@shortlink/harness';
import { API_KEY, createTenant, restartEmbedded, startEmbedded } from './support';
import { describeWebhookJourney, describeWebhookRefusals } from './webhooks-journey';

/** Webhooks on the embedded profile (`npm start`: the in-process bus and the SQLite meta database). */
describe('embedded profile: webhooks', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-webhooks-'));
    ({ proc, endpoints, env } = await startEmbedded(dataDir, { SHORTLINK_BOOTSTRAP_API_KEY: API_KEY, CLICK_BUFFER_FLUSH_MS: '50' }));
  });

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('without WEBHOOK_ALLOW_PRIVATE', () => {
    describeWebhookRefusals(
      () => endpoints.generation,
      () => createTenant(endpoints),
    );
  });

  describe('with WEBHOOK_ALLOW_PRIVATE=true and a short retry schedule', () => {
    beforeAll(async () => {
      proc = await restartEmbedded(proc, endpoints, { ...env, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_RETRY_MAX_MS: '1000' });
    });
    describeWebhookJourney(
      () => endpoints,
      () => createTenant(endpoints),
    );
  });
});
