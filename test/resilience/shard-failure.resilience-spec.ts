import { routerOf, RingVersion } from '@shortlink/sharding-domain';
import { App, CreatedLink, eventually, keepAliveAgent, latency, pooled, Reply, send, startApp, steadyLoad, tally } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { SERVER_SECRETS } from '../e2e/support';
import { API_KEY, createLinks, Outages, stack, stackPid } from './support';
import { currentRing, instanceOf } from './reshard-support';

const tallyOf = (values: readonly string[]) => values.reduce<Record<string, number>>((t, v) => ((t[v] = (t[v] ?? 0) + 1), t), {});

/** The PID of a MariaDB instance. */
const mariadbPid = (instance: 'mysql-a' | 'mysql-b'): number =>
  stackPid(instance, (cmdline) => /mariadbd|mysqld/.test(cmdline) && cmdline.includes(`/${instance}/`));

jest.setTimeout(180_000);

/**
 * Failure containment on the real stack: one MariaDB instance (mysql-b: shards s2 and
 * s3; the meta database stays up on mysql-a) is stopped while redirects and creates run. Only the
 * links on its shards fail, with 503 SHARD_UNAVAILABLE + Retry-After within SHARD_TIMEOUT_MS; the
 * other shards answer every request; cached links keep redirecting; generated codes that would land
 * on a dead shard are chosen again (docs/design.md, "Failure containment"). mysql-b is started again
 * in the finally, and once more in afterAll as a net.
 */
