/**
 * Single-create bench, on demand, on the local real stack (`set -a; . <stack.env>; set +a`):
 * POST /api/v1/links at fixed rates, open loop (vegeta: requests leave on schedule whatever the
 * answers do, so the percentiles are what a client sees at that load), each rate for --seconds
 * after a warm-up. Reports p50/p90/p99 per rate and the largest rate whose p99 stays under 100 ms
 * with every answer a 201 (the system-design article's target, docs/design.md). Prints a markdown table and writes
 * bench/results/create-<date>.md. 127.0.0.1 only.
 * Per rate it also gives the CPU milliseconds each create cost the generation process and the
 * MariaDB servers (from /proc: what the machine's other load changes least), and the statuses of
 * the answers that were not 201. `--profile=<rate>`: a CPU profile of the app at that rate, summarised.
 * `--baseline=<checkout>`: the generation app of another checkout (the code before a change) too,
 * each rate's runs alternating between the two.
 *   node -r ./tools/register.js bench/create/run.ts [--rates=25,50,100,200,300,400] [--seconds=10] [--warmup=2] [--runs=1] [--baseline=<dir>] [--profile=400]
 */
import { randomUUID } from 'crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
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
const RATES = option('rates', '25,50,100,200,300,400').split(',').map(Number);
const SECONDS = Number(option('seconds', '10'));
const WARMUP = Number(option('warmup', '2'));
const PROFILE_RATE = Number(option('profile', '0'));
const RUNS = Number(option('runs', '1'));
const BASELINE = option('baseline', '') || null;
const API_KEY = `sl_bench_${randomUUID().replace(/-/g, '')}`;
const log = (m: string) => process.stderr.write(`[create] ${m}\n`);

interface Result {
  rate: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  created: number;
  other: number;
  /** Statuses of the answers that were not 201, with their counts (0: no answer in time). */
  statuses: string;
  /** CPU ms per create of the generation process, and of the MariaDB servers together. */
  appCpuMs: number | null;
  dbCpuMs: number | null;
}

/** The MariaDB servers' PIDs of the stack (stack.env names them). */
const mariadbPids = () => [process.env.STACK_MYSQL_A_PID, process.env.STACK_MYSQL_B_PID].filter(Boolean).map(Number);
const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);

/** One rate: vegeta with JSON targets (POST bodies), its CSV results read back; the warm-up seconds left out. */
async function attack(vegeta: string, dir: string, targets: string, rate: number, appPid: number): Promise<Result> {
  const csv = join(dir, `results-${rate}.csv`);
  const cpuBefore = { app: cpuSeconds(appPid), db: cpuOf(mariadbPids()) };
  const cmd = `'${vegeta}' attack -format=json -rate=${rate}/s -duration=${SECONDS + WARMUP}s -targets='${targets}' -connections=64 -max-workers=256 -timeout=10s | '${vegeta}' encode --to csv > '${csv}'`;
  const proc = startCommand('sh', ['-c', cmd], { name: 'vegeta', env: { GOMAXPROCS: '1' } });
  await proc.exited;
  const appCpu = cpuSeconds(appPid);
  const dbCpu = cpuOf(mariadbPids());
  // CSV columns: timestamp (ns), status code, latency (ns), ...
  const rows = existsSync(csv)
    ? readFileSync(csv, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(',', 3).map(Number))
    : [];
  if (!rows.length) throw new Error(`vegeta produced no results: ${proc.output().slice(-2000)}`);
  const t0 = Math.min(...rows.map((r) => r[0]));
  const kept = rows.filter((r) => r[0] >= t0 + WARMUP * 1e9);
  const latencies = kept.map((r) => r[2] / 1e6).sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)];
  const created = kept.filter((r) => r[1] === 201).length;
  const byStatus = new Map<number, number>();
  for (const r of kept) if (r[1] !== 201) byStatus.set(r[1], (byStatus.get(r[1]) ?? 0) + 1);
  const statuses = [...byStatus].map(([status, n]) => `${status}×${n}`).join(' ') || '-';
  // CPU over the whole attack (warm-up included) per create of the whole attack.
  const allCreated = rows.filter((r) => r[1] === 201).length || 1;
  const perCreate = (before: number | null, after: number | null) => (before === null || after === null ? null : ((after - before) * 1000) / allCreated);
  return {
    rate,
    p50: pct(0.5),
    p90: pct(0.9),
    p99: pct(0.99),
    max: latencies[latencies.length - 1],
    created,
    other: kept.length - created,
    statuses,
    appCpuMs: perCreate(cpuBefore.app, appCpu),
    dbCpuMs: mariadbPids().length ? perCreate(cpuBefore.db, dbCpu) : null,
  };
}

interface Variant {
  readonly name: string;
  readonly dir: string;
  app?: App;
  targets?: string;
}

function startGeneration(variant: Variant, profileFile: string | null): Promise<App> {
  return startApp(
    'generation',
    {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      LOG_LEVEL: 'warn',
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      ...serverSecrets(),
      SHORTLINK_PUBLIC_BASE_URL: 'http://bench.shortlink.test',
      // The plan limit is not what is measured here (it has its own tests).
      PLAN_PAID_REQUESTS_PER_MINUTE: '100000000',
      ...(profileFile ? profileHookEnv(profileFile) : {}),
    },
    { checkout: variant.dir, nodeArgs: ['--max-semi-space-size=64'], timeoutMs: 120_000, ...(profileFile ? { preload: [PROFILE_HOOK] } : {}) },
  );
}

