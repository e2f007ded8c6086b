/**
 * How long a `reshard` move holds the writes of moving links (its freeze), at a given number of
 * links, while an app edits links (docs/benchmarks.md, "Resharding freeze"). On demand, never in CI.
 *
 *   source deploy/local/.run/stack.env   # MYSQL_META_URL names the MariaDB server
 *   node -r ./tools/register.js bench/scale/reshard-freeze.ts --scratch --links=1000000 [--writes=20] [--poll=1000] [--move-poll=100] [--add-only] [--batch=500] [--reads=0]
 *
 * or, on databases of your own: RESHARD_BENCH_OWN_DATABASES=1 MYSQL_META_URL=... MYSQL_SHARDS=s0=...,s3=...
 * MYSQL_SPARE_SHARDS=s4=... node -r ./tools/register.js bench/scale/reshard-freeze.ts --links=…
 *
 * It moves the ring (s4 joins, then leaves again), so it refuses to run unless told that the
 * databases are its own (RESHARD_BENCH_OWN_DATABASES=1) and no other app reports to the ring: never
 * on the shared stack. Loads links straight into the shards (by the ring) up to --links, starts one
 * app in this process (a ShardedLinkRepository with its ring watcher, polling every --poll ms, every
 * --move-poll ms during a move, as SHARD_RING_POLL_MS and SHARD_RING_MOVE_POLL_MS) that
 * edits random links at --writes per second, and runs the resharding tool with --rate 0. Prints the
 * move's timings, its freeze report and the longest wait of an edit, as JSON.
 */
import { randomBytes } from 'crypto';
import { createConnection } from 'mysql2/promise';
import { MysqlLinkShardStore, MysqlRingStore } from '@shortlink/link-store';
import { META_MYSQL_MIGRATIONS } from '@shortlink/wiring';
import { Link, NO_OPTIONS } from '@shortlink/links-domain';
import { MoveProgress, Resharder, RingSpec, RingWatcher, RoutingState, routerOf, ShardedLinkRepository } from '@shortlink/sharding-domain';
import { scratchMysqlDatabases } from '@shortlink/testing';

const arg = (name: string, fallback: number) => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? Number(found.slice(name.length + 3)) : fallback;
};
const LINKS = arg('links', 100_000);
const WRITES = arg('writes', 20);
/** Lookups a second of random links through the same repository, as the redirect's database path makes them (none may fail or miss). */
const READS = arg('reads', 0);
const POLL = arg('poll', 1000);
const MOVE_POLL = Math.min(POLL, arg('move-poll', 100));
/** --add-only: s4 joins and stays (at 10M links the move back would double a long run). */
const ADD_ONLY = process.argv.includes('--add-only');
/** Rows per scan and copy step (`reshard --batch`; 500 by default). */
const BATCH = arg('batch', 500);
const TENANT = 'bench-reshard-freeze';
const DOMAIN = 'freeze.bench.example';
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

function shardList(value: string | undefined): Array<[string, string]> {
  return (value ?? '')
    .split(',')
    .filter(Boolean)
    .map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]);
}

const randomCode = () => [...randomBytes(9)].map((b) => ALPHABET[b % 62]).join('');

function aLink(id: bigint, at: Date): Link {
  return {
    ...NO_OPTIONS,
    id: id.toString(),
    domain: DOMAIN,
    code: randomCode(),
    targetUrl: `https://example.com/bench/${id}`,
    tenantId: TENANT,
    createdAt: at,
    updatedAt: at,
    expiresAt: null,
    status: 'active',
    redirectType: 302,
    version: 1,
    moderation: 'clear',
    moderationReason: null,
  };
}

/**
 * `--scratch`: six databases of its own on the MariaDB of MYSQL_META_URL (the local stack's, say),
 * made for the run and dropped after, so that one command measures without touching the stack's ring.
 */
