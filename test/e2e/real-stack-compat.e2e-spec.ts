import { createClient } from '@clickhouse/client';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { allocateEndpoints, Endpoints, RunningProcess, startApp, startProcess, waitHealthy } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { API_KEY, createTenant, SERVER_SECRETS } from './support';
import { describeBitlyJourney } from './bitly-journey';
import { api } from './tenant-journey';
import { describeYourlsJourney, yourlsClient } from './yourls-journey';

/**
 * Issue 23's compatibility APIs on the real stack: generation, redirect and analytics as processes
 * on MariaDB, Redis Cluster, Kafka and ClickHouse (a database of this run). The generation app reads
 * the click counts from ClickHouse itself (the olap-reader port).
 */
describe('real stack: compatibility APIs (issue 23)', () => {
  const procs: RunningProcess[] = [];
  let endpoints: Endpoints;
  const run = Date.now().toString(36);
  const database = `shortlink_e2e_compat_${run}`;
  let env: Record<string, string>;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', 'CLICKHOUSE_URL']) requireEnv(name);
    const allocated = await allocateEndpoints();
    endpoints = allocated.endpoints;
    const topic = `shortlink.clicks.e2e-compat.${run}`;
    env = {
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
      SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
    };
    // Generation first: it bootstraps the tenant; until analytics has created the ClickHouse database, counts answer 0.
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

  describeYourlsJourney(
    () => endpoints,
    () => createTenant(endpoints),
    () => createTenant(endpoints, 'free'),
  );
  describeBitlyJourney(
    () => endpoints,
    () => createTenant(endpoints),
  );

  it('a generation instance that cannot reach the click store (chdb in another process) answers 0 clicks with a note, not an error', async () => {
    const { apiKey } = await createTenant(endpoints);
    const dataDir = mkdtempSync(join(tmpdir(), 'shortlink-compat-lone-'));
    const lone = await startApp('generation', { ...env, OLAP_DRIVER: 'chdb', SHORTLINK_DATA_DIR: dataDir });
    try {
      const signature = (await api(lone.base, 'GET', '/api/v1/compat/yourls/signature', apiKey)).body.signature as string;
      const made = await yourlsClient(`${lone.base}/yourls-api.php`, { signature }, 'shorten', { url: 'https://example.com/yourls/lone' });
      const res = await fetch(`${lone.base}/yourls-api.php?${new URLSearchParams({ signature, action: 'url-stats', shorturl: made.keyword, format: 'json' })}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ link: { clicks: '0', keyword: made.keyword }, note: expect.stringMatching(/not available/) });
    } finally {
      await lone.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
