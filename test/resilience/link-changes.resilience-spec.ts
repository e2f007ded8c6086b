import { redisClusterNodes, requireEnv } from '@shortlink/testing';
import { App, eventually, keepAliveAgent, metric, metricsOf, send, sleep, startApp } from '@shortlink/harness';
import { API_KEY, createLinks, nodeCommand, stackApps, withCluster } from './support';

/**
 * Edits when the change channel fails (docs/design.md, "Edits reach every instance"), on
 * the real stack. No server is stopped: the channel is cut by killing the redirect's own
 * subscriber connection (CLIENT KILL, found by its name), and a lost message is played by writing
 * an edit's new value into Redis without publishing it.
 */
describe('link changes when the channel fails', () => {
  const RUN = Date.now().toString(36);
  const DOMAIN = `changes-${RUN}.shortlink.test`;
  const apps: App[] = [];
  const agent = keepAliveAgent();
  let common: Record<string, string>;
  let generation: App;

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
    common = stackApps(DOMAIN);
    generation = await startApp('generation', common);
    apps.push(generation);
  }, 120_000);

  afterAll(async () => {
    agent.destroy();
    await Promise.all(apps.map((a) => a.stop()));
  });

  /**
   * An edit whose message never arrives: a new target in Redis, no PUBLISH. It keeps the version, so
   * that a real edit made afterwards (the shard's next version) still replaces it.
   */
  const silentEdit = (key: string, targetUrl: string) =>
    withCluster(async (c) => {
      const current = JSON.parse((await c.get(key))!) as object;
      await c.set(key, JSON.stringify({ ...current, targetUrl }));
    });
  const locationOf = async (app: App, code: string) => (await send(agent, app.base, `/${code}`)).location;

  /** Kills the redirect's subscriber connection wherever it is; returns how many were killed. */
  const cutChannel = async (app: App): Promise<number> => {
    let killed = 0;
    for (const { port } of redisClusterNodes()) {
      const list = (await nodeCommand(port, 'CLIENT', 'LIST', 'TYPE', 'pubsub')) ?? '';
      for (const line of list.split('\n').filter((l) => new RegExp(`\\sname=\\S*shortlink-link-changes-${app.proc.pid}\\s`).test(l))) {
        killed += Number((await nodeCommand(port, 'CLIENT', 'KILL', 'ID', /(?:^|\s)id=(\d+)/.exec(line)![1])) ?? 0);
      }
    }
    return killed;
  };

  it('empties L1 when the subscription is cut: an edit whose message was lost is served at once after, not after the L1 TTL', async () => {
    const redirect = await startApp('redirect', common); // L1 TTL: the default 60 s
    apps.push(redirect);
    const [link] = await createLinks(generation.base, 1, `gap-${RUN}`);
    expect(await locationOf(redirect, link.code)).toBe(link.url);
    await silentEdit(link.key, 'https://example.com/edited-while-unheard');
    await sleep(500);
    expect(await locationOf(redirect, link.code)).toBe(link.url); // the message was lost: L1 still holds the old target

    expect(await cutChannel(redirect)).toBe(1);
    await eventually(
      'the new target once the channel is back',
      async () => (await locationOf(redirect, link.code)) === 'https://example.com/edited-while-unheard',
      10_000,
      100,
    );
    expect(metric(await metricsOf(redirect.admin), 'shortlink_redirect_link_change_gaps_total')).toBe(1);
    const body = (await (await fetch(`${redirect.admin}/internal/link-changes`)).json()) as { gaps: number; subscribed: boolean };
    expect(body).toMatchObject({ gaps: 1, subscribed: true });

    // Subscribed again: a published edit reaches L1 as before.
    const res = await fetch(`${generation.base}/api/v1/links/${link.code}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: JSON.stringify({ url: 'https://example.com/after-the-gap' }),
    });
    expect(res.status).toBe(200);
    await eventually('the published edit', async () => (await locationOf(redirect, link.code)) === 'https://example.com/after-the-gap', 2_000, 20);
  }, 60_000);

  it('without any message at all, an instance serves an edit at the latest after its L1 TTL (the fallback bound)', async () => {
    const redirect = await startApp('redirect', { ...common, REDIRECT_L1_TTL_MS: '2000' });
    apps.push(redirect);
    const [link] = await createLinks(generation.base, 1, `ttl-${RUN}`);
    expect(await locationOf(redirect, link.code)).toBe(link.url);
    const editedAt = Date.now();
    await silentEdit(link.key, 'https://example.com/edited-unannounced');
    expect(await locationOf(redirect, link.code)).toBe(link.url); // unheard: L1 still answers
    // Pinned hot keys included: the pin lasts one TTL too (docs/design.md, "Redirect read path").
    await eventually(
      'the edit, from Redis once L1 let go',
      async () => (await locationOf(redirect, link.code)) === 'https://example.com/edited-unannounced',
      10_000,
      50,
    );
    process.stdout.write(`\nunannounced edit served after ${Date.now() - editedAt} ms (L1 TTL 2000 ms)\n`);
  }, 60_000);
});
