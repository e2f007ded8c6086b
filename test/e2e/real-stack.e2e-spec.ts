import { createClient } from '@clickhouse/client';
import { Cluster } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { createConnection } from 'mysql2/promise';
import { decodeClickRecord, kafkaPartitionOf } from '@shortlink/bus';
import type { ClickEvent } from '@shortlink/clicks-domain';
import { loadConfig } from '@shortlink/config';
import { createShardRouter } from '@shortlink/shard-router';
import { redisClusterNodes, requireEnv } from '@shortlink/testing';
import { allocateEndpoints, Endpoints, eventually, parseMetrics, RunningProcess, startProcess, waitHealthy } from '@shortlink/harness';
import { API_KEY, createLink, getStats, createTenant, redirectOf, SERVER_SECRETS } from './support';
import { describeAnalyticsJourney } from './analytics-journey';
import { describeAuditJourney } from './audit-journey';
import { describeSourcesJourney } from './sources-journey';
import { describeTenantJourney } from './tenant-journey';
import { describeLinkOptions } from './link-options';
import { describeProbeJourney } from './probe-journey';
import { describeUserJourney } from './user-journey';

/**
 * The real stack of `npm run stack:up`: the three apps as separate processes against Redis
 * Cluster, the MariaDB shards, Kafka and ClickHouse. Besides the user journey, each step is
 * checked where it must have landed, with the servers' own clients.
 */
