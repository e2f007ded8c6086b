/**
 * Sizing run: per app, resident memory idle and under load, and throughput per CPU
 * second on the real stack, for the resource requests in deploy/k8s and for docs/capacity.md.
 * By hand, never in CI (it loads the machine):
 *
 *   set -a; . deploy/local/.run/stack.env; set +a
 *   node -r ./tools/register.js bench/sizing/run.ts [--seconds 10] [--runs 3]
 *
 * The redirect and a bare node:http 302 server (the baseline of the same run) are pinned to core 0,
 * the loader (wrk, or autocannon) to core 1. Each redirect case is measured `runs` times, each run
 * paired with a bare run. Creates go through the generation API at 16 in flight; the analytics
 * consumer ingests the clicks of the redirect runs from a Kafka topic of its own.
 */
import { randomBytes } from 'crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Kafka, logLevel } from 'kafkajs';
import {
  App,
  closedLoop,
  cpuSeconds,
  datedResultFile,
  defaultClosedLoopLoader,
  fmt,
  freePort,
  keepAliveAgent,
  loadAverages,
  machineFacts,
  markdownTable,
  median,
  metric,
  metricsOf,
  ProcessGroup,
  REPO_ROOT,
  send,
  serverSecrets,
  sleep,
  startApp,
  startProcess,
  whenServing,
  withoutAppSettings,
} from '@shortlink/harness';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS = arg('seconds', 10);
const RUNS = arg('runs', 3);
const SERVER_CORE = '0';
const LOADER_CORE = '1';
const DOMAIN = 'sizing.shortlink.test';

/** Resident set size in MiB, from /proc (0 when the process is gone). */
function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples the RSS of `pid` every 200 ms until stopped; returns the peak. */
function rssPeak(pid: number): () => number {
  let peak = rssMiB(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 200);
  return () => {
    clearInterval(timer);
    return Math.max(peak, rssMiB(pid));
  };
}

