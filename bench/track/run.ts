/**
 * Track endpoints' bench (issue 38: "the track endpoints take ≥ 2 000 events/s on this machine"), on
 * demand, on the local real stack (`set -a; . <stack.env>; set +a`): POST /api/v1/track/lead, then
 * POST /api/v1/track/sale, at fixed rates, open loop (vegeta: requests leave on schedule whatever
 * the answers do), each rate for --seconds after a warm-up. Every request is a new event: a lead of a
 * new customer (all with the click id of one tracked link, as a campaign's landing page gives many),
 * then a sale of one of those customers with an invoice id of its own; a duplicate would answer
 * without a write and flatter the rate. The generation app runs as in production: MariaDB meta
 * database and shards, Redis Cluster (the plan's windows), the conversions topic on Kafka (acks from
 * every in-sync replica before the 201, docs/analytics.md "Exactly once"), a topic of its own per
 * invocation. A redirect app gives the click id. Reports p50/p99, the answers per status, the
 * events counted per second and the app's CPU per event, and the largest rate whose answers are all
 * 201 with p99 under 1 s. Writes bench/results/track-<date>.md. 127.0.0.1 only.
 * `--baseline=<checkout>`: the generation app of another checkout (the code before a change) too,
 * both up at once, each rate's runs alternating between them (medians of `--runs`, and the ratio
 * after/before of each run pair: the shared machine's load moves between runs). `--profile=<rate>`:
 * a CPU profile of each app under leads, then sales, at that rate, summarised (no table).
 *   node -r ./tools/register.js bench/track/run.ts [--rates=1000,2000,3000] [--seconds=10] [--warmup=2] [--runs=1] [--baseline=<dir>] [--profile=800]
 */
import { randomUUID } from 'crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
import { Kafka, logLevel } from 'kafkajs';
import {
  App,
  captureProfile,
  cpuSeconds,
  writeResultFile,
  findVegeta,
  loadAverages,
  machineFacts,
  markdownTable,
  PROFILE_HOOK,
  profileHookEnv,
  REPO_ROOT,
  serverSecrets,
  startApp,
  startCommand,
  summariseProfile,
} from '@shortlink/harness';

const option = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const RATES = option('rates', '1000,2000,3000').split(',').map(Number);
const SECONDS = Number(option('seconds', '10'));
const WARMUP = Number(option('warmup', '2'));
const RUNS = Number(option('runs', '1'));
const BASELINE = option('baseline', '') || null;
const PROFILE_RATE = Number(option('profile', '0'));
const API_KEY = `sl_bench_${randomUUID().replace(/-/g, '')}`;
const RUN = Date.now().toString(36);
const log = (m: string) => process.stderr.write(`[track] ${m}\n`);

interface Result {
  variant: string;
  kind: 'lead' | 'sale';
  rate: number;
  p50: number;
  p99: number;
  max: number;
  ok: number;
  sent: number;
  statuses: string;
  /** 201s per second over the measured seconds. */
  perSecond: number;
  appCpuMs: number | null;
  /** The shared stack's servers' CPU ms per 201 over the attack: MariaDB (both), Kafka, Redis (every node); other users' load included. */
  serverCpuMs: { mariadb: number; kafka: number; redis: number } | null;
}

/** The shared stack's server processes (stack.env's pids), for their CPU per event. */
const serverPids = () => {
  const pids = (names: string[]) => names.map((n) => Number(process.env[n])).filter((p) => p > 0);
  return {
    mariadb: pids(['STACK_MYSQL_A_PID', 'STACK_MYSQL_B_PID']),
    kafka: pids(['STACK_KAFKA_PID']),
    redis: pids(Object.keys(process.env).filter((k) => /^STACK_REDIS_PID_\d+$/.test(k))),
  };
};
const serverCpu = () => {
  const of = (pids: number[]) => pids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);
  const p = serverPids();
  return { mariadb: of(p.mariadb), kafka: of(p.kafka), redis: of(p.redis) };
};

