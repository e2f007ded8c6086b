import { execFile } from 'child_process';
import { App, latency, metricsOf, startApp, total } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { SERVER_SECRETS } from '../e2e/support';
import { API_KEY, allLookups, clusterNodes, createLinks, dbQueries, lookups, nodeCommand, stack, withCluster } from './support';
import { Tracked, underLoad } from './reshard-support';

jest.setTimeout(180_000);

const run = (cmd: string, args: string[], timeoutMs = 120_000) =>
  new Promise<string>((resolve, reject) =>
    execFile(cmd, args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (e, out, err) =>
      e ? reject(new Error(`${cmd} ${args.join(' ')}: ${e.message}\n${out}${err}`)) : resolve(`${out}${err}`),
    ),
  );

/** `redis-cli --cluster reshard` of `slots` slots between two masters (deploy/README.md), then until every node agrees. */
async function moveSlots(seed: number, from: string, to: string, slots: number): Promise<number> {
  const t = Date.now();
  await run('redis-cli', [
    '--cluster',
    'reshard',
    `127.0.0.1:${seed}`,
    '--cluster-from',
    from,
    '--cluster-to',
    to,
    '--cluster-slots',
    String(slots),
    '--cluster-yes',
    '--cluster-pipeline',
    '20',
  ]);
  const deadline = Date.now() + 30_000;
  while (
    !(await run('redis-cli', ['--cluster', 'check', `127.0.0.1:${seed}`]).then(
      () => true,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) throw new Error('the cluster did not agree on its configuration within 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  return Date.now() - t;
}

/**
 * Redis Cluster scaled out under load: a seventh node joins as a master (stack.sh
 * redis-add-node), 2000 slots with their keys move to it and back while 300 redirects/s read
 * every link from Redis (L1 off). ioredis follows MOVED and ASK: no redirect fails and none falls
 * back to the shards. The node leaves again (stack.sh redis-remove-node), so the cluster ends with
 * its six nodes and three masters.
 */
describe('Redis Cluster resharding under load', () => {
  const measured: Record<string, unknown> = {};
  let redirect: App;
  let generation: App;
  let added: number | null = null;

  afterAll(async () => {
    await Promise.all([redirect?.stop(), generation?.stop()]);
    if (added !== null) {
      // Put back whatever the test left on the added node, then take it out.
      const nodes = await clusterNodes();
      const node = nodes.find((n) => n.port === added);
      const target = nodes.find((n) => n.flags.includes('master') && n.port !== added && !n.flags.includes('fail'));
      const held = node?.slots.reduce((n, [a, b]) => n + b - a + 1, 0) ?? 0;
      if (node && target && held > 0) await moveSlots(target.port, node.id, target.id, held);
      await run('bash', [requireEnv('STACK_SCRIPT'), 'redis-remove-node', String(added)]);
    }
    await stack('status');
    process.stdout.write(`\nredis resharding measurements: ${JSON.stringify(measured, null, 2)}\n`);
  });

  it('adds a master and moves 2000 slots to it and back under 300 redirects/s: 0 failed redirects, all from Redis', async () => {
    const env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'clickhouse',
      LOG_LEVEL: 'warn',
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      ...SERVER_SECRETS,
      SHORTLINK_DEFAULT_DOMAIN: 'redis-reshard.shortlink.test',
      SHORTLINK_PUBLIC_BASE_URL: 'http://redis-reshard.shortlink.test',
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    };
    generation = await startApp('generation', env);
    redirect = await startApp('redirect', { ...env, REDIRECT_L1_ENABLED: 'false' });
    const made = await createLinks(generation.base, 400, `redis-reshard-${Date.now().toString(36)}`, 16);
    const links: Tracked[] = made.map((l) => ({ code: l.code, domain: l.domain, urls: new Set([l.url]), last: { url: l.url, version: 1 }, readable: true }));
    // Warm: every link in Redis.
    for (const l of made) await fetch(`${redirect.base}/${l.code}`, { redirect: 'manual' });
    expect(await withCluster((c) => Promise.all(made.map((l) => c.exists(l.key))))).toEqual(made.map(() => 1));

    const seedPort = Number(requireEnv('REDIS_CLUSTER_NODES').split(',')[0].split(':')[1]);
    const source = (await clusterNodes()).find((n) => n.flags.includes('master') && n.slots.some(([a]) => a === 0))!;
    const out = await run('bash', [requireEnv('STACK_SCRIPT'), 'redis-add-node']);
    added = Number(
      out
        .trim()
        .split('\n')
        .filter((l) => /^\d+$/.test(l.trim()))
        .pop(),
    );
    expect(added).toBeGreaterThan(0);
    const target = (await clusterNodes()).find((n) => n.port === added)!;
    expect(target.flags).toContain('master');

    const m0 = await metricsOf(redirect.admin);
    const timings: Record<string, number> = {};
    let keysOnAdded = 0;
    const { load } = await underLoad(
      {
        generation: generation.base,
        redirects: [redirect.base],
        links,
        redirectRate: 300,
        writeRate: 0,
        leadMs: 2000,
        tailMs: 2000,
        maxMs: 120_000,
        tag: 'redis',
      },
      async () => {
        timings.toAddedMs = await moveSlots(seedPort, source.id, target.id, 2000);
        keysOnAdded = Number(await nodeCommand(added!, 'DBSIZE'));
        await new Promise((r) => setTimeout(r, 2000)); // serve from the new master for a while
        timings.backMs = await moveSlots(seedPort, target.id, source.id, 2000);
      },
    );
    const m1 = await metricsOf(redirect.admin);
    const fromRedis = lookups(m1, 'redis') - lookups(m0, 'redis');
    const all = allLookups(m1) - allLookups(m0);
    measured.redisReshard = {
      added,
      slotsMoved: 2000,
      keysOnAddedMaster: keysOnAdded,
      timings,
      redirects: load.redirects,
      failures: load.redirectFailures.length,
      latencyMs: latency(load.redirectLatency.map((ms) => ({ ms }) as never)),
      lookups: all,
      fromRedis,
      dbQueries: dbQueries(m1) - dbQueries(m0),
      breakerStateAfter: total(m1, 'shortlink_redirect_breaker_state'),
    };
    expect(load.redirectFailures.slice(0, 5)).toEqual([]);
    expect(load.redirects).toBeGreaterThan(2000);
    expect(keysOnAdded).toBeGreaterThan(0);
    // Followed MOVED/ASK: answered by Redis, not by the shards behind an open breaker.
    expect(fromRedis).toBeGreaterThanOrEqual(Math.floor(all * 0.99));
    expect(dbQueries(m1) - dbQueries(m0)).toBeLessThanOrEqual(Math.ceil(all * 0.01));

    await run('bash', [requireEnv('STACK_SCRIPT'), 'redis-remove-node', String(added)]);
    added = null;
    const masters = (await clusterNodes()).filter((n) => n.flags.includes('master') && n.slots.length > 0);
    expect(masters).toHaveLength(3);
    expect(masters.reduce((n, m) => n + m.slots.reduce((k, [a, b]) => k + b - a + 1, 0), 0)).toBe(16384);
  });
});
