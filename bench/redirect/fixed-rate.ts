/**
 * CPU per request at a fixed offered rate, and CPU at rest (docs/benchmarks.md, issue 33): the bare
 * node:http server and the embedded redirect (L1 hit, one plain link, SQLite, the Kafka bus on a topic
 * of its own) of two trees, all on core 0, the loader (autocannon in this process) wherever this runs
 * (`taskset -c 1`). Each server is loaded in turn at `RATE` requests a second for `SECS` seconds,
 * `ROUNDS` rounds interleaved; the CPU time of the process (/proc, all its threads) above its own idle
 * rate, per answered redirect, is what it prints, and the bare server's over each redirect's. At a fixed
 * rate the CPU a request costs does not depend on how much of the core the process gets, which the
 * side-by-side ratio does when the machine is loaded: the CPU a process burns with no request at all
 * (timers, pollers) is measured apart, over 20 s after a warm-up.
 *
 *   set -a; . deploy/local/.run/stack.env; set +a
 *   AB_BASE=/tmp/base AB_TIP=$PWD RATE=1500 taskset -c 1 node -r ./tools/register.js bench/redirect/fixed-rate.ts
 */
import { mkdtempSync, readFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Kafka, logLevel } from 'kafkajs';
import { ensureClickTopic } from '@shortlink/bus';
import {
  createLinks,
  freePort,
  ProcessGroup,
  REPO_ROOT,
  serverSecrets,
  sleep,
  startApp,
  startProcess,
  whenServing,
  withoutAppSettings,
} from '@shortlink/harness';

// autocannon has no types here; the harness' runner requires it the same way.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (o: object, done: (e: Error | null, r: { '3xx': number }) => void) => void;

/** 100 connections on `url` for `seconds`, at `rate` requests a second in all when given. */
const fire = (url: string, seconds: number, rate?: number): Promise<{ '3xx': number }> =>
  new Promise((resolve, reject) =>
    autocannon({ url, connections: 100, duration: seconds, ...(rate ? { overallRate: rate } : {}) }, (e, r) => (e ? reject(e) : resolve(r))),
  );

const ticks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
};
async function main() {
  const group = new ProcessGroup();
  const tmp = mkdtempSync(join(tmpdir(), 'fixed-'));
  const key = 'sl_fixed_key_0123456789abcdef0123';
  const secrets = serverSecrets();
  const brokers = process.env.KAFKA_BROKERS!;
  const topic = `shortlink.clicks.hperf.${Date.now().toString(36)}`;
  await ensureClickTopic(brokers.split(','), topic, 6);
  const rate = Number(process.env.RATE ?? 1500);
  const seconds = Number(process.env.SECS ?? 10);
  const rounds = Number(process.env.ROUNDS ?? 3);
  const trees: Record<string, string> = { base: process.env.AB_BASE!, tip: process.env.AB_TIP ?? REPO_ROOT };
  const servers: Record<string, { base: string; pid: number; path: string }> = {};
  try {
    const bport = await freePort();
    const bare = startProcess('bench/redirect/bare-server.ts', { BENCH_BARE_PORT: String(bport) }, { name: 'bare', core: '0', group });
    await whenServing(bare, 'bare', async () => (await fetch(`http://127.0.0.1:${bport}/x`, { redirect: 'manual' })).status === 302, 60_000, 200);
    servers.bare = { base: `http://127.0.0.1:${bport}`, pid: bare.pid, path: '/x' };
    for (const [name, cwd] of Object.entries(trees)) {
      const env = {
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        HOST: '127.0.0.1',
        SHORTLINK_DEFAULT_DOMAIN: 'bench.shortlink.test',
        SHORTLINK_DATA_DIR: mkdtempSync(join(tmp, `${name}-`)),
        SHORTLINK_BOOTSTRAP_API_KEY: key,
        ...secrets,
        DB_DRIVER: 'sqlite',
        CACHE_DRIVER: 'memory',
        BUS_DRIVER: 'kafka',
        KAFKA_BROKERS: brokers,
        KAFKA_CLICK_TOPIC: topic,
        KAFKA_CLICK_PARTITIONS: '6',
        RATE_LIMIT_PER_IP_PER_MINUTE: '0',
        RATE_LIMIT_GLOBAL_PER_SECOND: '0',
      };
      const gen = await startApp('generation', { ...env, BUS_DRIVER: 'memory' }, { cwd, baseEnv: withoutAppSettings(), group, timeoutMs: 120_000 });
      const [link] = await createLinks({ generation: gen.base, apiKey: key, count: 1, url: () => 'https://example.com/bench/fixed?ref=redirect-bench' });
      await gen.stop();
      const app = await startApp('redirect', env, {
        cwd,
        core: '0',
        nodeArgs: ['--max-semi-space-size=64'],
        baseEnv: withoutAppSettings(),
        group,
        timeoutMs: 120_000,
      });
      servers[name] = { base: app.base, pid: app.proc.pid, path: `/${link.code}` };
    }
    const names = Object.keys(servers);
    for (const n of names) await fire(servers[n].base + servers[n].path, 3);
    await sleep(3000);
    const idle: Record<string, number> = {};
    const i0 = Object.fromEntries(names.map((n) => [n, ticks(servers[n].pid)]));
    await sleep(20_000);
    for (const n of names) idle[n] = ((ticks(servers[n].pid) - i0[n]) * 10) / 20; // ms CPU per second
    console.log(`idle CPU ms/s: ${names.map((n) => `${n} ${idle[n].toFixed(2)}`).join(', ')}`);
    const per: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < rounds; r++) {
      for (const n of names) {
        const t0 = ticks(servers[n].pid);
        const res = await fire(servers[n].base + servers[n].path, seconds, rate);
        const cpuMs = (ticks(servers[n].pid) - t0) * 10 - idle[n] * seconds;
        const reqs = res['3xx'];
        per[n].push((cpuMs * 1000) / reqs);
        console.log(
          `round ${r + 1} ${n}: ${(reqs / seconds).toFixed(0)} rps (3xx), CPU beyond idle ${cpuMs.toFixed(0)} ms, ${((cpuMs * 1000) / reqs).toFixed(1)} µs/request`,
        );
      }
    }
    const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
    for (const n of names) console.log(`${n}: median ${med(per[n]).toFixed(1)} µs/request; bare/${n} ${(med(per.bare) / med(per[n])).toFixed(3)}`);
  } finally {
    await group.stopAll();
    const admin = new Kafka({ brokers: brokers.split(','), clientId: 'hperf-cleanup', logLevel: logLevel.NOTHING }).admin();
    await admin
      .connect()
      .then(() => admin.deleteTopics({ topics: [topic], timeout: 10_000 }))
      .catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}
main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
