import { createConnection } from 'mysql2/promise';
import { CacheKeys } from '@shortlink/read-path';
import { requireEnv } from '@shortlink/testing';
import { App, keepAliveAgent, metric, metricsOf, send, startApp, tally } from '@shortlink/harness';
import { SERVER_SECRETS } from '../e2e/support';
import { API_KEY, withCluster } from './support';

/**
 * MaxClicks when a redirect instance dies and the shared counter is lost (docs/design.md,
 * "Max clicks"), on the real stack: two redirect instances grant 90 of a link's 100 clicks, both are
 * SIGKILLed (whatever they had not flushed to the shard dies with them), the counter disappears
 * from Redis (an eviction, or a failover that lost it), and a new instance serves 200 more GETs.
 * The periodic flush is set to a minute, so only the flush before the answer can have saved the count.
 */
describe('maxClicks through a SIGKILL and a lost counter', () => {
  const RUN = Date.now().toString(36);
  const DOMAIN = `max-clicks-${RUN}.shortlink.test`;
  const LIMIT = 100;
  const apps: App[] = [];
  const agent = keepAliveAgent();
  let common: Record<string, string>;
  let generation: App;

  const startRedirect = async () => {
    const app = await startApp('redirect', common);
    apps.push(app);
    return app;
  };
  const clicksOnShard = async (code: string): Promise<{ id: string; clicks: number }> => {
    for (const part of requireEnv('MYSQL_SHARDS').split(',')) {
      const conn = await createConnection(part.slice(part.indexOf('=') + 1));
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

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    common = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'memory',
      OLAP_DRIVER: 'chdb',
      LOG_LEVEL: 'warn',
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      ...SERVER_SECRETS,
      SHORTLINK_DEFAULT_DOMAIN: DOMAIN,
      SHORTLINK_PUBLIC_BASE_URL: `http://${DOMAIN}`,
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
      REDIRECT_CLICK_COUNT_FLUSH_MS: '60000',
    };
    generation = await startApp('generation', common);
    apps.push(generation);
  }, 120_000);

  afterAll(async () => {
    agent.destroy();
    await Promise.all(apps.map((a) => a.stop()));
  });

  it('grants exactly 100 of 100 although both instances were SIGKILLed right after 90 clicks and the counter was then lost (190 before)', async () => {
    const res = await fetch(`${generation.base}/api/v1/links`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: JSON.stringify({ url: 'https://example.com/capped', maxClicks: LIMIT }),
    });
    expect(res.status).toBe(201);
    const { code } = (await res.json()) as { code: string };
    const [a, b] = await Promise.all([startRedirect(), startRedirect()]);
    const before = [];
    for (let i = 0; i < 90; i++) before.push(await send(agent, [a.base, b.base][i % 2], `/${code}`, 'GET', 5000));
    expect(tally(before)).toEqual({ 302: 90 });
    const unflushed =
      metric(await metricsOf(a.admin), 'shortlink_redirect_unflushed_clicks') + metric(await metricsOf(b.admin), 'shortlink_redirect_unflushed_clicks');
    for (const app of [a, b]) {
      process.kill(app.proc.pid, 'SIGKILL');
      await app.proc.exited;
    }
    const { id, clicks } = await clicksOnShard(code);
    await withCluster((c) => c.del(CacheKeys.clickQuota(id)));

    const c = await startRedirect();
    const after = [];
    for (let i = 0; i < 200; i++) after.push(await send(agent, c.base, `/${code}`, 'GET', 5000));
    const total = 90 + after.filter((r) => r.status === 302).length;
    process.stdout.write(
      `\nmaxClicks through a SIGKILL: ${JSON.stringify({ unflushedAtKill: unflushed, onShardAtKill: clicks, after: tally(after), total })}\n`,
    );
    // The documented bound: at most the clicks granted below half the limit and not yet flushed come back.
    expect(total).toBeLessThanOrEqual(LIMIT + Math.min(unflushed, LIMIT / 2));
    expect({ unflushed, clicks, total }).toEqual({ unflushed: 0, clicks: 90, total: LIMIT });
    expect(after.filter((r) => r.status === 410).every((r) => JSON.parse(r.body).code === 'LINK_EXHAUSTED')).toBe(true);
  }, 120_000);
});
