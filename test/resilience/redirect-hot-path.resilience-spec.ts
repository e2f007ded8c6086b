import { randomInt } from 'crypto';
import { execFile } from 'child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Kafka, logLevel } from 'kafkajs';
import { createConnection } from 'mysql2/promise';
import { ensureClickTopic } from '@shortlink/bus';
import { BLOOM_LOCK_TTL_MS } from '@shortlink/read-path';
import { requireEnv } from '@shortlink/testing';
import {
  App,
  CreatedLink,
  eventually,
  keepAliveAgent,
  latency,
  metric,
  metricsOf,
  pooled,
  REPO_ROOT as ROOT,
  Reply,
  send,
  sleep,
  startApp,
  steadyLoad,
  tally,
} from '@shortlink/harness';
import { SERVER_SECRETS } from '../e2e/support';
import {
  API_KEY,
  allLookups,
  bloomBuilt,
  clusterNodes,
  createLinks,
  dbQueries,
  keySlot,
  lookups,
  nodeCommand,
  Outages,
  redisNodePid,
  stack,
  sumOver,
  withCluster,
} from './support';

/**
 * The redirect hot path under failure, on the real stack of deploy/local/stack.sh
 * (Redis Cluster, two MariaDB servers with four shards, Kafka): every scenario starts its own
 * redirect processes, stops or kills real servers, and measures with the app's own Prometheus
 * counters. Loopback only; every loop is bounded by a count and a deadline; every component a
 * test stops is started again in its finally (and once more in afterAll as a net).
 */