/** One rate of one kind: vegeta over JSON targets (one new event each), its CSV read back, the warm-up left out. */
async function attack(vegeta: string, dir: string, kind: 'lead' | 'sale', rate: number, app: Variant, clickId: string, run: number): Promise<Result> {
  const base = app.app!.base;
  const appPid = app.app!.proc.pid;
  const total = rate * (SECONDS + WARMUP) + rate;
  const tag = `${app.name}-${rate}-${run}`;
  const targets = join(dir, `${kind}-${tag}.json`);
  const header = { 'Content-Type': ['application/json'], 'X-Api-Key': [API_KEY] };
  // A sale names a customer whose lead the same variant, rate and run reported.
  const customer = (i: number) => `bench-${RUN}-${tag}-${i}`;
  const lines: string[] = [];
  for (let i = 0; i < total; i++) {
    const body =
      kind === 'lead'
        ? { clickId, eventName: 'Sign up', customerId: customer(i) }
        : { customerId: customer(i), amount: 4900, currency: 'EUR', eventName: 'Purchase', invoiceId: `inv-${RUN}-${tag}-${i}` };
    lines.push(JSON.stringify({ method: 'POST', url: `${base}/api/v1/track/${kind}`, header, body: Buffer.from(JSON.stringify(body)).toString('base64') }));
  }
  writeFileSync(targets, lines.join('\n') + '\n');
  const csv = join(dir, `${kind}-${tag}.csv`);
  const before = cpuSeconds(appPid);
  const serversBefore = serverCpu();
  const cmd = `'${vegeta}' attack -format=json -rate=${rate}/s -duration=${SECONDS + WARMUP}s -targets='${targets}' -connections=128 -max-workers=512 -timeout=10s | '${vegeta}' encode --to csv > '${csv}'`;
  const proc = startCommand('sh', ['-c', cmd], { name: 'vegeta', env: { GOMAXPROCS: '1' } });
  await proc.exited;
  const after = cpuSeconds(appPid);
  const serversAfter = serverCpu();
  const lines2 = existsSync(csv) ? readFileSync(csv, 'utf8').split('\n').filter(Boolean) : [];
  const rows = lines2.map((l) => l.split(',', 3).map(Number));
  // One answer of each other status, as vegeta kept it (7th column: the body, base64): what refused.
  const samples = new Map<number, string>();
  for (const l of lines2) {
    const cols = l.split(',');
    const status = Number(cols[1]);
    if (status !== 201 && !samples.has(status))
      samples.set(
        status,
        Buffer.from(cols[6] ?? '', 'base64')
          .toString('utf8')
          .slice(0, 300),
      );
  }
  for (const [status, body] of samples) log(`${app.name} ${kind} ${rate}/s: a ${status} answered ${body}`);
  if (!rows.length) throw new Error(`vegeta produced no results: ${proc.output().slice(-2000)}`);
  const t0 = Math.min(...rows.map((r) => r[0]));
  const kept = rows.filter((r) => r[0] >= t0 + WARMUP * 1e9);
  const latencies = kept.map((r) => r[2] / 1e6).sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)];
  const ok = kept.filter((r) => r[1] === 201).length;
  const byStatus = new Map<number, number>();
  for (const r of kept) if (r[1] !== 201) byStatus.set(r[1], (byStatus.get(r[1]) ?? 0) + 1);
  const allOk = rows.filter((r) => r[1] === 201).length || 1;
  return {
    variant: app.name,
    kind,
    rate,
    p50: pct(0.5),
    p99: pct(0.99),
    max: latencies[latencies.length - 1],
    ok,
    sent: kept.length,
    statuses: [...byStatus].map(([s, n]) => `${s}×${n}`).join(' ') || '-',
    perSecond: ok / SECONDS,
    appCpuMs: before === null || after === null ? null : ((after - before) * 1000) / allOk,
    serverCpuMs: serverPids().mariadb.length
      ? {
          mariadb: ((serversAfter.mariadb - serversBefore.mariadb) * 1000) / allOk,
          kafka: ((serversAfter.kafka - serversBefore.kafka) * 1000) / allOk,
          redis: ((serversAfter.redis - serversBefore.redis) * 1000) / allOk,
        }
      : null,
  };
}

