import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { allocateEndpoints, Endpoints, RunningProcess, startProcess, waitHealthy } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { API_KEY, createTenant, SERVER_SECRETS } from './support';
import { describeStreamJourney } from './stream-journey';

/**
 * Issue 22's live click stream on the real stack: generation, redirect and analytics as processes on
 * the MariaDB meta database and shards, Redis Cluster and Kafka (a click topic named per run, read by
 * the analytics instance's own live group). Analytics keeps its rollups in chdb in a temporary
 * directory: the stream does not read them.
 */
describe('real stack: live click stream (issue 22)', () => {
  const procs: RunningProcess[] = [];
  let endpoints: Endpoints;
  let dataDir: string;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS']) requireEnv(name);
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-rs-stream-'));
    const allocated = await allocateEndpoints();
    endpoints = allocated.endpoints;
    const run = `e2e-stream.${Date.now().toString(36)}`;
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
      ANALYTICS_STREAM_REPLAY_EVENTS: '5',
      ANALYTICS_STREAM_MAX_PER_TENANT: '4',
      ...allocated.env,
    };
    for (const [name, base] of [
      ['generation', endpoints.generation],
      ['redirect', endpoints.redirect],
      ['analytics', endpoints.analytics],
    ] as const) {
      const proc = startProcess(`apps/${name}/src/main.ts`, env);
      procs.push(proc);
      await waitHealthy(base, proc);
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  describeStreamJourney(
    () => endpoints,
    () => createTenant(endpoints),
  );
});
