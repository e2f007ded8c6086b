/**
 * Scale bench, on demand, on the local real stack. One command loads the sizes one
 * after the other (cumulatively) through the batch API, and at each size starts a fresh redirect
 * (Kafka click bus, rate limits on and not binding) and measures it under open-loop Zipf traffic
 * over every link loaded, at a rate set as a fraction of the bare `node:http` server's capacity
 * measured at the start of the same run:
 *
 *   set -a; . deploy/local/.run/stack.env; set +a
 *   node -r ./tools/register.js bench/scale/run.ts [--sizes=100000,1000000] [--seconds=20] [--warmup=5] [--sources]
 *     [--rate-fraction=0.05] [--unknown=20000] [--keep] [--heap-snapshot] [--semi-space=64] [--old-space=0] [--fill=100000]
 *     [--parallel=1] [--generations=1] [--rebuild-up-to=1000000] [--rate=N]
 *
 * The redirect runs compiled, as the image runs it (`node tools/build.js redirect` first);
 * `--sources` runs its TypeScript through tools/register.js, which holds the TypeScript compiler
 * in the heap too. Writes bench/results/scale-<date>.md and docs/img/scale.svg (each figure against the number of
 * links). 127.0.0.1 only; stops by itself; deletes its links afterwards unless --keep.
 */
import { randomBytes, randomUUID } from 'crypto';
import { execFileSync } from 'child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Cluster } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { loadConfig } from '@shortlink/config';
import { heapSummary } from './heap-summary';
import { deleteTenantLinks, streamBatch } from '../shared/batch-links';
import {
  App,
  byLabel,
  closedLoop,
  cpuSeconds,
  datedResultFile,
  defaultClosedLoopLoader,
  eventually,
  findVegeta,
  freePort,
  lineChartsSvg,
  loadAverages,
  machineFacts,
  markdownTable,
  metric,
  metricsOf,
  openLoop,
  OpenLoopResult,
  pooled,
  ProcessGroup,
  REPO_ROOT,
  serverSecrets,
  sleep,
  startApp,
  startCommand,
  whenServing,
  withoutAppSettings,
  ZipfSampler,
} from '@shortlink/harness';

const option = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const SIZES = option('sizes', '100000,1000000').split(',').map(Number);
const SECONDS = Number(option('seconds', '20'));
const WARMUP = Number(option('warmup', '5'));
const RATE_FRACTION = Number(option('rate-fraction', '0.05'));
/** --rate=N: offer N requests a second at every size instead (a shared machine whose load moves makes the fraction move too). */
const FIXED_RATE = Number(option('rate', '0'));
const UNKNOWN = Number(option('unknown', '20000'));
const KEEP = process.argv.includes('--keep');
/** The redirect's --max-semi-space-size (MiB), as the image sets it: 64. */
const SEMI_SPACE = Number(option('semi-space', '64'));
/** The redirect's --max-old-space-size (MiB); 0: V8's default, sized from the machine's memory. */
const OLD_SPACE = Number(option('old-space', '0'));
/** Links asked once each before the memory is read, so that L1 holds as many as it may (REDIRECT_L1_MAX_ENTRIES, 100 000). */
const FILL = Number(option('fill', '100000'));
/** --heap-snapshot: the redirect writes a heap snapshot after each size's runs; its largest parts go to the report. */
const HEAP_SNAPSHOT = process.argv.includes('--heap-snapshot');
/** --sources: run the redirect from its TypeScript sources (tools/register.js) instead of compiled, as the image runs it. */
const FROM_SOURCES = process.argv.includes('--sources');
const BATCH_ROWS = 100_000;
/** Batches of BATCH_ROWS in flight at once while loading (a tenant's parallel uploads), spread over the generation apps. */
const PARALLEL = Number(option('parallel', '1'));
/** Generation apps the batches go to (instances behind a load balancer, each with its outbox relay). */
const GENERATIONS = Number(option('generations', '1'));
/** `bloom:rebuild` is timed at sizes up to this (it reads every link: ~45 s a million on this machine). */
const REBUILD_UP_TO = Number(option('rebuild-up-to', '1000000'));
const CONNECTIONS = 100;
const API_KEY = `sl_bench_${randomUUID().replace(/-/g, '')}`;
const RUN = Date.now().toString(36);
const DOMAIN = `scale-${RUN}.shortlink.test`;
const log = (m: string) => process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const round = (n: number, digits = 0) => Number(n.toFixed(digits));