describe('redirect hot path on the real stack', () => {
  const RUN = Date.now().toString(36);
  const DOMAIN = 'resilience.shortlink.test';
  const TOPIC = `shortlink.clicks.resilience.${RUN}`;
  const outages = new Outages();
  const apps: App[] = [];
  const measured: Record<string, unknown> = {};
  const tmp = mkdtempSync(join(tmpdir(), 'shortlink-resilience-'));
  let generation: App;
  let common: Record<string, string>;
  let snapshots = 0;
  const t0 = Date.now();

  const startRedirect = async (env: Record<string, string> = {}, wait: 'health' | 'listening' = 'health') => {
    const app = await startApp('redirect', { ...common, SNAPSHOT_FILE: join(tmp, `snapshot-${++snapshots}.json`), ...env }, { wait });
    apps.push(app);
    return app;
  };
  const stopApp = async (app: App | undefined) => {
    if (!app) return;
    await app.stop();
    apps.splice(apps.indexOf(app), 1);
  };
  const isRedirectTo = (r: Reply, link: CreatedLink) => r.status === 302 && r.location === link.url;
  const failures = (replies: readonly Reply[], linkOf: (i: number) => CreatedLink) =>
    replies
      .map((r, i) => ({ i, r, link: linkOf(i) }))
      .filter(({ r, link }) => !isRedirectTo(r, link))
      .map(({ i, r, link }) => ({ i, status: r.status, location: r.location, expected: link.url, error: r.error, ms: r.ms, body: r.body.slice(0, 200) }));

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', 'CLICKHOUSE_URL', 'STACK_SCRIPT', 'STACK_PIDS_DIR'])
      requireEnv(name);
    await stack('status').catch((e) => {
      throw new Error(`the real stack is not healthy; run 'bash deploy/local/stack.sh up' first\n${(e as Error).message}`);
    });
    common = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'clickhouse',
      LOG_LEVEL: 'warn',
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      ...SERVER_SECRETS,
      // Every process must agree on the links' domain whatever its port (the default is localhost:<REDIRECT_PORT>).
      SHORTLINK_DEFAULT_DOMAIN: DOMAIN,
      SHORTLINK_PUBLIC_BASE_URL: `http://${DOMAIN}`,
      KAFKA_CLICK_TOPIC: TOPIC,
      KAFKA_CONSUMER_GROUP: `${TOPIC}.analytics`,
      CLICKHOUSE_DATABASE: `shortlink_resilience_${RUN}`,
    };
    // The redirect's producer does not create topics (the analytics consumer does): create it here.
    await ensureClickTopic(requireEnv('KAFKA_BROKERS').split(','), TOPIC, 3);
    generation = await startApp('generation', common);
  });

  afterAll(async () => {
    const errors: unknown[] = [];
    await Promise.all(apps.splice(0).map((a) => a.stop()));
    await generation?.stop();
    await outages.restoreAll().catch((e) => errors.push(e));
    await stack('status').catch((e) => errors.push(e));
    // Redis came back empty after the full outages: leave the Bloom filter built, as found.
    // A clean-up of the shared stack, not a check: a failure is reported, and the next run's
    // `eventually('the Bloom filter to be built')` waits for the redirects to rebuild it.
    if (!(await bloomBuilt().catch(() => true)))
      await rebuildBloom().catch((e) => process.stderr.write(`resilience clean-up: the Bloom filter was not rebuilt: ${(e as Error).message}\n`));
    rmSync(tmp, { recursive: true, force: true });
    if (process.env.KAFKA_BROKERS) {
      const admin = new Kafka({ brokers: process.env.KAFKA_BROKERS.split(','), clientId: 'resilience-cleanup', logLevel: logLevel.NOTHING }).admin();
      await admin
        .connect()
        .then(() => admin.deleteTopics({ topics: [TOPIC], timeout: 10_000 }))
        .catch(() => undefined)
        .finally(() => admin.disconnect());
    }
    measured.totalSeconds = Math.round((Date.now() - t0) / 100) / 10;
    measured.stackTimingsMs = outages.timings;
    process.stdout.write(`\nresilience measurements: ${JSON.stringify(measured, null, 2)}\n`);
    if (errors.length) throw errors[0];
  }, 240_000);

  const rebuildBloomOnce = (...args: string[]) =>
    new Promise<void>((resolve, reject) =>
      execFile(
        process.execPath,
        ['-r', './tools/register.js', 'tools/cli/src/bloom-rebuild.ts', ...args],
        { cwd: ROOT, env: { ...process.env, ...common }, timeout: 60_000 },
        (e, out, err) => (e ? reject(new Error(`bloom rebuild: ${e.message}\n${out}${err}`)) : resolve()),
      ),
    );

  /**
   * `bloom:rebuild` as an operator runs it: "busy" means a redirect is changing the layout (its boot
   * check, or one stopped mid-change whose lock runs out within BLOOM_LOCK_TTL_MS), so try again.
   */
  const rebuildBloom = async (...args: string[]) => {
    const until = Date.now() + 3 * BLOOM_LOCK_TTL_MS;
    for (;;) {
      try {
        return await rebuildBloomOnce(...args);
      } catch (e) {
        if (!String((e as Error).message).includes('"result":"busy"') || Date.now() > until) throw e;
        await sleep(1000);
      }
    }
  };

  // ------------------------------------------------------------------------------- 1
  it('stampede: 1000 concurrent GETs of one cold link over two instances all redirect and query the database exactly once', async () => {
    const [a, b] = await Promise.all([startRedirect(), startRedirect()]);
    const agent = keepAliveAgent();
    try {
      const [link] = await createLinks(generation.base, 1, 'stampede');
      await withCluster((c) => c.del(link.key));
      expect(await withCluster((c) => c.exists(link.key))).toBe(0);
      const admins = [a.admin, b.admin];
      const before = await sumOver(admins, dbQueries);

      const replies = await Promise.all(Array.from({ length: 1000 }, (_, i) => send(agent, [a.base, b.base][i % 2], `/${link.code}`, 'GET', 15_000)));

      const after = await sumOver(admins, dbQueries);
      measured.stampede = { replies: tally(replies), latencyMs: latency(replies), dbQueries: after - before };
      expect(tally(replies)).toEqual({ 302: 1000 });
      expect(failures(replies, () => link)).toEqual([]);
      expect(after - before).toBe(1);
      expect(JSON.parse((await withCluster((c) => c.get(link.key)))!)).toMatchObject({ targetUrl: link.url });
    } finally {
      agent.destroy();
      await Promise.all([stopApp(a), stopApp(b)]);
    }
  });

  // ------------------------------------------------------------------------------- 2
  it('penetration: 10 000 random unknown codes are all 404 and at most 2 % of them reach the database (the Bloom filter answers no)', async () => {
    const app = await startRedirect({ RATE_LIMIT_PER_IP_PER_MINUTE: '0', RATE_LIMIT_GLOBAL_PER_SECOND: '0' });
    const agent = keepAliveAgent();
    try {
      // The app builds the filter at boot when a partition lacks its sentinel.
      await eventually('the Bloom filter to be built (bit 0 of every partition)', () => bloomBuilt(), 60_000, 250);
      const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
      const codes = new Set<string>();
      while (codes.size < 10_000) codes.add(Array.from({ length: 7 }, () => alphabet[randomInt(62)]).join(''));
      const list = [...codes];
      const before = await metricsOf(app.admin);

      const replies = await pooled(list.length, 200, (i) => send(agent, app.base, `/${list[i]}`), 90_000);

      const after = await metricsOf(app.admin);
      const db = dbQueries(after) - dbQueries(before);
      const rejected = lookups(after, 'bloom_reject') - lookups(before, 'bloom_reject');
      measured.penetration = {
        replies: tally(replies),
        latencyMs: latency(replies),
        dbQueries: db,
        bloomRejects: rejected,
        dbMiss: lookups(after, 'db_miss') - lookups(before, 'db_miss'),
      };
      expect(tally(replies)).toEqual({ 404: 10_000 });
      expect(db).toBeLessThanOrEqual(200);
      expect(rejected).toBeGreaterThanOrEqual(10_000 - 200);
    } finally {
      agent.destroy();
      await stopApp(app);
    }
  });

  // ------------------------------------------------------------------------------- 2b
  it('Bloom resize: a running redirect picks up the layout of `bloom:rebuild --expected=N` without a restart; under traffic no link 404s and unknown codes stay rejected', async () => {
    // L1 off: every read of a link whose Redis entry was dropped goes through the filter.
    const app = await startRedirect({ RATE_LIMIT_PER_IP_PER_MINUTE: '0', RATE_LIMIT_GLOBAL_PER_SECOND: '0', REDIRECT_L1_ENABLED: 'false' });
    const agent = keepAliveAgent();
    const gauge = async (name: string) => metric(await metricsOf(app.admin), name);
    let stop = false;
    try {
      await eventually('the Bloom filter to be built', () => bloomBuilt(), 60_000, 250);
      const links = await createLinks(generation.base, 100, 'bloom-resize');
      const capacity = await gauge('shortlink_redirect_bloom_capacity_links');
      const started = await gauge('shortlink_process_process_start_time_seconds');
      const expected = Math.ceil((capacity * 3) / 1.5); // a new generation of 3 × the capacity in use
      const before = await metricsOf(app.admin);
      // Traffic all through the rebuild: the links (their Redis entry dropped, so each read checks the filter) and unknown codes.
      const replies: Array<{ known: boolean; status: number }> = [];
      const traffic = (async () => {
        for (let i = 0; !stop && i < 20_000; i++) {
          const known = i % 2 === 0;
          const path = known ? `/${links[i % links.length].code}` : `/zr${randomInt(1e9).toString(36).padStart(6, '0')}`;
          const r = await send(agent, app.base, path);
          replies.push({ known, status: r.status });
          if (known) await withCluster((c) => c.del(links[i % links.length].key)).catch(() => undefined);
        }
      })();
      await rebuildBloom(`--expected=${expected}`);
      const resized = await eventually(
        'the running redirect to read the new layout',
        async () => ((await gauge('shortlink_redirect_bloom_capacity_links')) >= capacity * 2 ? gauge('shortlink_redirect_bloom_capacity_links') : undefined),
        10_000,
        100,
      );
      stop = true;
      await traffic;
      const after = await metricsOf(app.admin);
      measured.bloomResize = {
        capacityBefore: capacity,
        capacityAfter: resized,
        replies: replies.length,
        knownNot302: replies.filter((r) => r.known && r.status !== 302).length,
        unknownNot404: replies.filter((r) => !r.known && r.status !== 404).length,
        bloomRejects: lookups(after, 'bloom_reject') - lookups(before, 'bloom_reject'),
        dbMiss: lookups(after, 'db_miss') - lookups(before, 'db_miss'),
      };
      expect(await gauge('shortlink_redirect_bloom_generations')).toBe(1);
      expect(await gauge('shortlink_process_process_start_time_seconds')).toBe(started);
      expect(replies.filter((r) => r.known && r.status !== 302)).toEqual([]);
      expect(replies.filter((r) => !r.known && r.status !== 404)).toEqual([]);
      const unknown = replies.filter((r) => !r.known).length;
      expect(lookups(after, 'bloom_reject') - lookups(before, 'bloom_reject')).toBeGreaterThanOrEqual(unknown * 0.9);
    } finally {
      stop = true;
      agent.destroy();
      await stopApp(app);
      // The stack's filter sized from its links again, as found.
      await rebuildBloom();
    }
  }, 180_000);

  // ------------------------------------------------------------------------------- 7
  it('TTL policy: a cold write lives 1800-2100 s, a hot key (50 reads in 60 s) is rewritten with 7200-7800 s; the lru policy writes the maximum TTL less up to a tenth', async () => {
    // A maximum above the hot TTL, which CACHE_MAX_TTL_SECONDS (1 h by default) would cap.
    const ttl = await startRedirect({ CACHE_POLICY: 'ttl', REDIRECT_L1_ENABLED: 'false', CACHE_MAX_TTL_SECONDS: '8000' });
    const lru = await startRedirect({ REDIRECT_L1_ENABLED: 'false' });
    const agent = keepAliveAgent();
    try {
      const [link, other] = await createLinks(generation.base, 2, 'ttl');
      await withCluster((c) => Promise.all([c.del(link.key), c.del(other.key)]));

      expect(isRedirectTo(await send(agent, ttl.base, `/${link.code}`), link)).toBe(true);
      const cold = await withCluster((c) => c.pttl(link.key));
      // base 1800 s + jitter [0, 300) s, read back a few ms after the write
      expect(cold).toBeGreaterThan(1800_000 - 10_000);
      expect(cold).toBeLessThan(2100_000);

      const started = Date.now();
      const reads = await pooled(55, 5, () => send(agent, ttl.base, `/${link.code}`));
      expect(Date.now() - started).toBeLessThan(30_000); // well inside the 60 s window
      expect(reads.every((r) => isRedirectTo(r, link))).toBe(true);
      await withCluster((c) => c.del(link.key));
      expect(isRedirectTo(await send(agent, ttl.base, `/${link.code}`), link)).toBe(true);
      const hot = await withCluster((c) => c.pttl(link.key));
      expect(hot).toBeGreaterThan(7200_000 - 10_000);
      expect(hot).toBeLessThan(7800_000);

      expect(isRedirectTo(await send(agent, lru.base, `/${other.code}`), other)).toBe(true);
      const none = await withCluster((c) => c.pttl(other.key));
      measured.ttlPolicy = { coldPttlMs: cold, hotPttlMs: hot, lruPttl: none };
      // CACHE_MAX_TTL_SECONDS (3600 s) less up to a tenth (docs/design.md, "Keys in the shared cache").
      expect(none).toBeGreaterThan(3240_000 - 10_000);
      expect(none).toBeLessThanOrEqual(3600_000);
    } finally {
      agent.destroy();
      await Promise.all([stopApp(ttl), stopApp(lru)]);
    }
  });

  // ------------------------------------------------------------------------------- 8
  it('HEAD: answered with 302 + Location and counted as a lookup, but never buffered as a click (a GET is)', async () => {
    // The buffer never flushes during the test, so its size is exactly the clicks pushed.
    const app = await startRedirect({ CLICK_BUFFER_FLUSH_MS: '3600000', CLICK_BUFFER_BATCH_SIZE: '1000000' });
    const agent = keepAliveAgent();
    try {
      const [link] = await createLinks(generation.base, 1, 'head');
      const m0 = await metricsOf(app.admin);
      expect(metric(m0, 'shortlink_click_buffer_size')).toBe(0);

      const heads = await pooled(10, 2, () => send(agent, app.base, `/${link.code}`, 'HEAD'));
      expect(heads.map((r) => [r.status, r.location, r.body])).toEqual(Array(10).fill([302, link.url, '']));
      const m1 = await metricsOf(app.admin);
      expect(allLookups(m1) - allLookups(m0)).toBe(10);
      expect(metric(m1, 'shortlink_click_buffer_size')).toBe(0);
      expect(metric(m1, 'shortlink_click_events_dropped_total')).toBe(0);

      expect(isRedirectTo(await send(agent, app.base, `/${link.code}`), link)).toBe(true);
      const m2 = await metricsOf(app.admin);
      measured.head = {
        lookupsAfter10Head: allLookups(m1) - allLookups(m0),
        bufferAfterHead: metric(m1, 'shortlink_click_buffer_size'),
        bufferAfterGet: metric(m2, 'shortlink_click_buffer_size'),
      };
      expect(metric(m2, 'shortlink_click_buffer_size')).toBe(1);
    } finally {
      agent.destroy();
      await stopApp(app);
    }
  });

  // ------------------------------------------------------------------------------- 3
  it('Redis master SIGKILL under 200 req/s (L1 off): 0 failed redirects through the failover; reads come from Redis again afterwards', async () => {
    const app = await startRedirect({ REDIRECT_L1_ENABLED: 'false' });
    const agent = keepAliveAgent();
    let victim: number | null = null;
    try {
      const links = await createLinks(generation.base, 20, 'sigkill');
      for (const l of links) expect(isRedirectTo(await send(agent, app.base, `/${l.code}`), l)).toBe(true);
      expect(await withCluster((c) => Promise.all(links.map((l) => c.exists(l.key))))).toEqual(Array(20).fill(1));

      // The master that owns the most of these keys, and its replica.
      const nodes = await clusterNodes();
      const masters = nodes.filter((n) => n.flags.includes('master') && !n.flags.includes('fail') && n.slots.length > 0);
      const slots = await Promise.all(links.map((l) => keySlot(l.key)));
      const ownerOf = (slot: number) => masters.find((m) => m.slots.some(([a, b]) => slot >= a && slot <= b))!;
      const perMaster = new Map<number, number>();
      for (const s of slots) perMaster.set(ownerOf(s).port, (perMaster.get(ownerOf(s).port) ?? 0) + 1);
      const [victimPort, victimKeys] = [...perMaster].sort((x, y) => y[1] - x[1])[0];
      const master = masters.find((m) => m.port === victimPort)!;
      const replica = nodes.find((n) => n.masterId === master.id && !n.flags.includes('fail'));
      expect(replica).toBeDefined();
      const pid = redisNodePid(victimPort);

      const before = await metricsOf(app.admin);
      let killedAt = 0;
      const killer = sleep(3000).then(() => {
        victim = victimPort;
        outages.killed(`redis-node-${victimPort}`);
        process.kill(pid, 'SIGKILL');
        killedAt = Date.now();
      });
      const replies = await steadyLoad(200, 15_000, (i) => send(agent, app.base, `/${links[i % links.length].code}`, 'GET', 5000));
      await killer;
      const after = await metricsOf(app.admin);

      // The replica took over the victim's slots.
      const now = await clusterNodes();
      const promoted = now.find((n) => n.id === replica!.id)!;
      const window = replies.filter((r) => r.startedAt >= killedAt && r.startedAt < killedAt + 6000);
      measured.redisMasterSigkill = {
        victim: victimPort,
        keysOnVictim: victimKeys,
        promoted: promoted.port,
        requests: replies.length,
        replies: tally(replies),
        latencyMs: latency(replies),
        failoverWindowLatencyMs: latency(window),
        dbQueries: dbQueries(after) - dbQueries(before),
        breakerState: metric(after, 'shortlink_redirect_breaker_state'),
        fromRedis: lookups(after, 'redis') - lookups(before, 'redis'),
        fromDb: lookups(after, 'db') - lookups(before, 'db'),
      };
      expect(replies).toHaveLength(3000);
      expect(failures(replies, (i) => links[i % links.length])).toEqual([]);
      expect(promoted.flags).toContain('master');
      expect(promoted.slots).toEqual(master.slots);

      // Recovery: a whole round over the 20 links is answered by Redis, none by the shards.
      const recovery: Reply[] = [];
      await eventually(
        'every link to be read from Redis again',
        async () => {
          const m0 = await metricsOf(app.admin);
          const round = await Promise.all(links.map((l) => send(agent, app.base, `/${l.code}`)));
          recovery.push(...round);
          const m1 = await metricsOf(app.admin);
          return lookups(m1, 'redis') - lookups(m0, 'redis') === links.length && dbQueries(m1) === dbQueries(m0);
        },
        20_000,
        250,
      );
      expect(failures(recovery, (i) => links[i % links.length])).toEqual([]);

      await outages.start(`redis-node-${victimPort}`);
      expect(await nodeCommand(victimPort, 'ROLE')).toMatch(/^slave,/);
    } finally {
      agent.destroy();
      await stopApp(app);
      if (victim !== null) await outages.restoreAll();
    }
  });

  // ------------------------------------------------------------------------------- 4
  // Guards the fix for lookups that hung in ioredis' offline queue with every node down
  // (RedisClusterStore now bounds each command, so the breaker opens and the shards answer).
  it('all Redis nodes stopped: existing links redirect from the shards (breaker open); a burst of 200 cold codes runs at most DB_CONCURRENCY=4 queries at once, the rest wait DB_QUEUE_WAIT_MS and then get 503 + Retry-After; the cache is used again once Redis is back', async () => {
    // The burst's admitted queries are held in MariaDB by locks for up to 8 s (below), longer than a
    // visit's deadline (REQUEST_DEADLINE_REDIRECT_MS, 1.5 s), which would answer them 503 DEADLINE_EXCEEDED:
    // what is measured here is the bulkhead (DB_CONCURRENCY, DB_QUEUE_WAIT_MS), so the deadline is out of its way.
    const app = await startRedirect({ DB_CONCURRENCY: '4', REDIRECT_L1_ENABLED: 'false', REQUEST_DEADLINE_REDIRECT_MS: '30000' });
    const agent = keepAliveAgent();
    const shardLocks: Array<{ end(): Promise<void> }> = [];
    try {
      const warm = await createLinks(generation.base, 5, 'redis-down-warm');
      const burst = await createLinks(generation.base, 200, 'redis-down-burst', 16);
      for (const l of warm) expect(isRedirectTo(await send(agent, app.base, `/${l.code}`), l)).toBe(true);

      await outages.stop('redis');
      const outageStarted = Date.now();

      // Existing links: from the shards, through the open breaker and the bulkhead.
      // One at a time (5 distinct links at once would exceed the bulkhead of 4); stop at the first failure.
      const during: Reply[] = [];
      for (let i = 0; i < 3 * warm.length; i++) {
        const r = await send(agent, app.base, `/${warm[i % warm.length].code}`, 'GET', 5000);
        during.push(r);
        if (!isRedirectTo(r, warm[i % warm.length])) break;
      }
      const mDuring = await metricsOf(app.admin);
      expect(failures(during, (i) => warm[i % warm.length])).toEqual([]);
      expect(metric(mDuring, 'shortlink_redirect_breaker_state')).toBe(2);

      // The burst, with the links tables of all four shards write-locked by this test: whatever
      // the bulkhead lets through stays in MariaDB, where the processlist shows it.
      const servers = shardServers();
      for (const s of servers) {
        const conn = await createConnection(s.url);
        shardLocks.push(conn);
        await conn.query(`LOCK TABLES ${s.databases.map((d) => `\`${d}\`.links WRITE`).join(', ')}`);
      }
      const probes = await Promise.all(servers.map((s) => createConnection(s.url)));
      shardLocks.push(...probes);
      const m0 = await metricsOf(app.admin);
      let answered = 0;
      const pending = burst.map((l) => send(agent, app.base, `/${l.code}`, 'GET', 20_000).then((r) => (answered++, r)));
      let maxInDb = 0;
      const samples: number[] = [];
      const sampleUntil = Date.now() + 8000;
      let settledSince = 0;
      for (let k = 0; k < 400 && Date.now() < sampleUntil; k++) {
        const n = await selectsInMariaDb(probes, app.proc.pid);
        samples.push(n);
        maxInDb = Math.max(maxInDb, n);
        // every request is either answered (503) or parked in the database: wait 500 ms more
        if (answered + n >= burst.length) settledSince ||= Date.now();
        if (settledSince && Date.now() - settledSince > 500) break;
        await sleep(25);
      }
      const answeredWhileLocked = answered;
      for (const c of shardLocks.splice(0)) await c.end(); // UNLOCK: the parked queries finish
      const replies = await Promise.all(pending);
      const m1 = await metricsOf(app.admin);

      const ok = replies.filter((r) => r.status === 302);
      const refused = replies.filter((r) => r.status === 503);
      measured.redisDown = {
        existingLinks: tally(during),
        existingLatencyMs: latency(during),
        breakerState: metric(mDuring, 'shortlink_redirect_breaker_state'),
        burst: tally(replies),
        maxConcurrentQueriesInMariaDb: maxInDb,
        answeredWhileLocked,
        processlistSamples: samples.length,
        burstDbQueries: dbQueries(m1) - dbQueries(m0),
        refusedLatencyMs: latency(refused),
      };
      expect(replies.filter((r) => r.status !== 302 && r.status !== 503).map((r) => [r.status, r.error])).toEqual([]);
      expect(failures(replies, (i) => burst[i]).filter((f) => f.status === 302)).toEqual([]);
      for (const r of refused) {
        expect(r.retryAfter).toMatch(/^\d+$/);
        expect(r.contentType).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(r.body)).toMatchObject({ status: 503 });
      }
      expect(maxInDb).toBeLessThanOrEqual(4);
      expect(maxInDb).toBeGreaterThanOrEqual(1); // the measurement sees the admitted ones
      expect(dbQueries(m1) - dbQueries(m0)).toBe(ok.length);
      expect(ok.length).toBeLessThanOrEqual(4);
      expect(refused.length).toBe(burst.length - ok.length);
      expect(refused.length).toBeGreaterThan(0);

      // Redis back: within a bounded time a round over the warm links is answered by Redis only.
      await outages.start('redis');
      const back = Date.now();
      const after: Reply[] = [];
      await eventually(
        'the warm links to be read from Redis again',
        async () => {
          const a = await metricsOf(app.admin);
          for (const l of warm) after.push(await send(agent, app.base, `/${l.code}`));
          const b = await metricsOf(app.admin);
          return lookups(b, 'redis') - lookups(a, 'redis') === warm.length && dbQueries(b) === dbQueries(a);
        },
        30_000,
        250,
      );
      (measured.redisDown as Record<string, unknown>).cacheUsedAgainAfterMs = Date.now() - back;
      (measured.redisDown as Record<string, unknown>).outageMs = back - outageStarted;
      expect(failures(after, (i) => warm[i % warm.length])).toEqual([]);
      expect(metric(await metricsOf(app.admin), 'shortlink_redirect_breaker_state')).toBe(0);
    } finally {
      for (const c of shardLocks) await c.end().catch(() => undefined);
      agent.destroy();
      await stopApp(app);
      await outages.restoreAll();
    }
  });

  // ------------------------------------------------------------------------------- 5
  describe('Redis and both MariaDB servers stopped (hot link in L1 and in the snapshot file)', () => {
    const L1_TTL_MS = 10_000;
    const snapshotFile = join(tmp, 'snapshot-shared.json');
    const agent = keepAliveAgent();
    let app: App;
    let hot: CreatedLink;
    let cold: CreatedLink;
    let coldReadAt = 0;
    let hotAt = 0; // when the hot link was pinned in L1 (its pin keeps that expiry)

    beforeAll(async () => {
      app = await startRedirect({ SNAPSHOT_FILE: snapshotFile, SNAPSHOT_INTERVAL_MS: '500', HOT_THRESHOLD: '5', REDIRECT_L1_TTL_MS: String(L1_TTL_MS) });
      [hot, cold] = await createLinks(generation.base, 2, 'all-down');
      expect(isRedirectTo(await send(agent, app.base, `/${cold.code}`), cold)).toBe(true);
      coldReadAt = Date.now();
      for (let i = 0; i < 6; i++) {
        expect(isRedirectTo(await send(agent, app.base, `/${hot.code}`), hot)).toBe(true);
        if (i === 4) hotAt = Date.now(); // the 5th read makes it hot (HOT_THRESHOLD=5) and pins it
      }
      await eventually(
        'the hot link in the snapshot file',
        async () => {
          if (!existsSync(snapshotFile)) return false;
          const snap = JSON.parse(readFileSync(snapshotFile, 'utf8')) as { entries: Array<{ key: string; link: { targetUrl: string } }> };
          return snap.entries.some((e) => e.key === hot.key && e.link.targetUrl === hot.url) && !snap.entries.some((e) => e.key === cold.key);
        },
        10_000,
        100,
      );
      await outages.stop('redis');
      await outages.stop('mysql-a');
      await outages.stop('mysql-b');
    }, 120_000);

    afterAll(async () => {
      agent.destroy();
      await stopApp(app);
      await outages.restoreAll();
    }, 180_000);

    // A lookup that reaches Redis must fail fast (bounded commands), or the snapshot is never reached.
    it('the running instance serves the hot link from L1, then from the snapshot; a non-hot link fails fast with 503 problem+json + Retry-After', async () => {
      if (Date.now() - hotAt > L1_TTL_MS - 1000)
        throw new Error(
          `setting up the outage took ${Date.now() - hotAt} ms: the hot link's L1 pin (${L1_TTL_MS} ms) is about to expire, nothing left to test from L1`,
        );
      const m0 = await metricsOf(app.admin);
      const first = await send(agent, app.base, `/${hot.code}`);
      const m1 = await metricsOf(app.admin);
      expect(isRedirectTo(first, hot)).toBe(true);
      expect(lookups(m1, 'l1') - lookups(m0, 'l1')).toBe(1);

      // Past the cold link's L1 entry: it has to go to Redis and the shard, both down.
      await sleep(Math.max(0, coldReadAt + L1_TTL_MS + 300 - Date.now()));
      const refused = await send(agent, app.base, `/${cold.code}`, 'GET', 5000);
      expect({ status: refused.status, fast: refused.ms < 3000 }).toEqual({ status: 503, fast: true });
      expect(refused.retryAfter).toMatch(/^\d+$/);
      expect(refused.contentType).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(refused.body)).toMatchObject({ status: 503 });

      // Once the hot link's pin in L1 expired, the snapshot answers.
      const reads: Reply[] = [];
      await eventually(
        'a lookup answered from the snapshot',
        async () => {
          const r = await send(agent, app.base, `/${hot.code}`);
          reads.push(r);
          return lookups(await metricsOf(app.admin), 'snapshot') > lookups(m0, 'snapshot');
        },
        L1_TTL_MS + 10_000,
        250,
      );
      const m2 = await metricsOf(app.admin);
      measured.allDown = {
        hotFirst: { status: first.status, ms: first.ms },
        nonHot: { status: refused.status, ms: refused.ms },
        hotReads: tally(reads),
        hotLatencyMs: latency(reads),
        fromL1: lookups(m2, 'l1') - lookups(m0, 'l1'),
        fromSnapshot: lookups(m2, 'snapshot') - lookups(m0, 'snapshot'),
      };
      expect(failures(reads, () => hot)).toEqual([]);
    });

    // Shards open lazily, so an instance can boot during a database outage and serve its snapshot.
    it('a redirect process started during the outage loads the snapshot file and serves the hot link; a non-hot link gets 503', async () => {
      const fresh = await startRedirect({ SNAPSHOT_FILE: snapshotFile, HOT_THRESHOLD: '5' }, 'listening');
      try {
        const r = await send(agent, fresh.base, `/${hot.code}`);
        expect(isRedirectTo(r, hot)).toBe(true);
        const m = await metricsOf(fresh.admin);
        expect(lookups(m, 'snapshot')).toBe(1);
        const refused = await send(agent, fresh.base, `/${cold.code}`, 'GET', 5000);
        expect({ status: refused.status, fast: refused.ms < 3000 }).toEqual({ status: 503, fast: true });
        expect(refused.retryAfter).toMatch(/^\d+$/);
      } finally {
        await stopApp(fresh);
      }
    });
  });

  // ------------------------------------------------------------------------------- 6
  it('Kafka stopped: 500 redirects all 302 in under 1 s each; the click buffer holds its capacity of 100 and drops the rest; it drains once Kafka is back', async () => {
    const app = await startRedirect({ CLICK_BUFFER_CAPACITY: '100', CLICK_BUFFER_FLUSH_MS: '100' });
    const agent = keepAliveAgent();
    try {
      const [link] = await createLinks(generation.base, 1, 'kafka');
      expect(isRedirectTo(await send(agent, app.base, `/${link.code}`), link)).toBe(true);
      await eventually('the warm-up click to reach Kafka', async () => metric(await metricsOf(app.admin), 'shortlink_click_buffer_size') === 0, 20_000, 100);

      await outages.stop('kafka');
      const m0 = await metricsOf(app.admin);
      const replies = await pooled(500, 20, () => send(agent, app.base, `/${link.code}`, 'GET', 5000));
      const m1 = await metricsOf(app.admin);
      const dropped = metric(m1, 'shortlink_click_events_dropped_total') - metric(m0, 'shortlink_click_events_dropped_total');
      const size = metric(m1, 'shortlink_click_buffer_size');
      measured.kafkaDown = {
        replies: tally(replies),
        latencyMs: latency(replies),
        dropped,
        bufferSize: size,
        sendFailures: metric(m1, 'shortlink_click_send_failures_total'),
      };
      expect(failures(replies, () => link)).toEqual([]);
      expect(latency(replies).max).toBeLessThan(1000);
      expect(size).toBeLessThanOrEqual(100);
      expect(dropped).toBeGreaterThanOrEqual(400 - 5);
      expect(dropped + size).toBeGreaterThanOrEqual(500 - 5); // nothing reached the broker

      await outages.start('kafka');
      const back = Date.now();
      await eventually(
        'the buffered clicks to be sent after Kafka is back',
        async () => metric(await metricsOf(app.admin), 'shortlink_click_buffer_size') === 0,
        60_000,
        250,
      );
      (measured.kafkaDown as Record<string, unknown>).drainedAfterMs = Date.now() - back;
    } finally {
      agent.destroy();
      await stopApp(app);
      await outages.restoreAll();
    }
  });

  /** MariaDB servers of the shards: a URL to connect to and the shard databases on it. */
  function shardServers(): Array<{ url: string; databases: string[] }> {
    const byServer = new Map<string, { url: string; databases: string[] }>();
    for (const part of requireEnv('MYSQL_SHARDS').split(',')) {
      const url = part.slice(part.indexOf('=') + 1);
      const u = new URL(url);
      const server = `${u.hostname}:${u.port}`;
      const entry = byServer.get(server) ?? { url, databases: [] };
      entry.databases.push(u.pathname.slice(1));
      byServer.set(server, entry);
    }
    return [...byServer.values()];
  }

  /**
   * The redirect's link look-ups of this tier's domain inside MariaDB right now (running or waiting on the lock): the
   * processlist's queries whose client port is one of the redirect process's sockets. The generation app reads links
   * by code too (after a create, its jobs), which are not the redirect's bulkhead's to bound.
   */
  async function selectsInMariaDb(probes: ReadonlyArray<Awaited<ReturnType<typeof createConnection>>>, pid: number): Promise<number> {
    const ports = localPortsOf(pid);
    let n = 0;
    for (const conn of probes) {
      const [rows] = await conn.query(
        "SELECT HOST AS host FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND ID <> CONNECTION_ID() AND INFO LIKE ?",
        [`%FROM links%WHERE%domain = '${DOMAIN}'%`],
      );
      n += (rows as Array<{ host: string }>).filter((r) => ports.has(Number(r.host.split(':').pop()))).length;
    }
    return n;
  }

  /** The local TCP ports of a process's sockets (its fds' socket inodes, found in /proc/net/tcp and tcp6). */
  function localPortsOf(pid: number): Set<number> {
    const inodes = new Set<string>();
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (target.startsWith('socket:[')) inodes.add(target.slice(8, -1));
      } catch {
        // closed meanwhile
      }
    }
    const ports = new Set<number>();
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      if (!existsSync(table)) continue;
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        if (cols.length > 9 && inodes.has(cols[9])) ports.add(parseInt(cols[1].split(':').pop()!, 16));
      }
    }
    return ports;
  }
});