describe('one MariaDB instance down', () => {
  const DOMAIN = 'containment.shortlink.test';
  // The bound under test. Generous for a shared 2-core machine, where MariaDB or the app can stall
  // for a second or more; still far below a connect timeout (5 s) or a hung TCP read (minutes).
  const TIMEOUT_MS = 2000;
  const SLACK_MS = 1000;
  const outages = new Outages();
  const measured: Record<string, unknown> = {};
  let env: Record<string, string>;
  let generation: App;
  let cached: App;
  let uncached: App;
  let ring: RingVersion;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', 'STACK_SCRIPT', 'STACK_MYSQL_PORT_A']) requireEnv(name);
    await stack('status');
    env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'clickhouse',
      LOG_LEVEL: 'error',
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      ...SERVER_SECRETS,
      SHORTLINK_DEFAULT_DOMAIN: DOMAIN,
      SHORTLINK_PUBLIC_BASE_URL: `http://${DOMAIN}`,
      SHARD_TIMEOUT_MS: String(TIMEOUT_MS),
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    };
    generation = await startApp('generation', env);
    // The uncached redirect reads a shard on every request. Its bulkhead is sized so that a stall of
    // the shared machine (a second without CPU) does not exhaust it: the test is about shards, and
    // the per-shard share of the permits has a unit test (redirect-pipeline.spec.ts).
    [cached, uncached] = await Promise.all([
      startApp('redirect', env),
      startApp('redirect', { ...env, REDIRECT_L1_ENABLED: 'false', REDIRECT_REDIS_ENABLED: 'false', DB_CONCURRENCY: '128' }),
    ]);
    ring = (await currentRing())!;
  });

  afterAll(async () => {
    const errors: unknown[] = [];
    await Promise.all([generation, cached, uncached].map((a) => a?.stop()));
    await outages.restoreAll().catch((e) => errors.push(e));
    await stack('status').catch((e) => errors.push(e));
    process.stdout.write(`\nshard failure measurements: ${JSON.stringify({ ...measured, stackTimingsMs: outages.timings }, null, 2)}\n`);
    if (errors.length) throw errors[0];
  }, 120_000);

  it('mysql-b stopped under load: its links get 503 SHARD_UNAVAILABLE + Retry-After fast, the others 100 %, cached links still redirect, creates go to live shards', async () => {
    const router = routerOf(ring.spec);
    const dead = new Set(ring.spec.shards.map((s) => s.name).filter((s) => instanceOf(s) === 'mysql-b'));
    expect(dead.size).toBeGreaterThan(0);
    const links = await createLinks(generation.base, 240, `containment-${Date.now().toString(36)}`, 16);
    const onDead = (l: CreatedLink) => dead.has(router.shardFor(l.code));
    const warm = [...links.filter(onDead).slice(0, 20), ...links.filter((l) => !onDead(l)).slice(0, 20)];
    const agent = keepAliveAgent();
    const isRedirectTo = (r: Reply, l: CreatedLink) => r.status === 302 && r.location === l.url;
    // An alias that can only live on a dead shard: it cannot be moved elsewhere.
    let alias = '';
    for (let i = 0; !alias; i++) if (dead.has(router.shardFor(`dead-alias-${i}`))) alias = `dead-alias-${i}`;
    try {
      for (const l of warm) expect(isRedirectTo(await send(agent, cached.base, `/${l.code}`), l)).toBe(true);

      await outages.stop('mysql-b');
      const outageAt = Date.now();
      const post = (body: object) =>
        fetch(`${generation.base}/api/v1/links`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(20_000),
        }).then(async (r) => ({
          status: r.status,
          retryAfter: r.headers.get('retry-after'),
          body: (await r.json()) as { code?: string; domain?: string },
        }));
      const [uncachedReplies, cachedReplies, creates] = await Promise.all([
        steadyLoad(150, 8000, (i) => send(agent, uncached.base, `/${links[i % links.length].code}`, 'GET', 5000)),
        pooled(warm.length * 5, 4, (i) => send(agent, cached.base, `/${warm[i % warm.length].code}`, 'GET', 5000)),
        pooled(40, 4, (i) => post({ url: `https://example.com/containment/created/${i}` }), 60_000),
      ]);
      const aliasReply = await post({ url: 'https://example.com/containment/alias', alias });

      const live = uncachedReplies.filter((_, i) => !onDead(links[i % links.length]));
      const down = uncachedReplies.filter((_, i) => onDead(links[i % links.length]));
      const createdOn = creates.filter((c) => c.status === 201).map((c) => router.shardFor(String(c.body.code)));
      measured.outage = {
        deadShards: [...dead],
        liveShardReplies: tally(live),
        deadShardReplies: tally(down),
        deadShardLatencyMs: latency(down),
        liveShardLatencyMs: latency(live),
        cachedLinks: tally(cachedReplies),
        creates: tally(creates.map((c) => ({ status: c.status }) as Reply)),
        createdOn: tallyOf(createdOn),
        aliasOnDeadShard: { status: aliasReply.status, code: aliasReply.body.code, retryAfter: aliasReply.retryAfter },
      };
      // The other shards: every request answered.
      expect(live.length).toBeGreaterThan(100);
      const liveFailures = uncachedReplies
        .map((r, i) => ({ i, ok: isRedirectTo(r, links[i % links.length]), status: r.status, ms: r.ms, error: r.error, body: r.body.slice(0, 160) }))
        .filter((r) => !onDead(links[r.i % links.length]) && !r.ok);
      expect(liveFailures).toEqual([]);
      // The dead shards: 503 SHARD_UNAVAILABLE with Retry-After, within the shard timeout.
      expect(down.length).toBeGreaterThan(100);
      expect(tally(down)).toEqual({ 503: down.length });
      for (const r of down) {
        expect(r.retryAfter).toMatch(/^\d+$/);
        expect(JSON.parse(r.body)).toMatchObject({ status: 503, code: 'SHARD_UNAVAILABLE' });
      }
      expect(latency(uncachedReplies).max).toBeLessThanOrEqual(TIMEOUT_MS + SLACK_MS);
      // Cached links of either shard keep redirecting.
      cachedReplies.forEach((r, i) => expect({ i, ok: isRedirectTo(r, warm[i % warm.length]) }).toEqual({ i, ok: true }));
      // Creates: all made, none on a dead shard; an alias that can only live there: 503 + Retry-After.
      expect(tally(creates.map((c) => ({ status: c.status }) as Reply))).toEqual({ 201: 40 });
      expect(createdOn.filter((s) => dead.has(s))).toEqual([]);
      expect(aliasReply).toMatchObject({ status: 503, body: { code: 'SHARD_UNAVAILABLE' } });
      expect(aliasReply.retryAfter).toMatch(/^\d+$/);

      await outages.start('mysql-b');
      const back = Date.now();
      await eventually(
        'links on the restarted shards to redirect again',
        async () => {
          const round = await Promise.all(
            links
              .filter(onDead)
              .slice(0, 20)
              .map((l) => send(agent, uncached.base, `/${l.code}`)),
          );
          return round.every((r, i) => isRedirectTo(r, links.filter(onDead)[i]));
        },
        30_000,
        250,
      );
      measured.recovery = { outageMs: back - outageAt, redirectingAgainAfterMs: Date.now() - back };
    } finally {
      agent.destroy();
      await outages.restoreAll();
    }
  });

  it('mysql-b hung (SIGSTOP) under load: no request waits longer than SHARD_TIMEOUT_MS, the other shards answer every request', async () => {
    const router = routerOf(ring.spec);
    const dead = new Set(ring.spec.shards.map((s) => s.name).filter((s) => instanceOf(s) === 'mysql-b'));
    const links = await createLinks(generation.base, 120, `hung-${Date.now().toString(36)}`, 16);
    const onDead = (l: CreatedLink) => dead.has(router.shardFor(l.code));
    const agent = keepAliveAgent();
    const pid = mariadbPid('mysql-b');
    let stopped = false;
    try {
      // Warm the pool's connections to mysql-b, so that they hang mid-query rather than at connect.
      for (const l of links.filter(onDead).slice(0, 5)) await send(agent, uncached.base, `/${l.code}`);
      process.kill(pid, 'SIGSTOP');
      stopped = true;
      const replies = await steadyLoad(60, 6000, (i) => send(agent, uncached.base, `/${links[i % links.length].code}`, 'GET', 5000));
      process.kill(pid, 'SIGCONT');
      stopped = false;
      const live = replies.filter((_, i) => !onDead(links[i % links.length]));
      const down = replies.filter((_, i) => onDead(links[i % links.length]));
      measured.hung = { liveShardReplies: tally(live), deadShardReplies: tally(down), deadShardLatencyMs: latency(down), liveShardLatencyMs: latency(live) };
      replies.forEach((r, i) => {
        const l = links[i % links.length];
        if (!onDead(l)) expect({ i, status: r.status, location: r.location }).toEqual({ i, status: 302, location: l.url });
      });
      expect(tally(down)).toEqual({ 503: down.length });
      expect(latency(replies).max).toBeLessThanOrEqual(TIMEOUT_MS + SLACK_MS);
      await eventually(
        'links on the resumed server to redirect again',
        async () => {
          const round = await Promise.all(
            links
              .filter(onDead)
              .slice(0, 10)
              .map((l) => send(agent, uncached.base, `/${l.code}`)),
          );
          return round.every((r) => r.status === 302);
        },
        30_000,
        250,
      );
    } finally {
      if (stopped) process.kill(pid, 'SIGCONT');
      agent.destroy();
    }
  });
});