describe('real stack (three processes, Redis Cluster, MariaDB shards, Kafka, ClickHouse)', () => {
  const procs: RunningProcess[] = [];
  let endpoints: Endpoints;
  const database = `shortlink_e2e_${Date.now().toString(36)}`;
  const topic = `shortlink.clicks.e2e.${Date.now().toString(36)}`;
  let env: Record<string, string>;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', 'CLICKHOUSE_URL']) requireEnv(name);
    const allocated = await allocateEndpoints();
    endpoints = allocated.endpoints;
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
      // Loopback is the trusted proxy: the analytics journey and the link-option tests present visitors (and countries) by X-Forwarded-For.
      TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      // Countries, regions and cities of those visitors.
      GEO_DATABASE: 'city',
      // Every process agrees on the links' domain whatever its port (the default is localhost:<REDIRECT_PORT>).
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
  });

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

  describeUserJourney(
    () => endpoints,
    async () => (await createTenant(endpoints)).apiKey,
  );
  describeAnalyticsJourney(
    () => endpoints,
    async () => (await createTenant(endpoints)).apiKey,
  );
  describeTenantJourney(
    () => endpoints,
    () => procs.map((p) => p.output()).join('\n'),
  );
  describeLinkOptions(() => endpoints);
  describeProbeJourney(() => endpoints);
  describeAuditJourney(() => endpoints);
  describeSourcesJourney(() => endpoints);

  it('puts the row on the shard the router names, the key in Redis Cluster, the event on Kafka and the aggregate in ClickHouse', async () => {
    const url = `https://example.com/proof?t=${Date.now()}`;
    const created = await createLink(endpoints, { url });
    expect(created.status).toBe(201);
    const code = created.body.code as string;
    const domain = created.body.domain as string;

    // 1. MySQL: exactly the shard the router names holds the row, no other shard does.
    const config = loadConfig({ ...process.env, ...env });
    if (config.db.driver !== 'mysql') throw new Error('expected mysql config');
    const router = createShardRouter(
      config.db.strategy,
      config.db.shards.map((s) => ({ name: s.name })),
      config.db.virtualNodes,
    );
    const owner = router.shardFor(code);
    for (const shard of config.db.shards) {
      const conn = await createConnection(shard.url);
      const [rows] = await conn.query('SELECT target_url FROM links WHERE domain = ? AND code = ?', [domain, code]);
      await conn.end();
      expect((rows as Array<{ target_url: string }>).map((r) => r.target_url)).toEqual(shard.name === owner ? [url] : []);
    }

    // 2. Redis Cluster: the redirect wrote short:link:<domain>:<code>; under the lru policy it expires
    // within CACHE_MAX_TTL_SECONDS (1 h, less up to a tenth: docs/design.md, "Keys in the shared cache").
    expect((await redirectOf(endpoints, code)).status).toBe(302);
    const redis = new Cluster(redisClusterNodes());
    try {
      const value = await redis.get(`short:link:${domain}:${code}`);
      expect(JSON.parse(value!)).toMatchObject({ targetUrl: url });
      const ttl = await redis.pttl(`short:link:${domain}:${code}`);
      expect(ttl).toBeGreaterThan(3_240_000 - 60_000);
      expect(ttl).toBeLessThanOrEqual(3_600_000);
    } finally {
      redis.disconnect();
    }

    // 3. Kafka: the click event is on the topic, keyed by domain/code.
    const kafka = new Kafka({ brokers: requireEnv('KAFKA_BROKERS').split(','), clientId: 'e2e-probe', logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `e2e-probe-${Date.now()}` });
    const seen: Array<{ partition: number; code: string; event: ClickEvent }> = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) =>
        void seen.push(...(decodeClickRecord(message.value) as ClickEvent[]).map((e) => ({ partition, code: e.code, event: e }))),
    });
    try {
      await eventually('the click on the Kafka topic', async () => seen.some((m) => m.code === code), 30_000);
      // On the partition Kafka's own partitioner names for the link, enriched, without the address.
      const found = seen.find((m) => m.code === code)!;
      expect(found.partition).toBe(kafkaPartitionOf(`${domain}/${code}`, Number(process.env.KAFKA_CLICK_PARTITIONS ?? 6)));
      expect(found.event).toMatchObject({ kind: 'click', domain, code, country: null });
      expect(JSON.stringify(found.event)).not.toContain('127.0.0.1');
    } finally {
      await consumer.disconnect();
    }

    // 4. ClickHouse: the per-minute aggregate row exists in the server's table, and the API agrees.
    const ch = createClient({
      url: requireEnv('CLICKHOUSE_URL'),
      username: process.env.CLICKHOUSE_USER || 'default',
      password: process.env.CLICKHOUSE_PASSWORD || '',
    });
    try {
      const rows = await eventually(
        'the aggregate row in ClickHouse',
        async () => {
          const rs = await ch.query({ query: `SELECT sumMerge(clicks) AS clicks FROM ${database}.link_minute WHERE code = '${code}'`, format: 'JSONEachRow' });
          const data = (await rs.json()) as Array<{ clicks: string | number }>;
          return data.length && Number(data[0].clicks) === 1 ? data : null;
        },
        60_000,
        500,
      );
      expect(Number(rows[0].clicks)).toBe(1);
    } finally {
      await ch.close();
    }
    expect((await getStats(endpoints, code)).body.totals.clicks).toBe(1);
  });

  it('stops on SIGTERM in order: the buffered clicks reach Kafka, the database pools close with QUIT, exit code 0', async () => {
    const created = await createLink(endpoints, { url: `https://example.com/sigterm?t=${Date.now()}` });
    const code = created.body.code as string;
    const ownTopic = `${topic}.sigterm`;
    const allocated = await allocateEndpoints();
    // A redirect of its own whose buffer never flushes by itself: only the shutdown can send the clicks.
    const redirect = startProcess('apps/redirect/src/main.ts', {
      ...env,
      ...allocated.env,
      KAFKA_CLICK_TOPIC: ownTopic,
      CLICK_BUFFER_FLUSH_MS: '3600000',
      CLICK_BUFFER_BATCH_SIZE: '100000',
      REDIRECT_L1_ENABLED: 'false',
      REDIRECT_REDIS_ENABLED: 'false',
    });
    try {
      await waitHealthy(allocated.endpoints.redirect, redirect);
      const servers = [
        ...new Set(
          loadConfig({ ...process.env, ...env }).db.driver === 'mysql'
            ? requireEnv('MYSQL_SHARDS')
                .split(',')
                .map((p) => p.slice(p.indexOf('=') + 1))
            : [],
        ),
      ];
      expect(servers.length).toBeGreaterThan(0); // else the count below is 0 before and after, whatever happens
      const aborted = async () => {
        let total = 0;
        for (const url of servers) {
          const conn = await createConnection(url);
          const [rows] = await conn.query("SHOW GLOBAL STATUS LIKE 'Aborted_clients'");
          await conn.end();
          total += Number((rows as Array<{ Value: string }>)[0].Value);
        }
        return total;
      };
      // Every request reads a shard (caches off), so the pools of the shards holding the link are open.
      for (let i = 0; i < 25; i++) expect((await redirectOf(allocated.endpoints, code)).status).toBe(302);
      const buffered = parseMetrics(await (await fetch(`${allocated.endpoints.admin.redirect}/metrics`)).text()).get('shortlink_click_buffer_size');
      expect(buffered).toBe(25);
      const abortedBefore = await aborted();
      await redirect.stop();
      expect({ exitCode: redirect.child.exitCode, signal: redirect.child.signalCode }).toEqual({ exitCode: 0, signal: null });
      expect(await aborted()).toBe(abortedBefore);
    } finally {
      await redirect.stop(); // a no-op once it exited
    }
    const kafka = new Kafka({ brokers: requireEnv('KAFKA_BROKERS').split(','), clientId: 'e2e-sigterm', logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `e2e-sigterm-${Date.now()}` });
    const seen: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: ownTopic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(...(decodeClickRecord(message.value) as ClickEvent[]).map((e) => e.code)) });
    try {
      await eventually('the 25 clicks flushed at shutdown', async () => seen.length >= 25, 30_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(seen).toEqual(Array(25).fill(code));
    } finally {
      await consumer.disconnect();
    }
  });
});
