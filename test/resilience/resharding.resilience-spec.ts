import { createHash } from 'crypto';
import { MysqlLinkShardStore } from '@shortlink/link-store';
import { routerOf } from '@shortlink/sharding-domain';
import { App, eventually, keepAliveAgent, latency, metric, metricsOf, pooled, send, sleep, startApp } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { SERVER_SECRETS } from '../e2e/support';
import { API_KEY, createLinks, stack } from './support';
import { codesByShard, currentRing, misplaced, reshard, reshardOk, shardUrls, staleOrLost, stddev, Tracked, underLoad } from './reshard-support';

jest.setTimeout(240_000);

/**
 * Online resharding on the real stack: a fifth shard (the stack's spare `s4`) joins the
 * four while redirects and creates/edits/deletes run, then leaves again the same way, then a move
 * is killed with SIGKILL mid-copy and resumed. Every scenario leaves the ring as it found it: four
 * shards s0..s3 and s4 empty (docs/design.md, "Online resharding").
 */
describe('online resharding on the real stack', () => {
  const DOMAIN = 'reshard.shortlink.test';
  const FOUR = ['s0', 's1', 's2', 's3'];
  const measured: Record<string, unknown> = {};
  const t0 = Date.now();
  let env: Record<string, string>;
  let generation: App;
  let cached: App;
  let uncached: App;
  const links: Tracked[] = [];

  /** Whatever a failed run left: finish or abort the move, then take s4 out of the ring again. */
  const restoreRing = async () => {
    const status = (await reshardOk(['status', '--json'], env)).json as { move: { finished: boolean; progress: { step: string } } | null } | null;
    if (status?.move && !status.move.finished) {
      if (['switched', 'carry', 'cleanup'].includes(status.move.progress.step)) await reshardOk(['run', '--yes', '--rate', '0'], env);
      else await reshardOk(['abort', '--yes'], env);
    }
    const ring = await currentRing();
    if (ring && ring.spec.shards.some((s) => s.name === 's4')) await reshardOk(['run', '--remove', 's4', '--yes', '--rate', '0'], env);
  };

  beforeAll(async () => {
    for (const name of ['MYSQL_SHARDS', 'MYSQL_SPARE_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', 'STACK_SCRIPT']) requireEnv(name);
    await stack('status');
    env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'clickhouse',
      MYSQL_SHARDS: requireEnv('MYSQL_SHARDS'),
      MYSQL_SPARE_SHARDS: requireEnv('MYSQL_SPARE_SHARDS'),
      MYSQL_META_URL: requireEnv('MYSQL_META_URL'),
      REDIS_CLUSTER_NODES: requireEnv('REDIS_CLUSTER_NODES'),
      KAFKA_BROKERS: requireEnv('KAFKA_BROKERS'),
      CLICKHOUSE_URL: requireEnv('CLICKHOUSE_URL'),
      LOG_LEVEL: 'warn',
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      ...SERVER_SECRETS,
      SHORTLINK_DEFAULT_DOMAIN: DOMAIN,
      SHORTLINK_PUBLIC_BASE_URL: `http://${DOMAIN}`,
      // All the load comes from this one address; the per-address limit is not what this spec tests.
      RATE_LIMIT_PER_IP_PER_MINUTE: '0',
      // Apps read the ring four times a second, so that each step of a move is acknowledged quickly.
      SHARD_RING_POLL_MS: '250',
      SHARD_RING_LEASE_MS: '3000',
    };
    await restoreRing();
    generation = await startApp('generation', env);
    // One redirect as deployed (L1 + Redis), one that reads the shards on every request (the dual reads).
    // That one is a test device: its bulkhead and shard timeout are sized so that a stall of the shared
    // 2-core machine (MariaDB beside the CLI, the apps and this process) slows its answers without
    // failing them; what the test looks for is a failure caused by the move.
    [cached, uncached] = await Promise.all([
      startApp('redirect', env),
      startApp('redirect', {
        ...env,
        REDIRECT_L1_ENABLED: 'false',
        REDIRECT_REDIS_ENABLED: 'false',
        RATE_LIMIT_PER_IP_PER_MINUTE: '0',
        DB_CONCURRENCY: '1000',
        SHARD_TIMEOUT_MS: '10000',
      }),
    ]);
    const made = await createLinks(generation.base, 900, `reshard-${Date.now().toString(36)}`, 16);
    made.forEach((l, i) => links.push({ code: l.code, domain: l.domain, urls: new Set([l.url]), last: { url: l.url, version: 1 }, readable: i < 700 }));
    // The deployed redirect's caches are warm, as in production: its load then reads Redis and L1.
    const agent = keepAliveAgent();
    await pooled(made.length, 16, (i) => send(agent, cached.base, `/${made[i].code}`));
    agent.destroy();
  });

  afterAll(async () => {
    const errors: unknown[] = [];
    await Promise.all([generation, cached, uncached].map((a) => a?.stop()));
    if (env) await restoreRing().catch((e) => errors.push(e));
    const ring = await currentRing().catch(() => null);
    measured.ringAfter = ring && { version: ring.version, shards: ring.spec.shards.map((s) => s.name), move: ring.move };
    measured.totalSeconds = Math.round((Date.now() - t0) / 100) / 10;
    process.stdout.write(`\nresharding measurements: ${JSON.stringify(measured, null, 2)}\n`);
    if (errors.length) throw errors[0];
  });

  /** A move under load: the CLI runs while 250 redirects/s and ~20 writes/s go on. */
  const moveUnderLoad = async (args: string[], tag: string) => {
    const before = await codesByShard();
    const cli = Date.now();
    const { result, load } = await underLoad(
      {
        generation: generation.base,
        redirects: [cached.base, uncached.base],
        links,
        redirectRate: 250,
        writeRate: 20,
        leadMs: 2000,
        tailMs: 2000,
        maxMs: 150_000,
        tag,
      },
      () => reshardOk([...args, '--yes', '--json', '--rate', '2000', '--batch', '200'], env),
    );
    const move = result.json as {
      plan: { examined: number; moving: number; flows: Record<string, number> };
      verify: Array<Record<string, unknown>>;
      timings: Record<string, number>;
      freeze: { heldMs: number; compareMs: number; journaled: number; rowsRead: number };
    };
    const after = await codesByShard();
    const sizes = Object.fromEntries([...after].map(([s, c]) => [s, c.length]));
    const ring = (await currentRing())!;
    const onRing = ring.spec.shards.map((s) => s.name);
    const report = {
      cliSeconds: Math.round((Date.now() - cli) / 100) / 10,
      examined: move.plan.examined,
      moved: move.plan.moving,
      shareMoved: Math.round((move.plan.moving / move.plan.examined) * 1000) / 1000,
      flows: move.plan.flows,
      shardSizesBefore: Object.fromEntries([...before].map(([s, c]) => [s, c.length])),
      shardSizesAfter: sizes,
      stddevAfter: Math.round(stddev(onRing.map((s) => sizes[s])) * 10) / 10,
      meanAfter: Math.round(onRing.reduce((n, s) => n + sizes[s], 0) / onRing.length),
      timingsMs: move.timings,
      freeze: move.freeze,
      // What the writes of moving links waited in the app that made them (since it started: the first move's alone, then the longest of both).
      frozenWriteWaits: await metricsOf(generation.admin).then((m) => ({
        count: metric(m, 'shortlink_shard_frozen_write_waits'),
        maxMs: metric(m, 'shortlink_shard_frozen_write_wait_max_ms'),
      })),
      verify: move.verify,
      redirects: load.redirects,
      redirectFailures: load.redirectFailures.length,
      redirectLatencyMs: latency(load.redirectLatency.map((ms) => ({ ms }) as never)),
      writes: load.writes,
      writeFailures: load.writeFailures.length,
    };
    return { report, load, ring, after };
  };

  it('adds a fifth shard under load: 0 failed redirects, 0 failed, lost or stale writes, about 1/5 of the links move, every link resolves afterwards', async () => {
    const { report, load, ring, after } = await moveUnderLoad(['run', '--add', 's4'], 'add');
    measured.addShard = report;
    expect(load.redirectFailures.slice(0, 5)).toEqual([]);
    expect(load.writeFailures.slice(0, 5)).toEqual([]);
    expect(load.writes.edit).toBeGreaterThan(50);
    // The freeze read the links written since verify began (both sides, twice), not every moving row.
    expect(report.freeze.journaled).toBeLessThan(report.moved);
    expect(report.freeze.rowsRead).toBeLessThanOrEqual(4 * report.freeze.journaled);
    expect(report.freeze.heldMs).toBeGreaterThan(0);
    expect(ring.spec.shards.map((s) => s.name)).toEqual([...FOUR, 's4']);
    expect(ring.move).toBeNull();
    expect(misplaced(ring, after)).toEqual([]);
    expect(report.shareMoved).toBeGreaterThan(0.12);
    expect(report.shareMoved).toBeLessThan(0.28);
    expect(Object.keys(report.flows).sort()).toEqual(['s0->s4', 's1->s4', 's2->s4', 's3->s4']);
    expect(await staleOrLost(generation.base, uncached.base, links)).toEqual([]);
    // Every app routes with the new version, without a restart.
    for (const app of [generation, cached, uncached]) {
      await eventually(
        `${app.name} on ring version ${ring.version}`,
        async () => metric(await metricsOf(app.admin), 'shortlink_shard_ring_version') === ring.version,
        10_000,
        100,
      );
    }
    const details = (await (await fetch(`${cached.admin}/health/details`)).json()) as { probes: Array<{ name: string; details?: { version: number } }> };
    expect(details.probes.find((p) => p.name === 'shard-ring')?.details?.version).toBe(ring.version);
    expect(await (await fetch(`${cached.base}/health`)).json()).toEqual({ status: 'ok' });
  });

  it('removes that shard again the same way: its links go back to the four, s4 ends empty', async () => {
    const { report, load, ring, after } = await moveUnderLoad(['run', '--remove', 's4'], 'remove');
    measured.removeShard = report;
    expect(load.redirectFailures.slice(0, 5)).toEqual([]);
    expect(load.writeFailures.slice(0, 5)).toEqual([]);
    expect(ring.spec.shards.map((s) => s.name)).toEqual(FOUR);
    expect(after.get('s4')).toEqual([]);
    expect(misplaced(ring, after)).toEqual([]);
    expect(await staleOrLost(generation.base, uncached.base, links)).toEqual([]);
  });

  it('a move killed with SIGKILL mid-copy and run again ends exactly as an uninterrupted move would', async () => {
    // Expected: every row unchanged, on the shard the five-shard ring names (what an uninterrupted run yields).
    const rowsBefore = await allRows();
    const five = routerOf({ strategy: 'ring', virtualNodes: 150, shards: [...FOUR, 's4'].map((name) => ({ name })) });
    const expected = digestByShard([...rowsBefore.values()].flat().map((r) => ({ ...r, shard: five.shardFor(r.code) })));

    const first = reshard(['run', '--add', 's4', '--yes', '--rate', '300', '--batch', '50'], env);
    const meta = requireEnv('MYSQL_META_URL');
    const progress = async () => {
      const { createConnection } = await import('mysql2/promise');
      const c = await createConnection(meta);
      try {
        const [rows] = await c.query('SELECT progress FROM shard_moves WHERE finished = 0 ORDER BY created_at DESC LIMIT 1');
        const r = (rows as Array<{ progress: string }>)[0];
        return r ? (JSON.parse(r.progress) as { step: string; copied: number; plan: { moving: number } }) : null;
      } finally {
        await c.end();
      }
    };
    const midCopy = await eventually(
      'the copy to be under way',
      async () => {
        const p = await progress();
        return p && p.step === 'copying' && p.copied >= 100 ? p : null;
      },
      120_000,
      50,
    );
    process.kill(first.pid, 'SIGKILL');
    const killed = await first.done;
    const atKill = (await progress())!;
    measured.sigkill = { copiedAtKill: atKill.copied, moving: atKill.plan.moving, signal: killed.signal };
    expect(killed.signal).toBe('SIGKILL');
    expect(midCopy.copied).toBeLessThan(midCopy.plan.moving);
    expect(atKill.step).toBe('copying');

    const resumedAt = Date.now();
    const { run } = await reshardOk(['run', '--yes', '--rate', '0'], env);
    (measured.sigkill as Record<string, unknown>).resumeSeconds = Math.round((Date.now() - resumedAt) / 100) / 10;
    expect(run.out).toMatch(/resuming move .* at step copying/);

    const rowsAfter = await allRows();
    expect(digestByShard([...rowsAfter].flatMap(([shard, rows]) => rows.map((r) => ({ ...r, shard }))))).toEqual(expected);
    const ring = (await currentRing())!;
    expect(ring.spec.shards.map((s) => s.name)).toEqual([...FOUR, 's4']);
    await sleep(500);
    // Back to four shards for whatever runs next.
    await reshardOk(['run', '--remove', 's4', '--yes', '--rate', '0'], env);
    expect((await codesByShard()).get('s4')).toEqual([]);
  });

  /** Every row of this spec's domain on every shard (id, code, checksum of all columns and tags). */
  async function allRows(): Promise<Map<string, Array<{ id: string; code: string; checksum: string }>>> {
    const out = new Map<string, Array<{ id: string; code: string; checksum: string }>>();
    for (const [name, url] of shardUrls()) {
      const store = await MysqlLinkShardStore.open(name, { url });
      try {
        const rows: Array<{ id: string; code: string; checksum: string }> = [];
        for (let after: string | null = null; ;) {
          const page = await store.scanRows(after, 2000);
          if (page.length === 0) break;
          // This spec's links only: the stack is shared, and other runs create links on it meanwhile.
          rows.push(...page.filter((r) => r.domain === DOMAIN).map((r) => ({ id: r.id, code: r.code, checksum: r.checksum })));
          after = page[page.length - 1].id;
        }
        out.set(name, rows);
      } finally {
        await store.close();
      }
    }
    return out;
  }

  function digestByShard(rows: Array<{ id: string; checksum: string; shard: string }>): Record<string, { rows: number; digest: string }> {
    const by: Record<string, string[]> = {};
    for (const r of rows) (by[r.shard] ??= []).push(`${r.id}:${r.checksum}`);
    return Object.fromEntries(
      Object.entries(by)
        .sort()
        .map(([s, list]) => [s, { rows: list.length, digest: createHash('sha256').update(list.sort().join('\n')).digest('hex').slice(0, 16) }]),
    );
  }
});