/** The invocation's conversions topic, deleted after it (the shared stack keeps no bench topics). */
async function deleteTopic(topic: string): Promise<void> {
  const admin = new Kafka({ brokers: process.env.KAFKA_BROKERS!.split(','), logLevel: logLevel.NOTHING }).admin();
  try {
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] });
    log(`topic ${topic} deleted`);
  } catch (error) {
    log(`topic ${topic} not deleted: ${(error as Error).message}`);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

interface Variant {
  readonly name: string;
  readonly dir: string;
  app?: App;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function main() {
  const started = new Date();
  const startLoad = loadAverages();
  const vegeta = findVegeta(log);
  if (!vegeta) throw new Error('vegeta is needed (go install github.com/tsenart/vegeta/v12@v12.13.0)');
  if (process.env.BUS_DRIVER !== 'kafka' || !process.env.KAFKA_BROKERS) throw new Error('source the real stack’s stack.env first (BUS_DRIVER=kafka)');
  const dir = mkdtempSync(join(tmpdir(), 'bench-track-'));
  const profileFile = (name: string) => join(dir, `${name}.cpuprofile`);
  const env = {
    DB_DRIVER: 'mysql',
    CACHE_DRIVER: 'redis',
    LOG_LEVEL: 'warn',
    SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
    ...serverSecrets(),
    SHORTLINK_PUBLIC_BASE_URL: 'http://bench.shortlink.test',
    KAFKA_CONVERSIONS_TOPIC: `shortlink.conversions.bench-${RUN}`,
    // The plan's limits are not what is measured here (they have their own tests).
    PLAN_PAID_REQUESTS_PER_MINUTE: '100000000',
    PLAN_PAID_CONVERSIONS_PER_MONTH: '100000000',
  };
  const variants: Variant[] = [...(BASELINE ? [{ name: 'before', dir: resolve(BASELINE) }] : []), { name: BASELINE ? 'after' : 'current', dir: REPO_ROOT }];
  let redirect: App | undefined;
  try {
    for (const v of variants)
      v.app = await startApp(
        'generation',
        { ...env, ...(PROFILE_RATE ? profileHookEnv(profileFile(v.name)) : {}) },
        {
          checkout: v.dir,
          nodeArgs: ['--max-semi-space-size=64'],
          timeoutMs: 120_000,
          ...(PROFILE_RATE ? { preload: [PROFILE_HOOK] } : {}),
        },
      );
    const generation = variants[variants.length - 1].app!;
    redirect = await startApp('redirect', env, { timeoutMs: 120_000 });
    const made = await fetch(`${generation.base}/api/v1/links`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: JSON.stringify({ url: 'https://shop.example/landing', trackConversions: true }),
    });
    const link = (await made.json()) as { code?: string };
    if (made.status !== 201 || !link.code) throw new Error(`creating the tracked link: ${made.status} ${JSON.stringify(link)}`);
    const click = await fetch(`${redirect.base}/${link.code}`, { redirect: 'manual' });
    const clickId = new URL(click.headers.get('location') ?? 'http://x/').searchParams.get('sl_cid');
    if (!clickId) throw new Error(`the redirect gave no click id: ${click.status} ${click.headers.get('location')}`);
    await redirect.stop();
    redirect = undefined;
    log(`link ${link.code}, click id ${clickId}; warm-up`);
    for (const v of variants) {
      await attack(vegeta, dir, 'lead', 200, v, clickId, -1);
      await attack(vegeta, dir, 'sale', 200, v, clickId, -1);
    }
    if (PROFILE_RATE) {
      for (const v of variants)
        for (const kind of ['lead', 'sale'] as const) {
          const file = profileFile(v.name);
          const { result, profile } = await captureProfile(v.app!.proc, file, () => attack(vegeta, dir, kind, PROFILE_RATE, v, clickId, -2));
          process.stdout.write(
            `## ${v.name}, ${kind}s at ${PROFILE_RATE}/s under the profiler: ${result.perSecond.toFixed(0)} counted/s, p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, other ${result.statuses}, app ${result.appCpuMs?.toFixed(2)} ms CPU an event\n\n${profile ? summariseProfile(profile) : 'no profile written'}\n\n`,
          );
        }
      return;
    }
    // Runs of each rate alternate between the variants, so that both meet the same moments of a shared machine.
    const results: Result[] = [];
    for (const rate of RATES)
      for (let run = 0; run < RUNS; run++)
        for (const v of variants)
          for (const kind of ['lead', 'sale'] as const) {
            const r = await attack(vegeta, dir, kind, rate, v, clickId, run);
            results.push(r);
            log(
              `${v.name} ${kind} ${rate}/s run ${run + 1}: ${r.perSecond.toFixed(0)} counted/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, other ${r.statuses}, app ${r.appCpuMs?.toFixed(2)} ms CPU an event, servers ${
                r.serverCpuMs
                  ? Object.values(r.serverCpuMs)
                      .map((c) => c.toFixed(2))
                      .join('/')
                  : '?'
              }`,
            );
          }
    const of = (variant: string, kind: string, rate: number) => results.filter((r) => r.variant === variant && r.kind === kind && r.rate === rate);
    const best = (variant: string, kind: string) => {
      const fine = RATES.filter((rate) => {
        const rs = of(variant, kind, rate);
        return rs.length > 0 && median(rs.map((r) => r.sent - r.ok)) === 0 && median(rs.map((r) => r.p99)) < 1000;
      });
      return fine.length ? Math.max(...fine) : null;
    };
    const rows: (string | number)[][] = [];
    for (const rate of RATES)
      for (const kind of ['lead', 'sale'] as const)
        for (const v of variants) {
          const rs = of(v.name, kind, rate);
          const cpu = rs.map((r) => r.appCpuMs).filter((c): c is number => c !== null);
          // Ratio to the baseline: of each run to the baseline's run just before it, then their median.
          const base = BASELINE && v.name === 'after' ? of('before', kind, rate) : [];
          const ratio = base.length ? median(rs.map((r, i) => r.perSecond / Math.max(1, base[i]?.perSecond ?? 0))).toFixed(2) : '';
          const cpuRatio = base.length ? median(rs.map((r, i) => (r.appCpuMs ?? NaN) / (base[i]?.appCpuMs ?? NaN))).toFixed(2) : '';
          rows.push([
            v.name,
            `POST /api/v1/track/${kind}`,
            rate,
            median(rs.map((r) => r.perSecond)).toFixed(0),
            ratio,
            median(rs.map((r) => r.p50)).toFixed(1),
            median(rs.map((r) => r.p99)).toFixed(1),
            `${median(rs.map((r) => r.ok))} of ${median(rs.map((r) => r.sent))}`,
            rs.map((r) => r.statuses).join(' / '),
            cpu.length ? median(cpu).toFixed(2) : '?',
            cpuRatio,
            rs.every((r) => r.serverCpuMs)
              ? (['mariadb', 'kafka', 'redis'] as const).map((k) => median(rs.map((r) => r.serverCpuMs![k])).toFixed(2)).join(' / ')
              : '?',
          ]);
        }
    const table = markdownTable(
      [
        ['code', 'l'],
        ['endpoint', 'l'],
        ['rate (req/s)', 'r'],
        ['201 / s', 'r'],
        ['× before', 'r'],
        ['p50 ms', 'r'],
        ['p99 ms', 'r'],
        ['201s of sent', 'r'],
        ['other (status×count, per run)', 'l'],
        ['app CPU ms / event', 'r'],
        ['CPU × before', 'r'],
        ['servers CPU ms / event (MariaDB / Kafka / Redis)', 'r'],
      ],
      rows,
    );
    const report = [
      `# Track endpoints bench, ${started.toISOString()}`,
      '',
      ...machineFacts({ start: started, startLoad, tools: [`vegeta: ${vegeta}`, ...(BASELINE ? [`baseline: ${BASELINE}`] : [])] }),
      '',
      `Open loop, ${SECONDS} s per rate after ${WARMUP} s of warm-up, medians of ${RUNS} run(s)${BASELINE ? ', the two apps up at once and their runs alternating' : ''}; every request a new event (a lead of a new customer, then a sale with its own invoice id); the generation app against MariaDB (meta and shards), Redis Cluster and Kafka (the conversions topic, acks from every in-sync replica before the 201). CPU ms per event: the app's CPU time over the attack (warm-up included) per 201; the servers' likewise (they serve the other users of the shared stack too). × before: the median of each run's ratio to the baseline's run just before it.`,
      '',
      table,
      '',
      ...variants.map(
        (v) =>
          `Largest rate with every answer 201 and p99 < 1 s (${v.name}): leads ${best(v.name, 'lead') ?? 'none of the rates tried'}/s, sales ${best(v.name, 'sale') ?? 'none of the rates tried'}/s (goal: 2 000 events/s).`,
      ),
      '',
    ].join('\n');
    process.stdout.write(`${report}\n`);
    const file = writeResultFile('track', started, report);
    log(`written to ${file}`);
  } finally {
    await redirect?.stop();
    for (const v of variants) await v.app?.stop();
    rmSync(dir, { recursive: true, force: true });
    await deleteTopic(env.KAFKA_CONVERSIONS_TOPIC);
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
