import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { allocateEndpoints, App, Endpoints, RunningProcess, startApp, startProcess, waitHealthy } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { API_KEY, createTenant, SERVER_SECRETS } from './support';
import { describeWebhookJourney, describeWebhookRefusals } from './webhooks-journey';

/**
 * Issue 22's webhooks on the real stack: generation, redirect and analytics as processes on the
 * MariaDB meta database and shards, Redis Cluster and Kafka (the events topic and the click topic,
 * each read by the deliverer's own consumer group, named per run). Analytics keeps its rollups in
 * chdb in a temporary directory: the webhooks do not read them.
 */
describe('real stack: webhooks (issue 22)', () => {
  const procs: RunningProcess[] = [];
  let strict: App;
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS']) requireEnv(name);
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-rs-webhooks-'));
    const allocated = await allocateEndpoints();
    endpoints = allocated.endpoints;
    const run = `e2e-webhooks.${Date.now().toString(36)}`;
    const env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'chdb',
      SHORTLINK_DATA_DIR: dataDir,
      ...SERVER_SECRETS,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      LOG_LEVEL: 'warn',
      KAFKA_CLICK_TOPIC: `shortlink.clicks.${run}`,
      KAFKA_CONSUMER_GROUP: `${run}.analytics`,
      KAFKA_EVENTS_TOPIC: `shortlink.events.${run}`,
      KAFKA_WEBHOOK_CONSUMER_GROUP: `${run}.webhooks`,
      CLICK_BUFFER_FLUSH_MS: '50',
    };
    // A generation instance with the default (no private receivers), beside the ones the journey uses.
    strict = await startApp('generation', env);
    const allowing = { ...env, ...allocated.env, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_RETRY_MAX_MS: '1000' };
    for (const [name, base] of [
      ['generation', endpoints.generation],
      ['redirect', endpoints.redirect],
      ['analytics', endpoints.analytics],
    ] as const) {
      const proc = startProcess(`apps/${name}/src/main.ts`, allowing);
      procs.push(proc);
      await waitHealthy(base, proc);
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all([strict?.stop(), ...procs.map((p) => p.stop())]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('without WEBHOOK_ALLOW_PRIVATE', () => {
    describeWebhookRefusals(
      () => strict.base,
      () => createTenant(endpoints),
    );
  });

  describeWebhookJourney(
    () => endpoints,
    () => createTenant(endpoints),
  );
});