async function databases(): Promise<{ env: NodeJS.ProcessEnv; drop(): Promise<void> }> {
  if (!process.argv.includes('--scratch')) {
    if (process.env.RESHARD_BENCH_OWN_DATABASES !== '1')
      throw new Error(
        'moves the ring of these databases: pass --scratch, or set RESHARD_BENCH_OWN_DATABASES=1 for databases of your own (never the shared stack)',
      );
    return { env: process.env, drop: async () => undefined };
  }
  const scratch = await scratchMysqlDatabases(['freeze_meta', 'freeze_s0', 'freeze_s1', 'freeze_s2', 'freeze_s3', 'freeze_s4']);
  const [meta, ...shardUrls] = scratch.urls;
  const named = (from: number, to: number) =>
    shardUrls
      .slice(from, to)
      .map((url, i) => `s${from + i}=${url}`)
      .join(',');
  return { env: { MYSQL_META_URL: meta, MYSQL_SHARDS: named(0, 4), MYSQL_SPARE_SHARDS: named(4, 5) }, drop: () => scratch.drop() };
}

async function main(): Promise<void> {
  const own = await databases();
  try {
    await measure(own.env);
  } finally {
    await own.drop();
  }
}

async function measure(env: NodeJS.ProcessEnv): Promise<void> {
  const shards = shardList(env.MYSQL_SHARDS);
  const spare = shardList(env.MYSQL_SPARE_SHARDS);
  if (spare.length !== 1) throw new Error('MYSQL_SPARE_SHARDS must name one spare shard');
  const stores = new Map<string, MysqlLinkShardStore>();
  for (const [name, url] of [...shards, ...spare]) stores.set(name, await MysqlLinkShardStore.open(name, { url }));
  const storeOf = (name: string) => stores.get(name)!;
  const ring = new MysqlRingStore({ url: env.MYSQL_META_URL! }, META_MYSQL_MIGRATIONS);
  const four: RingSpec = { strategy: 'ring', virtualNodes: 150, shards: shards.map(([name]) => ({ name })) };
  if (!(await ring.current())) await ring.publish({ version: 1, spec: four, move: null }, null);
  const others = await ring.watchers(60_000);
  if (others.length) throw new Error(`other apps report to this ring (${others.map((w) => w.instanceId).join(', ')}): not your own databases`);
  const current = (await ring.current())!;
  if (current.move || current.spec.shards.length !== shards.length) throw new Error(`the ring is not ${shards.length} shards at rest; fix it first`);

  // Load up to LINKS links, by the ring.
  const router = routerOf(current.spec);
  let have = 0;
  for (const [, url] of shards) {
    const c = await createConnection(url);
    const [rows] = await c.query('SELECT COUNT(*) AS n FROM links');
    have += Number((rows as Array<{ n: number }>)[0].n);
    await c.end();
  }
  const loadStart = Date.now();
  let nextId = BigInt(Date.now()) * 1000n;
  for (let loaded = have; loaded < LINKS;) {
    const n = Math.min(20_000, LINKS - loaded);
    const at = new Date(Math.floor(Date.now() / 1000) * 1000);
    const links = Array.from({ length: n }, () => aLink(nextId++, at));
    const byShard = new Map<string, Link[]>();
    for (const l of links) {
      const name = router.shardFor(l.code);
      const list = byShard.get(name);
      if (list) list.push(l);
      else byShard.set(name, [l]);
    }
    await Promise.all(
      [...byShard].map(async ([name, list]) => {
        for (let i = 0; i < list.length; i += 2000) await storeOf(name).insertMany(list.slice(i, i + 2000));
      }),
    );
    loaded += n;
    process.stderr.write(`\rloaded ${loaded}/${LINKS}`);
  }
  const loadSeconds = (Date.now() - loadStart) / 1000;
  process.stderr.write(`\n${have} links were there, loading took ${loadSeconds.toFixed(1)} s\n`);

  // A sample of links the app edits (a fifth of them move when s4 joins).
  const sample: Array<{ domain: string; code: string }> = [];
  for (const [name] of shards) sample.push(...(await storeOf(name).listIdentifiers(null, 5000)));

  const results: Record<string, unknown> = { links: Math.max(have, LINKS), writesPerSecond: WRITES, pollMs: POLL, movePollMs: MOVE_POLL, loadSeconds };
  const changes = [{ add: [{ name: spare[0][0] }] }, { remove: [spare[0][0]] }];
  for (const change of ADD_ONLY ? changes.slice(0, 1) : changes) {
    const atRest = (await ring.current())!;
    const repository = new ShardedLinkRepository(new RoutingState({ version: 0, spec: atRest.spec, move: null }), [...stores.values()], {
      resolveStore: (name) => stores.get(name) ?? null,
      timeoutMs: 10_000,
    });
    const watcher = new RingWatcher(ring, repository, {
      instanceId: `bench-freeze-${process.pid}`,
      app: 'bench',
      pollMs: POLL,
      movePollMs: MOVE_POLL,
      leaseMs: 10_000,
      bootstrap: atRest.spec,
      log: () => undefined,
    });
    await watcher.start();
    const edits = { done: 0, refused: 0, failed: 0, longestMs: 0, latencies: [] as number[] };
    let stop = false;
    const writer = (async () => {
      while (!stop) {
        const t = Date.now();
        const id = sample[Math.floor(Math.random() * sample.length)];
        try {
          const link = await repository.findByCode(id);
          if (link) {
            const ok = await repository.replace(
              { ...link, targetUrl: `${link.targetUrl.split('#')[0]}#${t}`, version: link.version + 1, updatedAt: new Date(t) },
              link.version,
            );
            if (ok) edits.done++;
            else edits.refused++;
          }
        } catch {
          edits.failed++;
        }
        const ms = Date.now() - t;
        edits.latencies.push(ms);
        edits.longestMs = Math.max(edits.longestMs, ms);
        await new Promise((r) => setTimeout(r, Math.max(0, 1000 / WRITES - ms)));
      }
    })();
    const reads = { sent: 0, done: 0, missing: 0, failed: 0, longestMs: 0 };
    const reader = (async () => {
      if (READS <= 0) return;
      const started = Date.now();
      while (!stop) {
        // Open loop: READS a second, each not waiting for the one before (a slow one shows as longestMs).
        const due = started + (++reads.sent * 1000) / READS;
        await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
        const id = sample[Math.floor(Math.random() * sample.length)];
        const t = Date.now();
        void repository.findForRedirect(id).then(
          (link) => {
            if (link) reads.done++;
            else reads.missing++;
            reads.longestMs = Math.max(reads.longestMs, Date.now() - t);
          },
          () => reads.failed++,
        );
      }
    })();
    const steps: Record<string, number> = {};
    const tool = new Resharder(ring, storeOf, {
      batchSize: BATCH,
      ratePerSecond: 0,
      watcherAliveMs: 15_000,
      reporter: {
        step: (step, detail) => {
          steps[step] = Date.now();
          process.stderr.write(`[${new Date().toISOString()}] ${step}: ${detail}\n`);
        },
        copy: () => undefined,
        note: (m) => process.stderr.write(`  ${m}\n`),
      },
    });
    const started = Date.now();
    const done: MoveProgress & { freeze?: unknown } = await tool.run(change);
    stop = true;
    await writer;
    await reader;
    await watcher.stop();
    const sorted = [...edits.latencies].sort((a, b) => a - b);
    const waits = (repository as unknown as { frozenWaits?: { count: number; longestMs: number } }).frozenWaits ?? null;
    results[change.add ? 'add' : 'remove'] = {
      moved: done.plan.moving,
      examined: done.plan.examined,
      seconds: (Date.now() - started) / 1000,
      timingsMs: done.timings,
      // frozen step (publish, acknowledgement, comparison) + the switch (publish, acknowledgement): how long writes may wait.
      frozenPlusSwitchMs: (done.timings.frozen ?? 0) + (done.timings.switched ?? 0),
      freeze: done.freeze ?? null,
      appFrozenWaits: waits,
      reads: READS > 0 ? reads : null,
      edits: { done: edits.done, refused: edits.refused, failed: edits.failed, p50Ms: sorted[Math.floor(sorted.length / 2)], longestMs: edits.longestMs },
    };
  }
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  for (const s of stores.values()) await s.close();
  await ring.close();
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
