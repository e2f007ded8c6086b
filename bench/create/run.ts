/**
 * Single-create bench, on demand, on the local real stack (`set -a; . <stack.env>; set +a`):
 * POST /api/v1/links at fixed rates, open loop (vegeta: requests leave on schedule whatever the
 * answers do, so the percentiles are what a client sees at that load), each rate for --seconds
 * after a warm-up. Reports p50/p90/p99 per rate and the largest rate whose p99 stays under 100 ms
 * with every answer a 201 (the system-design article's target, docs/design.md). Prints a markdown table and writes
 * bench/results/create-<date>.md. 127.0.0.1 only.
 *   node -r ./tools/register.js bench/create/run.ts [--rates=25,50,100,200,300,400] [--seconds=10] [--warmup=2]
 */
import { randomUUID } from 'crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import {
  App,
  datedResultFile,
  findVegeta,
  loadAverages,
  machineFacts,
  markdownTable,
  REPO_ROOT,
  serverSecrets,
  startApp,
  startCommand,
} from '@shortlink/harness';

const option = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const RATES = option('rates', '25,50,100,200,300,400').split(',').map(Number);
const SECONDS = Number(option('seconds', '10'));
const WARMUP = Number(option('warmup', '2'));
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
}

/** One rate: vegeta with JSON targets (POST bodies), its CSV results read back; the warm-up seconds left out. */
async function attack(vegeta: string, dir: string, targets: string, rate: number): Promise<Result> {
  const csv = join(dir, `results-${rate}.csv`);
  const cmd = `'${vegeta}' attack -format=json -rate=${rate}/s -duration=${SECONDS + WARMUP}s -targets='${targets}' -connections=64 -max-workers=256 -timeout=10s | '${vegeta}' encode --to csv > '${csv}'`;
  const proc = startCommand('sh', ['-c', cmd], { name: 'vegeta', env: { GOMAXPROCS: '1' } });
  await proc.exited;
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
  return { rate, p50: pct(0.5), p90: pct(0.9), p99: pct(0.99), max: latencies[latencies.length - 1], created, other: kept.length - created };
}

async function main() {
  const started = new Date();
  const startLoad = loadAverages();
  const vegeta = findVegeta(log);
  if (!vegeta) throw new Error('vegeta is needed (go install github.com/tsenart/vegeta/v12@v12.13.0)');
  const dir = mkdtempSync(join(tmpdir(), 'bench-create-'));
  let generation: App | null = null;
  try {
    generation = await startApp(
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
      },
      { nodeArgs: ['--max-semi-space-size=64'] },
    );
    const targets = join(dir, 'targets.json');
    const header = { 'Content-Type': ['application/json'], 'X-Api-Key': [API_KEY] };
    writeFileSync(
      targets,
      Array.from({ length: 500 }, (_, i) =>
        JSON.stringify({
          method: 'POST',
          url: `${generation!.base}/api/v1/links`,
          header,
          body: Buffer.from(JSON.stringify({ url: `https://example.com/single/${i}?utm_source=bench` })).toString('base64'),
        }),
      ).join('\n') + '\n',
    );
    await attack(vegeta, dir, targets, 20); // warm-up: JIT, pools, id blocks
    const results: Result[] = [];
    for (const rate of RATES) {
      const r = await attack(vegeta, dir, targets, rate);
      results.push(r);
      log(`${rate}/s: p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ${r.created} created, ${r.other} other`);
    }
    const ok = results.filter((r) => r.p99 < 100 && r.other === 0);
    const best = ok.length ? Math.max(...ok.map((r) => r.rate)) : null;
    const ms = (n: number) => n.toFixed(1);
    const table = markdownTable(
      [
        ['rate (req/s)', 'r'],
        ['p50 ms', 'r'],
        ['p90 ms', 'r'],
        ['p99 ms', 'r'],
        ['max ms', 'r'],
        ['201s', 'r'],
        ['other', 'r'],
      ],
      results.map((r) => [r.rate, ms(r.p50), ms(r.p90), ms(r.p99), ms(r.max), r.created, r.other]),
    );
    const report = [
      `# Single create bench, ${started.toISOString()}`,
      '',
      ...machineFacts({ start: started, startLoad, tools: [`vegeta: ${vegeta}`] }),
      '',
      `POST /api/v1/links, open loop, ${SECONDS} s per rate after ${WARMUP} s of warm-up; generation app alone against the MariaDB shards, meta database and Redis Cluster.`,
      '',
      table,
      '',
      `Largest rate with p99 < 100 ms and every answer 201: ${best === null ? 'none of the rates tried' : `${best} req/s`}.`,
      '',
    ].join('\n');
    process.stdout.write(`${report}\n`);
    const out = join(REPO_ROOT, 'bench', 'results');
    mkdirSync(out, { recursive: true });
    const file = datedResultFile(out, 'create', started);
    writeFileSync(file, report);
    log(`written to ${file}`);
  } finally {
    await generation?.stop();
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
