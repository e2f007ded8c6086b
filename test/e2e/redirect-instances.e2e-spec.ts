import { Cluster } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { CacheKeys } from '@shortlink/read-path';
import { redisClusterNodes, requireEnv } from '@shortlink/testing';
import { App, eventually, keepAliveAgent, metricsOf, metric, postLater, Reply, send, sleep, startApp, tally } from '@shortlink/harness';
import { API_KEY, EDIT_PROPAGATION_BOUND_MS, SERVER_SECRETS, SHARED_META_JOBS_OFF } from './support';

/**
 * Edit propagation on the real stack with two redirect instances behind one Redis Cluster and the MariaDB
 * shards: maxClicks stays exact across instances, a lost counter costs at most the clicks not yet
 * flushed to the shard, the per-link visitor limit holds over both, and edits reach both instances' L1
 * (docs/design.md, "Max clicks", "Link options", "Edits reach every instance"). The click bus plays no part here: each process keeps its own in-process one.
 */
describe('two redirect instances on the real stack', () => {
  const RUN = Date.now().toString(36);
  const DOMAIN = `instances-${RUN}.shortlink.test`;
  const measured: Record<string, unknown> = {};
  let env: Record<string, string>;
  let generation: App;
  let a: App;
  let b: App;
  const shardUrls = () =>
    requireEnv('MYSQL_SHARDS')
      .split(',')
      .map((p) => p.slice(p.indexOf('=') + 1));

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'memory',
      OLAP_DRIVER: 'chdb',
      LOG_LEVEL: 'warn',
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      ...SERVER_SECRETS,
      ...SHARED_META_JOBS_OFF,
      SHORTLINK_DEFAULT_DOMAIN: DOMAIN,
      SHORTLINK_PUBLIC_BASE_URL: `http://${DOMAIN}`,
      // One client address sends everything here.
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
      REDIRECT_CLICK_COUNT_FLUSH_MS: '1000',
    };
    generation = await startApp('generation', env);
    [a, b] = await Promise.all([startApp('redirect', env), startApp('redirect', env)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a, b, generation].map((app) => app?.stop()));
    process.stdout.write(`\nredirect instances measurements: ${JSON.stringify(measured, null, 2)}\n`);
  });

  const create = async (body: object): Promise<string> => {
    const res = await fetch(`${generation.base}/api/v1/links`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: JSON.stringify(body),
    });
    const created = (await res.json()) as { code?: string };
    if (res.status !== 201 || !created.code) throw new Error(`create answered ${res.status} ${JSON.stringify(created)}`);
    return created.code;
  };
  /** The link's row, from whichever shard holds it. */
  const row = async (code: string): Promise<{ id: string; clicks: number }> => {
    for (const url of shardUrls()) {
      const conn = await createConnection(url);
      try {
        const [rows] = await conn.query('SELECT id, click_count FROM links WHERE domain = ? AND code = ?', [DOMAIN, code]);
        const found = (rows as Array<{ id: string | number; click_count: string | number }>)[0];
        if (found) return { id: String(found.id), clicks: Number(found.click_count) };
      } finally {
        await conn.end();
      }
    }
    throw new Error(`no row for ${code}`);
  };
  const withRedis = async <T>(fn: (c: Cluster) => Promise<T>): Promise<T> => {
    const c = new Cluster(redisClusterNodes(), { redisOptions: { connectTimeout: 2000, maxRetriesPerRequest: 1 } });
    try {
      return await fn(c);
    } finally {
      c.disconnect();
    }
  };
  /** `count` GETs spread over both instances, all in flight at once. */
  const burst = async (code: string, count: number) => {
    const agent = keepAliveAgent();
    try {
      return await Promise.all(Array.from({ length: count }, (_, i) => send(agent, [a.base, b.base][i % 2], `/${code}`, 'GET', 20_000)));
    } finally {
      agent.destroy();
    }
  };
  const redirects = (replies: readonly Reply[]) => replies.filter((r) => r.status === 302).length;
  const sum = async (name: string) => metric(await metricsOf(a.admin), name) + metric(await metricsOf(b.admin), name);
  const unflushed = () => sum('shortlink_redirect_unflushed_clicks');
  const reserved = () => sum('shortlink_redirect_reserved_clicks');

  it('gives exactly 100 redirects to 1000 concurrent GETs of a link with maxClicks 100 over two instances, and keeps the count on the shard', async () => {
    const code = await create({ url: 'https://example.com/limited', maxClicks: 100 });
    const replies = await burst(code, 1000);
    measured.maxClicks = tally(replies);
    expect(tally(replies)).toEqual({ 302: 100, 410: 900 });
    expect(replies.filter((r) => r.status === 410).every((r) => JSON.parse(r.body).code === 'LINK_EXHAUSTED')).toBe(true);
    const { id } = await row(code);
    // Every click used, no lease left holding any.
    expect(await withRedis((c) => c.hgetall(CacheKeys.clickQuota(id)))).toEqual({ used: '100' });
    // Flushed before the redirects past half the limit were answered, not on the next tick only.
    await eventually('the final count on the shard', async () => (await row(code)).clicks === 100, 10_000, 50);
  });

  it('after the counter is lost in Redis, allows at most the clicks not yet flushed to the shard and the grants held in leases, and an exhausted link stays exhausted', async () => {
    const code = await create({ url: 'https://example.com/lost-counter', maxClicks: 100 });
    const { id } = await row(code);
    const key = CacheKeys.clickQuota(id);
    // Below half the limit the clicks reach the shard with the periodic flush only (past half, before each answer).
    expect(redirects(await burst(code, 30))).toBe(30);
    await eventually('30 clicks on the shard', async () => (await row(code)).clicks === 30, 10_000, 50);
    expect(redirects(await burst(code, 15))).toBe(15);
    // What a loss can cost right now: the clicks not on the shard, and what the leases still hold (each
    // instance gives from its lease until its next call finds the counter gone). The clicks not flushed only
    // decrease until the DEL; a lease may still be topped up between the scrape and the DEL (its sync runs every
    // REDIRECT_COUNTER_SYNC_MS), so the leases are read on both sides of it and the larger counts.
    const unflushedAtLoss = await unflushed();
    const reservedBefore = await reserved();
    await withRedis((c) => c.del(key)); // eviction, or a failover that lost the key
    const bound = unflushedAtLoss + Math.max(reservedBefore, await reserved());
    const after = redirects(await burst(code, 300));
    const total = 45 + after;
    measured.counterLoss = { atRiskAtLoss: bound, redirectsAfterLoss: after, total, extra: total - 100 };
    expect(bound).toBeLessThanOrEqual(50); // everything below half the limit
    expect(total).toBeGreaterThanOrEqual(100);
    expect(total - 100).toBeLessThanOrEqual(bound);

    // Exhausted now, with its final count flushed: losing the counter again revives nothing.
    await eventually('the final count on the shard', async () => (await row(code)).clicks === total, 10_000, 50);
    await withRedis((c) => c.del(key));
    const again = await burst(code, 100);
    expect(tally(again)).toEqual({ 410: 100 });
  });

  it('evaluates at most 5 wrong passwords of 100 connections over both instances that send their headers first, their bodies one at a time', async () => {
    const code = await create({ url: 'https://example.com/guarded', password: 'correct horse battery' });
    // One client address (no proxy is trusted here): the attempts are counted per visitor and link in Redis, so both instances share them.
    const posts = Array.from({ length: 100 }, (_, i) => postLater([a.base, b.base][i % 2], `/${code}`, `password=guess-${i}`));
    await sleep(500); // every request is past its headers before the first body leaves
    const statuses: number[] = [];
    for (const p of posts) statuses.push((await p.send()).status);
    measured.passwordGuesses = { evaluated: statuses.filter((s) => s === 403).length, refused: statuses.filter((s) => s === 429).length };
    expect(measured.passwordGuesses).toEqual({ evaluated: 5, refused: 95 });
  });

  it('holds a visitor to clicksPerIpPerMinute over both instances within the stated bound: limit + each instance’s requests in one merge interval', async () => {
    const LIMIT = 20;
    const SYNC_MS = 100; // REDIRECT_COUNTER_SYNC_MS's default
    const LATE_MS = 100; // a merge's round trip and its timer's lateness on this shared machine, at most
    const code = await create({ url: 'https://example.com/per-visitor', clicksPerIpPerMinute: LIMIT });
    // The windows are whole minutes: start early in one, so that every request falls in it.
    const leftInMinute = 60_000 - (Date.now() % 60_000);
    if (leftInMinute < 15_000) await sleep(leftInMinute + 50);
    const agent = keepAliveAgent();
    const sent: Array<{ at: number; end: number; instance: number; status: number }> = [];
    try {
      // One client address (no proxy is trusted here), one request every 25 ms to each instance for 3 s: 40 a second each.
      await Promise.all(
        [a.base, b.base].map(async (base, instance) => {
          const until = Date.now() + 3000;
          while (Date.now() < until) {
            const at = Date.now();
            const r = await send(agent, base, `/${code}`, 'GET', 5000);
            sent.push({ at, end: Date.now(), instance, status: r.status });
            await sleep(Math.max(0, at + 25 - Date.now()));
          }
        }),
      );
    } finally {
      agent.destroy();
    }
    // What an instance may give after the others' counts made the limit, before its next merge tells it:
    // its requests within one merge interval and its round trip (any whose answer could fall in such a span).
    const span = SYNC_MS + LATE_MS;
    const inSpan = (instance: number) =>
      Math.max(
        ...sent.filter((r) => r.instance === instance).map((r) => sent.filter((q) => q.instance === instance && q.end >= r.at && q.at <= r.at + span).length),
      );
    const bound = LIMIT + inSpan(0) + inSpan(1);
    const redirected = sent.filter((r) => r.status === 302).length;
    measured.visitorLimit = { limit: LIMIT, requests: sent.length, redirected, bound, perInstanceAlone: 2 * LIMIT };
    expect(sent.filter((r) => r.status !== 302 && r.status !== 429)).toEqual([]);
    expect(redirected).toBeGreaterThanOrEqual(LIMIT);
    expect(redirected).toBeLessThanOrEqual(bound);
    // Each instance counting alone would give the limit on each: the bound must be below that, or the test shows nothing.
    expect(bound).toBeLessThan(2 * LIMIT);
    // Once both merged, both refuse: the last requests of each instance were 429.
    expect([0, 1].map((i) => sent.filter((r) => r.instance === i).at(-1)!.status)).toEqual([429, 429]);
  });

  it('applies 100 edits on both instances under continuous requests: none sent 100 ms after an acknowledgement gets the old target', async () => {
    const code = await create({ url: 'https://example.com/edited/v0' });
    const replies: Array<{ sentAt: number; version: number; status: number }> = [];
    const agent = keepAliveAgent();
    let running = true;
    const loop = async (base: string) => {
      while (running) {
        const sentAt = Date.now();
        const r = await send(agent, base, `/${code}`, 'GET', 5000);
        const m = /\/edited\/v(\d+)$/.exec(r.location ?? '');
        replies.push({ sentAt, version: m ? Number(m[1]) : -1, status: r.status });
      }
    };
    const loops = [a.base, a.base, b.base, b.base].map(loop);
    const acks: number[] = [];
    try {
      await sleep(300); // both instances hold v0 in L1 by now
      for (let i = 1; i <= 100; i++) {
        const res = await fetch(`${generation.base}/api/v1/links/${code}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
          body: JSON.stringify({ url: `https://example.com/edited/v${i}` }),
        });
        expect(res.status).toBe(200);
        acks[i] = Date.now();
        await sleep(20 + (i % 4) * 10);
      }
      await sleep(300);
    } finally {
      running = false;
      await Promise.all(loops);
      agent.destroy();
    }
    // The edit a reply must reflect at least: the last one acknowledged the propagation bound (100 ms) or more before it was sent.
    const owed = (sentAt: number) => {
      let v = 0;
      for (let i = 1; i <= 100; i++) if (acks[i] + EDIT_PROPAGATION_BOUND_MS <= sentAt) v = i;
      return v;
    };
    const stale = replies.filter((r) => r.status !== 302 || r.version < owed(r.sentAt));
    // Apply times per instance, from /internal/link-changes (version 1 is the create; edit i is version i + 1).
    const applied = await Promise.all(
      [a, b].map(async (app) => {
        const body = (await (await fetch(`${app.admin}/internal/link-changes?code=${code}&limit=5000`)).json()) as {
          changes: Array<{ version: number; appliedAtMs: number }>;
        };
        return new Map(body.changes.map((c) => [c.version, c.appliedAtMs]));
      }),
    );
    const lags = Array.from({ length: 100 }, (_, k) => k + 1).map((i) => Math.max(...applied.map((m) => m.get(i + 1) ?? Infinity)) - acks[i]);
    const sorted = [...lags].sort((x, y) => x - y);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    measured.invalidation = {
      requests: replies.length,
      stale: stale.length,
      edits: 100,
      ackToLastInstanceMs: { p50: +at(0.5).toFixed(2), p99: +at(0.99).toFixed(2), max: +sorted[sorted.length - 1].toFixed(2), min: +sorted[0].toFixed(2) },
    };
    expect(replies.length).toBeGreaterThan(1000);
    expect(stale.slice(0, 5)).toEqual([]);
    expect(lags.every(Number.isFinite)).toBe(true); // every instance applied every edit
  }, 60_000);
});
