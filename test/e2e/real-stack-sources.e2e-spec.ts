import { createClient } from '@clickhouse/client';
import { requireEnv } from '@shortlink/testing';
import { allocateEndpoints, Endpoints, RunningProcess, startProcess, waitHealthy } from '@shortlink/harness';
import { API_KEY, SERVER_SECRETS } from './support';
import { describeSourcesJourney } from './sources-journey';

/**
 * Issue 19 on the real stack with the city database: the three apps as processes on the MariaDB
 * shards, Redis Cluster, Kafka (the click event with its source, region and city) and ClickHouse
 * 18.16 (the sources and cities breakdowns, the raw visits), in a database and topic of their own.
 */
describe('real stack: QR scans and cities (issue 19)', () => {
  const procs: RunningProcess[] = [];
  let endpoints: Endpoints;
  const run = Date.now().toString(36);
  const database = `shortlink_e2e_sources_${run}`;
  const topic = `shortlink.clicks.e2e.sources.${run}`;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', 'CLICKHOUSE_URL']) requireEnv(name);
    const allocated = await allocateEndpoints();
    endpoints = allocated.endpoints;
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
      TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      GEO_DATABASE: 'city',
      SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
    };
    // Generation first: it bootstraps the tenant the other two authenticate against.
    const generation = startProcess('apps/generation/src/main.ts', env);
    procs.push(generation);
    await waitHealthy(endpoints.generation, generation);
    for (const [name, base] of [
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
    const ch = createClient({
      url: process.env.CLICKHOUSE_URL,
      username: process.env.CLICKHOUSE_USER || 'default',
      password: process.env.CLICKHOUSE_PASSWORD || '',
    });
    await ch.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => undefined);
    await ch.close();
  });

  describeSourcesJourney(() => endpoints);
});