/** One size's figures. */
interface SizeResult {
  links: number;
  loadRowsPerSecond: number;
  readyMs: number;
  runs: Array<{ name: string; result: OpenLoopResult; served: Record<string, number>; cpuUsPerAnswer: number; refused: number }>;
  bareCpuUsPerAnswer: number;
  rssMiB: number;
  /** L1's entries when the memory was read. */
  l1Entries: number;
  heapMiB: number;
  redisBytesPerKey: number;
  redisKeys: number;
  mariadbBytesPerLink: number;
  /** The links tables' data + indexes over the shards, and Redis' used memory over the masters. */
  mariadbBytes: number;
  redisUsedBytes: number;
  bloomFalsePositiveRate: number;
  bloomRebuildSeconds: number;
  /** Rows/s of each 1M-link step of the load (rows/s as the tables grow). */
  loadSteps: Array<{ links: number; rowsPerSecond: number }>;
}

function appEnv(): Record<string, string> {
  const e = process.env;
  for (const k of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS'])
    if (!e[k]) throw new Error(`${k} is not set: source deploy/local/.run/stack.env first`);
  return {
    ...(withoutAppSettings() as Record<string, string>),
    ...SECRETS,
    DB_DRIVER: 'mysql',
    CACHE_DRIVER: 'redis',
    BUS_DRIVER: 'kafka',
    OLAP_DRIVER: 'chdb',
    MYSQL_SHARDS: e.MYSQL_SHARDS!,
    MYSQL_META_URL: e.MYSQL_META_URL!,
    REDIS_CLUSTER_NODES: e.REDIS_CLUSTER_NODES!,
    KAFKA_BROKERS: e.KAFKA_BROKERS!,
    KAFKA_CLICK_TOPIC: `shortlink.clicks.bench.scale.${RUN}`,
    SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
    SHORTLINK_DEFAULT_DOMAIN: DOMAIN,
    SHORTLINK_PUBLIC_BASE_URL: `http://${DOMAIN}`,
    PLAN_PAID_BATCH_ROWS_PER_DAY: String(100_000_000),
    // Rate limits on, and far from binding: one loader address sends every request.
    RATE_LIMIT_PER_IP_PER_MINUTE: String(100_000_000),
    RATE_LIMIT_GLOBAL_PER_SECOND: String(10_000_000),
    LOG_LEVEL: 'warn',
  };
}
const SECRETS = serverSecrets();

/** POSTs `rows` NDJSON creates; the codes created, in order. */
async function batch(base: string, apiKey: string, from: number, rows: number): Promise<string[]> {
  const codes: string[] = [];
  const problems = new Map<string, number>();
  await streamBatch({
    base,
    apiKey,
    rows,
    row: (j) => `{"url":"https://example.com/scale/${RUN}/${from + j}"}`,
    answer: (line) => {
      const code = line.includes('"status":201') ? /"code":"([^"]+)"/.exec(line)?.[1] : undefined;
      if (code) codes.push(code);
      else {
        const problem = /"code":"([A-Z_]+)"/.exec(line)?.[1] ?? line.slice(0, 80);
        problems.set(problem, (problems.get(problem) ?? 0) + 1);
      }
    },
  });
  if (problems.size) log(`batch: ${[...problems].map(([p, n]) => `${n} × ${p}`).join(', ')}`);
  return codes;
}

