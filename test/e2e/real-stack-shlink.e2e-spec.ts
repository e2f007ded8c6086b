import { createClient } from '@clickhouse/client';
import { allocateEndpoints, Endpoints, RunningProcess, startProcess, waitHealthy } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { API_KEY, createTenant, SERVER_SECRETS } from './support';
import { describeShlinkJourney } from './shlink-journey';

/**
 * Issue 23's Shlink REST v3 on the real stack: generation, redirect and analytics as processes on
 * MariaDB, Redis Cluster, Kafka and ClickHouse (a database of this run). The generation app reads
 * raw visits and click counts from ClickHouse itself (the olap-reader port, not critical).
 */
describe('real stack: Shlink REST v3 (issue 23)', () => {
  const procs: RunningProcess[] = [];
  let endpoints: Endpoints;
  const run = Date.now().toString(36);
  const database = `shortlink_e2e_shlink_${run}`;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', 'CLICKHOUSE_URL']) requireEnv(name);
    const allocated = await allocateEndpoints();
    endpoints = allocated.endpoints;
    const topic = `shortlink.clicks.e2e-shlink.${run}`;
    const env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'clickhouse',
      ...allocated.env,
      ...SERVER_SECRETS,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      LOG_LEVEL: 'warn',
      CLICKHOUSE_DATABASE: database,
      KAFKA_CLICK_TOPIC: topic,
      KAFKA_CONSUMER_GROUP: `${topic}.analytics`,
      CLICK_BUFFER_FLUSH_MS: '50',
    };
    // Generation first: it bootstraps the tenant; until analytics has created the ClickHouse database, visits answer 503.
    for (const [name, base] of [
      ['generation', endpoints.generation],
      ['analytics', endpoints.analytics],
      ['redirect', endpoints.redirect],
    ] as const) {
      const proc = startProcess(`apps/${name}/src/main.ts`, env);
      procs.push(proc);
      await waitHealthy(base, proc);
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    const ch = createClient({
      url: process.env.CLICKHOUSE_URL,
      username: process.env.CLICKHOUSE_USER || 'default',
      password: process.env.CLICKHOUSE_PASSWORD || '',
    });
    await ch.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => undefined);
    await ch.close();
  });

  describeShlinkJourney(
    () => endpoints,
    () => createTenant(endpoints),
  );
});