/** vegeta's JSON targets: 500 creates of distinct URLs, cycled. */
function writeTargets(dir: string, name: string, base: string): string {
  const file = join(dir, `targets-${name}.json`);
  const header = { 'Content-Type': ['application/json'], 'X-Api-Key': [API_KEY] };
  writeFileSync(
    file,
    Array.from({ length: 500 }, (_, i) =>
      JSON.stringify({
        method: 'POST',
        url: `${base}/api/v1/links`,
        header,
        body: Buffer.from(JSON.stringify({ url: `https://example.com/single/${i}?utm_source=bench` })).toString('base64'),
      }),
    ).join('\n') + '\n',
  );
  return file;
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
  const dir = mkdtempSync(join(tmpdir(), 'bench-create-'));
  const profileFile = join(dir, 'create.cpuprofile');
  const variants: Variant[] = [...(BASELINE ? [{ name: 'before', dir: resolve(BASELINE) }] : []), { name: BASELINE ? 'after' : 'current', dir: REPO_ROOT }];
  try {
    for (const variant of variants) {
      variant.app = await startGeneration(variant, PROFILE_RATE ? profileFile : null);
      variant.targets = writeTargets(dir, variant.name, variant.app.base);
      await attack(vegeta, dir, variant.targets, 20, variant.app.proc.pid); // warm-up: JIT, pools, id blocks
    }
    if (PROFILE_RATE) {
      for (const { name, app, targets } of variants) {
        const { result, profile } = await captureProfile(app!.proc, profileFile, () => attack(vegeta, dir, targets!, PROFILE_RATE, app!.proc.pid));
        process.stdout.write(
          `## ${name}: ${PROFILE_RATE}/s under the profiler: p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, ${result.created} created, other ${result.statuses}\n\n${profile ? summariseProfile(profile) : 'no profile written'}\n\n`,
        );
      }
      return;
    }
    // Runs of each rate alternate between the variants, so that both meet the same moments of a shared machine.
    const runs = new Map<string, Result[]>();
    for (const rate of RATES) {
      for (let run = 0; run < RUNS; run++) {
        for (const { name, app, targets } of variants) {
          const r = await attack(vegeta, dir, targets!, rate, app!.proc.pid);
          const key = `${name}\u0000${rate}`;
          runs.set(key, [...(runs.get(key) ?? []), r]);
          log(
            `${name} ${rate}/s: p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ${r.created} created, other ${r.statuses}, app ${r.appCpuMs?.toFixed(2)} ms CPU a create`,
          );
        }
      }
    }
    const ms = (n: number) => n.toFixed(1);
    const rows: (string | number)[][] = [];
    const best = new Map<string, number | null>();
    for (const { name } of variants) {
      let largest: number | null = null;
      for (const rate of RATES) {
        const rs = runs.get(`${name}\u0000${rate}`)!;
        const p99 = median(rs.map((r) => r.p99));
        const allCreated = rs.every((r) => r.other === 0);
        if (p99 < 100 && allCreated) largest = rate;
        const cpu = (pick: (r: Result) => number | null) => {
          const values = rs.map(pick).filter((v): v is number => v !== null);
          return values.length ? median(values).toFixed(2) : '?';
        };
        rows.push([
          name,
          rate,
          ms(median(rs.map((r) => r.p50))),
          ms(median(rs.map((r) => r.p90))),
          ms(p99),
          ms(median(rs.map((r) => r.max))),
          rs.map((r) => r.created).join(', '),
          rs.map((r) => r.statuses).join('; '),
          cpu((r) => r.appCpuMs),
          cpu((r) => r.dbCpuMs),
        ]);
      }
      best.set(name, largest);
    }
    const table = markdownTable(
      [
        ['variant', 'l'],
        ['rate (req/s)', 'r'],
        ['p50 ms', 'r'],
        ['p90 ms', 'r'],
        ['p99 ms', 'r'],
        ['max ms', 'r'],
        ['201s (runs)', 'r'],
        ['other (status×count)', 'l'],
        ['app CPU ms / create', 'r'],
        ['MariaDB CPU ms / create', 'r'],
      ],
      rows,
    );
    const report = [
      `# Single create bench, ${started.toISOString()}`,
      '',
      ...machineFacts({ start: started, startLoad, tools: [`vegeta: ${vegeta}`] }),
      ...(BASELINE ? [`- baseline ("before"): the generation app of ${resolve(BASELINE)}`] : []),
      '',
      `POST /api/v1/links, open loop, ${SECONDS} s per rate after ${WARMUP} s of warm-up, ${RUNS} run(s) per rate and variant (medians), the variants alternating; the generation app alone against the MariaDB shards, meta database, Redis Cluster and Kafka (BUS_DRIVER of the stack's environment: ${process.env.BUS_DRIVER ?? 'unset'}). CPU ms per create: the process's CPU time over the attack (warm-up included) per 201.`,
      '',
      table,
      '',
      ...variants.map(({ name }) => {
        const b = best.get(name);
        return `Largest rate with p99 < 100 ms and every answer 201 (${name}): ${b == null ? 'none of the rates tried' : `${b} req/s`}.`;
      }),
      '',
    ].join('\n');
    process.stdout.write(`${report}\n`);
    const file = writeResultFile('create', started, report);
    log(`written to ${file}`);
  } finally {
    for (const { app } of variants) await app?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