/** The MariaDB side: bytes of the links tables (data + indexes) over all shards, their rows, and the buffer pool. */
async function mariadbFootprint(): Promise<{ bytes: number; rows: number; bufferPool: number }> {
  const config = loadConfig(process.env);
  if (config.db.driver !== 'mysql') throw new Error('needs DB_DRIVER=mysql');
  let bytes = 0;
  let rows = 0;
  let bufferPool = 0;
  for (const s of config.db.shards) {
    const conn = await createConnection(s.url);
    try {
      await conn.query('ANALYZE TABLE links');
      const [t] = (await conn.query(
        "SELECT data_length + index_length AS bytes FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'links'",
      )) as unknown as [Array<{ bytes: number }>];
      const [c] = (await conn.query('SELECT COUNT(*) AS n FROM links')) as unknown as [Array<{ n: number }>];
      const [b] = (await conn.query('SELECT @@innodb_buffer_pool_size AS b')) as unknown as [Array<{ b: number }>];
      bytes += Number(t[0]?.bytes ?? 0);
      rows += Number(c[0].n);
      bufferPool = Number(b[0].b);
    } finally {
      await conn.end();
    }
  }
  return { bytes, rows, bufferPool };
}

/** Redis Cluster: used memory and keys summed over the masters. */
async function redisFootprint(): Promise<{ usedBytes: number; keys: number }> {
  const nodes = process.env.REDIS_CLUSTER_NODES!.split(',').map((hp) => ({ host: hp.split(':')[0], port: Number(hp.split(':')[1]) }));
  const cluster = new Cluster(nodes, { lazyConnect: false });
  try {
    await new Promise<void>((resolve, reject) => {
      cluster.once('ready', () => resolve());
      cluster.once('error', reject);
    });
    let usedBytes = 0;
    let keys = 0;
    for (const node of cluster.nodes('master')) {
      usedBytes += Number(/used_memory:(\d+)/.exec(await node.info('memory'))?.[1] ?? 0);
      keys += await node.dbsize();
    }
    return { usedBytes, keys };
  } finally {
    cluster.disconnect();
  }
}

/** SIGUSR2 to the redirect (started with --heapsnapshot-signal), then its largest parts by constructor. */
async function heapSnapshotOf(pid: number): Promise<string> {
  const before = new Set(readdirSync(REPO_ROOT));
  process.kill(pid, 'SIGUSR2');
  const file = await eventually(
    'the heap snapshot',
    async () => {
      const name = readdirSync(REPO_ROOT).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
      if (!name) return false;
      const path = join(REPO_ROOT, name);
      const size = statSync(path).size;
      await sleep(1000);
      return statSync(path).size === size && size > 0 ? path : false;
    },
    120_000,
    500,
  );
  try {
    return heapSummary(readFileSync(file, 'utf8'));
  } finally {
    rmSync(file, { force: true });
  }
}

const lookups = (m: Awaited<ReturnType<typeof metricsOf>>) => byLabel(m, 'shortlink_redirect_lookup_total', 'source');
function delta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) out[k] = v - (before.get(k) ?? 0);
  return out;
}
const shareOf = (served: Record<string, number>, ...sources: string[]) => {
  const total = Object.values(served).reduce((a, b) => a + b, 0);
  return total ? (100 * sources.reduce((a, s) => a + (served[s] ?? 0), 0)) / total : 0;
};