async function main() {
  const start = new Date();
  const startLoad = loadAverages();
  for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', 'CLICKHOUSE_URL']) {
    if (!process.env[name]) throw new Error(`${name} is not set: source the stack's stack.env first`);
  }
  const log = (m: string) => process.stderr.write(`[sizing +${((Date.now() - start.getTime()) / 1000).toFixed(0)}s] ${m}\n`);
  const group = new ProcessGroup({ log });
  const tmpDir = mkdtempSync(join(tmpdir(), 'shortlink-sizing-'));
  const rig = { tmpDir, group, core: LOADER_CORE };
  const run = Date.now().toString(36);
  const topic = `shortlink.clicks.sizing.${run}`;
  const apiKey = `sl_sizing_${randomBytes(12).toString('hex')}`;
  const env: Record<string, string> = {
    DB_DRIVER: 'mysql',
    CACHE_DRIVER: 'redis',
    BUS_DRIVER: 'kafka',
    OLAP_DRIVER: 'clickhouse',
    MYSQL_SHARDS: process.env.MYSQL_SHARDS!,
    MYSQL_META_URL: process.env.MYSQL_META_URL!,
    MYSQL_SPARE_SHARDS: process.env.MYSQL_SPARE_SHARDS ?? '',
    REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES!,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS!,
    CLICKHOUSE_URL: process.env.CLICKHOUSE_URL!,
    KAFKA_CLICK_TOPIC: topic,
    KAFKA_CONSUMER_GROUP: `${topic}.analytics`,
    CLICKHOUSE_DATABASE: `shortlink_sizing_${run}`,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    SHORTLINK_DEFAULT_DOMAIN: DOMAIN,
    SHORTLINK_BOOTSTRAP_API_KEY: apiKey,
    ...serverSecrets(),
    RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    RATE_LIMIT_GLOBAL_PER_SECOND: '0',
  };
  const opts = { baseEnv: withoutAppSettings(), group, timeoutMs: 90_000, nodeArgs: ['--max-semi-space-size=64'] };
  const rows: Array<Array<string | number>> = [];
  const notes: string[] = [];
  try {
    log('starting generation, analytics, two redirects (L1 on, L1 off) and the bare server');
    const generation = await startApp('generation', env, opts);
    const analytics = await startApp('analytics', env, opts);
    const l1 = await startApp('redirect', env, { ...opts, core: SERVER_CORE });
    const redis = await startApp('redirect', { ...env, REDIRECT_L1_ENABLED: 'false' }, { ...opts, core: SERVER_CORE });
    const barePort = await freePort();
    const bare = startProcess(
      'bench/redirect/bare-server.ts',
      { BENCH_BARE_PORT: String(barePort) },
      { core: SERVER_CORE, baseEnv: withoutAppSettings(), group },
    );
    const bareBase = `http://127.0.0.1:${barePort}`;
    await whenServing(bare, 'bare server', async () => (await fetch(bareBase, { redirect: 'manual' })).status === 302, 20_000);
    await sleep(5000);
    const idle = (app: App) => rssMiB(app.proc.pid);
    const idleRss = { generation: idle(generation), analytics: idle(analytics), redirect: idle(l1) };

    // Creates: 16 in flight for SECONDS.
    log(`creates for ${SECONDS} s`);
    const codes: string[] = [];
    const genCpu0 = cpuSeconds(generation.proc.pid)!;
    const genPeak = rssPeak(generation.proc.pid);
    const until = Date.now() + SECONDS * 1000;
    const t0 = Date.now();
    let failed = 0;
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; Date.now() < until; i++) {
          const res = await fetch(`${generation.base}/api/v1/links`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
            body: JSON.stringify({ url: `https://example.com/sizing/${w}/${i}` }),
          });
          const body = (await res.json()) as { code?: string };
          if (res.status === 201 && body.code) codes.push(body.code);
          else failed++;
        }
      }),
    );
    const createSeconds = (Date.now() - t0) / 1000;
    const genCpu = cpuSeconds(generation.proc.pid)! - genCpu0;
    rows.push([
      'generation: creates (16 in flight)',
      Math.round(codes.length / createSeconds),
      `${fmt((genCpu / createSeconds) * 100, 0)} %`,
      Math.round(codes.length / genCpu),
      fmt(idleRss.generation, 0),
      fmt(genPeak(), 0),
      failed ? `${failed} failed` : '',
    ]);

    // Redirects: 1000 codes, warmed into Redis (and L1 of the first redirect).
    const paths = codes.slice(0, 1000).map((c) => `/${c}`);
    const agent = keepAliveAgent();
    for (const p of paths) {
      await send(agent, l1.base, p);
      await send(agent, redis.base, p);
    }
    agent.destroy();
    const events0 = metric(await metricsOf(analytics.admin), 'shortlink_analytics_events_total');
    const anaCpu0 = cpuSeconds(analytics.proc.pid)!;
    const anaPeak = rssPeak(analytics.proc.pid);
    const ingestT0 = Date.now();
    const loader = defaultClosedLoopLoader();
    const measure = async (name: string, base: string, pid: number | null) => {
      const runs: Array<{ rps: number; cpu: number; bareRps: number; bareCpu: number; peak: number }> = [];
      for (let r = 0; r < RUNS; r++) {
        const b = await closedLoop(rig, { loader, base: bareBase, paths, connections: 100, seconds: SECONDS, cpuOf: bare.pid });
        const peak = pid === null ? () => 0 : rssPeak(pid);
        const c = await closedLoop(rig, { loader, base, paths, connections: 100, seconds: SECONDS, cpuOf: pid ?? bare.pid });
        runs.push({ rps: c.rps, cpu: c.cpu ?? 100, bareRps: b.rps, bareCpu: b.cpu ?? 100, peak: peak() });
        log(`${name} run ${r + 1}: ${Math.round(c.rps)} rps at ${fmt(c.cpu ?? 0, 0)} % CPU (bare ${Math.round(b.rps)} at ${fmt(b.cpu ?? 0, 0)} %)`);
      }
      return runs;
    };
    for (const [name, app] of [
      ['redirect: L1 hit', l1],
      ['redirect: Redis hit (L1 off)', redis],
    ] as const) {
      const runs = await measure(name, app.base, app.proc.pid);
      const perCore = median(runs.map((x) => x.rps / (x.cpu / 100)));
      const barePerCore = median(runs.map((x) => x.bareRps / (x.bareCpu / 100)));
      rows.push([
        `${name}, 1000 codes`,
        Math.round(median(runs.map((x) => x.rps))),
        `${fmt(median(runs.map((x) => x.cpu)), 0)} %`,
        Math.round(perCore),
        fmt(idleRss.redirect, 0),
        fmt(Math.max(...runs.map((x) => x.peak)), 0),
        `bare ${Math.round(barePerCore)} rps per core (× ${fmt(perCore / barePerCore)})`,
      ]);
    }
    // The analytics consumer: what it ingested of the redirect runs' clicks, until the topic is drained.
    let events = 0;
    for (let last = -1; ;) {
      await sleep(2000);
      events = metric(await metricsOf(analytics.admin), 'shortlink_analytics_events_total') - events0;
      if (events === last) break;
      last = events;
    }
    const anaCpu = cpuSeconds(analytics.proc.pid)! - anaCpu0;
    rows.push([
      'analytics: click ingest (Kafka → ClickHouse)',
      Math.round(events / ((Date.now() - ingestT0) / 1000)),
      `${fmt((anaCpu / ((Date.now() - ingestT0) / 1000)) * 100, 0)} %`,
      Math.round(events / anaCpu),
      fmt(idleRss.analytics, 0),
      fmt(anaPeak(), 0),
      `${events} events; rate over the whole redirect phase, not a saturation figure`,
    ]);
    notes.push(
      `loader: ${loader}; ${RUNS} runs of ${SECONDS} s per redirect case, each after a bare run; CPU from /proc of the server process only (Redis, MariaDB, Kafka, ClickHouse not counted).`,
    );
  } finally {
    await group.stopAll();
    rmSync(tmpDir, { recursive: true, force: true });
    const admin = new Kafka({ brokers: process.env.KAFKA_BROKERS!.split(','), clientId: 'sizing-cleanup', logLevel: logLevel.NOTHING }).admin();
    await admin
      .connect()
      .then(() => admin.deleteTopics({ topics: [topic], timeout: 10_000 }))
      .catch(() => undefined)
      .finally(() => admin.disconnect());
  }
  const table = markdownTable(
    [
      ['what', 'l'],
      ['per second', 'r'],
      ['server CPU', 'r'],
      ['per CPU second', 'r'],
      ['RSS idle MiB', 'r'],
      ['RSS peak MiB', 'r'],
      ['notes', 'l'],
    ],
    rows,
  );
  const report = [`# Sizing run ${start.toISOString()}`, '', ...machineFacts({ start, startLoad }), '', table, '', ...notes.map((n) => `- ${n}`), ''].join(
    '\n',
  );
  const file = datedResultFile(join(REPO_ROOT, 'bench', 'results'), 'sizing', start);
  writeFileSync(file, report);
  process.stdout.write(`${report}\nwritten to ${file}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