async function main() {
  const start = new Date();
  const startLoad = loadAverages();
  const group = new ProcessGroup({ log });
  const rig = { tmpDir: mkdtempSync(join(tmpdir(), 'scale-bench-')), group, core: '0' };
  const vegeta = findVegeta(log);
  if (!vegeta) throw new Error('vegeta is not available (no Go toolchain to install it)');
  const env = appEnv();
  if (!FROM_SOURCES) {
    log('node tools/build.js redirect (the image runs the compiled app)');
    execFileSync(process.execPath, ['tools/build.js', 'redirect'], { cwd: REPO_ROOT, stdio: 'ignore' });
  }
  const results: SizeResult[] = [];
  const heapParts: string[] = [];
  let generation: App | null = null;
  const moreGenerations: App[] = [];
  let tenantId: string | null = null;
  try {
    // The bare node:http server on the redirect's core; its capacity sets the offered rate.
    const barePort = await freePort();
    const bare = startCommand(process.execPath, ['-r', './tools/register.js', 'bench/redirect/bare-server.ts'], {
      name: 'bare',
      env: { BENCH_BARE_PORT: String(barePort) },
      core: '1',
      group,
    });
    const bareBase = `http://127.0.0.1:${barePort}`;
    await whenServing(bare, 'bare server', async () => (await fetch(`${bareBase}/x`, { redirect: 'manual' })).status === 302, 20_000, 100);
    const capacity = await closedLoop(rig, { loader: defaultClosedLoopLoader(), base: bareBase, paths: ['/x'], connections: CONNECTIONS, seconds: 5 });
    const rate = FIXED_RATE > 0 ? FIXED_RATE : Math.max(200, Math.round((capacity.rps * RATE_FRACTION) / 100) * 100);
    log(`bare node:http: ${Math.round(capacity.rps)} rps closed loop; offered rate ${rate}/s (${RATE_FRACTION} of it)`);

    generation = await startApp('generation', env);
    for (let g = 1; g < GENERATIONS; g++) moreGenerations.push(await startApp('generation', env));
    const generations = [generation, ...moreGenerations];
    const created = (await (
      await fetch(`${generation.base}/api/v1/admin/tenants`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify({ name: `scale-${RUN}`, plan: 'paid' }),
      })
    ).json()) as { tenant: { id: string }; apiKey: string };
    tenantId = created.tenant.id;
    const codes: string[] = [];
    const redisAtStart = await redisFootprint();

    let asked = 0;
    const loadSteps: SizeResult['loadSteps'] = [];
    let step = { at: Date.now(), links: 0 };
    for (const size of SIZES) {
      const t0 = Date.now();
      // PARALLEL streams, each sending batches of BATCH_ROWS until the size is asked for.
      const stream = async (_: unknown, n: number) => {
        while (asked < size) {
          const rows = Math.min(BATCH_ROWS, size - asked);
          const from = asked;
          asked += rows;
          const got = await batch(generations[n % generations.length].base, created.apiKey, from, rows);
          if (got.length === 0) throw new Error('a batch created nothing');
          for (const c of got) codes.push(c);
          const stepSize = Math.max(100_000, Math.min(1_000_000, size / 10));
          if (codes.length - step.links >= stepSize) {
            const now = Date.now();
            loadSteps.push({ links: codes.length, rowsPerSecond: (codes.length - step.links) / ((now - step.at) / 1000) });
            step = { at: now, links: codes.length };
          }
          log(`${codes.length} links (${Math.round((codes.length - (results.at(-1)?.links ?? 0)) / ((Date.now() - t0) / 1000))} rows/s this size)`);
        }
      };
      await Promise.all(Array.from({ length: PARALLEL }, stream));
      // Rows a batch answered with a problem are not retried: the size is what was created.
      asked = codes.length;
      const loadRowsPerSecond = (codes.length - (results.at(-1)?.links ?? 0)) / ((Date.now() - t0) / 1000);
      log(`loaded ${codes.length} links in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      const db = await mariadbFootprint();
      log(`MariaDB: ${db.rows} rows, ${(db.bytes / 2 ** 20).toFixed(0)} MiB links tables, buffer pool ${(db.bufferPool / 2 ** 20).toFixed(0)} MiB`);

      // A fresh redirect instance: cold L1, the Bloom filter checked (or rebuilt) at boot.
      const t1 = Date.now();
      const redirect = await startApp('redirect', env, {
        built: !FROM_SOURCES,
        core: '1',
        group,
        nodeArgs: [
          `--max-semi-space-size=${SEMI_SPACE}`,
          ...(OLD_SPACE > 0 ? [`--max-old-space-size=${OLD_SPACE}`] : []),
          ...(HEAP_SNAPSHOT ? ['--heapsnapshot-signal=SIGUSR2'] : []),
        ],
        timeoutMs: 300_000,
      });
      const readyMs = Date.now() - t1;
      const pid = redirect.proc.pid!;
      const runs: SizeResult['runs'] = [];
      try {
        for (const [name, s] of [
          ['zipf 1.0, cold instance', 1.0],
          ['zipf 1.0, warm', 1.0],
          ['zipf 0.8', 0.8],
        ] as const) {
          const sampler = new ZipfSampler(codes.length, s);
          const paths = Array.from({ length: rate * (SECONDS + WARMUP) }, () => `/${codes[sampler.next()]}`);
          const m0 = await metricsOf(redirect.admin);
          const c0 = cpuSeconds(pid)!;
          const result = await openLoop(rig, { vegeta, base: redirect.base, paths, rate, seconds: SECONDS, warmupSeconds: WARMUP, connections: CONNECTIONS });
          const cpu = cpuSeconds(pid)! - c0;
          const m1 = await metricsOf(redirect.admin);
          const served = delta(lookups(m0), lookups(m1));
          const status503 = (m: Awaited<ReturnType<typeof metricsOf>>) => byLabel(m, 'shortlink_redirect_requests_total', 'status').get('503') ?? 0;
          const refused = status503(m1) - status503(m0);
          const cpuUsPerAnswer = (cpu * 1e6) / (rate * (SECONDS + WARMUP));
          runs.push({ name, result, served, cpuUsPerAnswer, refused });
          log(
            `${size} links, ${name}: p50 ${result.p50ms.toFixed(2)} ms, p99 ${result.p99ms.toFixed(2)}, p99.9 ${result.p999ms.toFixed(2)}, ` +
              `answered ${Math.round(result.answered)}/s, errors ${result.errors}, 503 ${refused}, L1 ${shareOf(served, 'l1').toFixed(1)} %, ` +
              `Redis ${shareOf(served, 'redis').toFixed(1)} %, DB ${shareOf(served, 'db').toFixed(1)} %, CPU ${cpuUsPerAnswer.toFixed(1)} µs/answer`,
          );
        }
        // The bare server at the same rate: its CPU per answer is the baseline.
        const b0 = cpuSeconds(bare.pid)!;
        await openLoop(rig, { vegeta, base: bareBase, paths: ['/x'], rate, seconds: SECONDS, warmupSeconds: WARMUP, connections: CONNECTIONS });
        const bareCpuUsPerAnswer = ((cpuSeconds(bare.pid)! - b0) * 1e6) / (rate * (SECONDS + WARMUP));

        // Unknown codes, each asked once: how many the Bloom filter let through to a shard.
        const m0 = await metricsOf(redirect.admin);
        const unknown = Array.from({ length: UNKNOWN }, () => `zz${randomBytes(8).toString('base64url').replace(/[-_]/g, 'x').slice(0, 6)}`);
        await pooled(unknown.length, 32, async (i) => (await fetch(`${redirect.base}/${unknown[i]}`, { redirect: 'manual' })).status, 10 * 60_000);
        const unknownServed = delta(lookups(m0), lookups(await metricsOf(redirect.admin)));
        const passed = unknownServed['db_miss'] ?? 0;
        const bloomFalsePositiveRate = passed / Math.max(1, passed + (unknownServed['bloom_reject'] ?? 0));
        log(`unknown codes: ${JSON.stringify(unknownServed)}`);

        // L1 filled with up to FILL distinct links, as a long-running instance holds them.
        const fill = codes.slice(0, Math.min(FILL, codes.length));
        await pooled(fill.length, 32, async (i) => (await fetch(`${redirect.base}/${fill[i]}`, { redirect: 'manual' })).status, 20 * 60_000);
        const m = await metricsOf(redirect.admin);
        const l1Entries = metric(m, 'shortlink_redirect_l1_entries');
        log(`L1 holds ${l1Entries} entries after asking ${fill.length} links once each`);
        const heapMiB = metric(m, 'shortlink_process_nodejs_heap_size_used_bytes') / 2 ** 20;
        const rss = rssMiB(pid);
        const redis = await redisFootprint();
        if (HEAP_SNAPSHOT) heapParts.push(`### ${size.toLocaleString('en')} links\n\n${await heapSnapshotOf(pid)}`);
        const t2 = Date.now();
        if (size <= REBUILD_UP_TO)
          execFileSync(process.execPath, ['-r', './tools/register.js', 'tools/cli/src/bloom-rebuild.ts'], { cwd: REPO_ROOT, env, stdio: 'ignore' });
        const bloomRebuildSeconds = size <= REBUILD_UP_TO ? (Date.now() - t2) / 1000 : NaN;
        results.push({
          links: codes.length,
          mariadbBytes: db.bytes,
          redisUsedBytes: redis.usedBytes,
          loadRowsPerSecond,
          readyMs,
          runs,
          bareCpuUsPerAnswer,
          rssMiB: rss,
          l1Entries,
          heapMiB,
          redisBytesPerKey: (redis.usedBytes - redisAtStart.usedBytes) / Math.max(1, redis.keys - redisAtStart.keys),
          redisKeys: redis.keys - redisAtStart.keys,
          mariadbBytesPerLink: db.bytes / Math.max(1, db.rows),
          bloomFalsePositiveRate,
          bloomRebuildSeconds,
          loadSteps: [...loadSteps],
        });
        // The figures so far, after each size (a long run that fails later keeps them).
        const pool = await mariadbFootprint().catch(() => ({ bufferPool: 0 }));
        report(start, startLoad, results, pool.bufferPool, heapParts);
      } finally {
        await redirect.stop();
      }
    }
  } finally {
    for (const g of moreGenerations) await g.stop();
    await generation?.stop();
    await group.stopAll();
    if (tenantId && !KEEP) {
      log('deleting the bench links');
      await deleteTenantLinks([tenantId]);
    }
  }
  const db = await mariadbFootprint().catch(() => ({ bufferPool: 0 }));
  report(start, startLoad, results, db.bufferPool, heapParts);
}

function report(start: Date, startLoad: string, results: SizeResult[], bufferPool: number, heapParts: string[]): void {
  const rows = results.flatMap((r) =>
    r.runs.map((run) => [
      r.links.toLocaleString('en'),
      run.name,
      run.result.rate,
      round(run.result.answered),
      run.result.p50ms.toFixed(2),
      run.result.p99ms.toFixed(2),
      run.result.p999ms.toFixed(2),
      run.refused,
      shareOf(run.served, 'l1').toFixed(1),
      shareOf(run.served, 'redis').toFixed(1),
      shareOf(run.served, 'db').toFixed(1),
      run.cpuUsPerAnswer.toFixed(1),
      (r.bareCpuUsPerAnswer / run.cpuUsPerAnswer).toFixed(2),
    ]),
  );
  const traffic = markdownTable(
    [
      ['links', 'r'],
      ['traffic', 'l'],
      ['offered /s', 'r'],
      ['answered /s', 'r'],
      ['p50 ms', 'r'],
      ['p99 ms', 'r'],
      ['p99.9 ms', 'r'],
      ['503', 'r'],
      ['L1 %', 'r'],
      ['Redis %', 'r'],
      ['DB %', 'r'],
      ['CPU µs / answer', 'r'],
      ['× bare (CPU)', 'r'],
    ],
    rows,
  );
  const sizes = markdownTable(
    [
      ['links', 'r'],
      ['batch load rows/s', 'r'],
      ['redirect ready s', 'r'],
      ['L1 entries', 'r'],
      ['redirect RSS MiB', 'r'],
      ['heap MiB', 'r'],
      ['Redis bytes / key', 'r'],
      ['Redis keys', 'r'],
      ['MariaDB bytes / link', 'r'],
      ['MariaDB MiB (all shards)', 'r'],
      ['Redis MiB (masters)', 'r'],
      ['Bloom false positives %', 'r'],
      ['bloom:rebuild s', 'r'],
    ],
    results.map((r) => [
      r.links.toLocaleString('en'),
      round(r.loadRowsPerSecond),
      (r.readyMs / 1000).toFixed(1),
      r.l1Entries,
      round(r.rssMiB),
      round(r.heapMiB),
      round(r.redisBytesPerKey),
      r.redisKeys,
      round(r.mariadbBytesPerLink),
      round(r.mariadbBytes / 2 ** 20),
      round(r.redisUsedBytes / 2 ** 20),
      (100 * r.bloomFalsePositiveRate).toFixed(2),
      Number.isNaN(r.bloomRebuildSeconds) ? '—' : r.bloomRebuildSeconds.toFixed(1),
    ]),
  );
  const x = results.map((r) => r.links);
  const warm = (r: SizeResult) => r.runs[1];
  const svg = lineChartsSvg('Scale bench: figures against the number of links', x, [
    { title: 'p99 ms, zipf 1.0 warm', values: results.map((r) => warm(r).result.p99ms) },
    { title: 'L1 share %, zipf 1.0 warm', values: results.map((r) => shareOf(warm(r).served, 'l1')) },
    { title: 'DB share %, zipf 1.0 cold', values: results.map((r) => shareOf(r.runs[0].served, 'db')) },
    { title: 'redirect RSS MiB', values: results.map((r) => r.rssMiB) },
    { title: 'Bloom false positives %', values: results.map((r) => 100 * r.bloomFalsePositiveRate) },
    { title: 'MariaDB bytes per link', values: results.map((r) => r.mariadbBytesPerLink) },
    { title: 'MariaDB MiB, all shards', values: results.map((r) => r.mariadbBytes / 2 ** 20) },
    { title: 'Redis MiB, masters', values: results.map((r) => r.redisUsedBytes / 2 ** 20) },
    { title: 'batch load rows/s', values: results.map((r) => r.loadRowsPerSecond) },
    { title: 'p99 ms, zipf 1.0 cold', values: results.map((r) => r.runs[0].result.p99ms) },
    { title: 'redirect ready s', values: results.map((r) => r.readyMs / 1000) },
    { title: 'bloom:rebuild s', values: results.map((r) => r.bloomRebuildSeconds) },
  ]);
  mkdirSync(join(REPO_ROOT, 'docs/img'), { recursive: true });
  writeFileSync(join(REPO_ROOT, 'docs/img/scale.svg'), svg);
  const text = [
    `# Scale bench, ${start.toISOString().slice(0, 10)}`,
    '',
    `Produced by \`node -r ./tools/register.js bench/scale/run.ts ${process.argv.slice(2).join(' ')}\` (see bench/scale/README.md).`,
    '',
    '## Machine',
    '',
    ...machineFacts({ start, startLoad }),
    `- MariaDB buffer pool: ${(bufferPool / 2 ** 20).toFixed(0)} MiB per instance`,
    `- redirect: compiled (${FROM_SOURCES ? 'no: from the sources' : 'as the image runs it'}), --max-semi-space-size=${SEMI_SPACE}${OLD_SPACE > 0 ? ` --max-old-space-size=${OLD_SPACE}` : ''}`,
    '',
    '## Traffic (open loop, vegeta, one redirect pinned to core 1, Kafka click bus)',
    '',
    traffic,
    '',
    '## Footprint at each size',
    '',
    sizes,
    '',
    '## Batch load rate as the tables grow',
    '',
    markdownTable(
      [
        ['links loaded', 'r'],
        ['rows/s over the last step', 'r'],
      ],
      (results.at(-1)?.loadSteps ?? []).map((s) => [s.links.toLocaleString('en'), round(s.rowsPerSecond)]),
    ),
    '',
    'Plots: `docs/img/scale.svg`.',
    '',
    ...(heapParts.length ? ["## The redirect's heap by constructor (self size, from a heap snapshot)", '', ...heapParts, ''] : []),
  ].join('\n');
  const dir = join(REPO_ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = datedResultFile(dir, 'scale', start);
  writeFileSync(file, text);
  console.log(text);
  log(`written ${file} and docs/img/scale.svg`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
