/**
 * Batch creation bench, on demand, on the local real stack (`set -a; . <stack.env>; set +a`):
 * 100 000 links across the 4 MariaDB shards through POST /api/v1/links/batch (NDJSON, streamed both
 * ways), without and with an Idempotency-Key, against the baseline of the same run: the same rows
 * written straight to the same shards with raw mysql2 multi-row INSERTs (one connection per shard,
 * shards in parallel). Reports rows/s (medians over the runs), the ratio to the baseline, and the
 * generation process's peak RSS during the batch. Prints a markdown table and writes
 * bench/results/batch-create-<date>.md. 127.0.0.1 only.
 *   node -r ./tools/register.js bench/batch-create/run.ts [--rows=100000] [--runs=3] [--statement-rows=1000] [--workers=N]
 * --workers=N sets the generation app's BATCH_WORKERS (its default otherwise: 1).
 * --baseline=<dir>: a second generation app started from another checkout (a `git worktree` of the
 * commit to compare with, its node_modules linked), measured in the same runs, batch for batch
 * right after this one's, so both meet the same load and the same raw baseline.
 */
import { execFileSync } from 'child_process';
import { randomUUID } from 'crypto';
import { readFileSync } from 'fs';
import { join } from 'path';
import { createConnection } from 'mysql2/promise';
import { loadConfig } from '@shortlink/config';
import {
  App,
  captureProfile,
  writeResultFile,
  fmt,
  loadAverages,
  machineFacts,
  markdownTable,
  median,
  PROFILE_HOOK,
  profileHookEnv,
  REPO_ROOT,
  serverSecrets,
  startApp,
  summariseProfile,
} from '@shortlink/harness';
import { createShardRouter } from '@shortlink/shard-router';
import { deleteTenantLinks, streamBatch } from '../shared/batch-links';

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const ROWS = arg('rows', 100_000);
const RUNS = arg('runs', 3);
const STATEMENT_ROWS = arg('statement-rows', 1000);
/** BATCH_WORKERS of the generation app; undefined: its default. */
const WORKERS = process.argv.find((a) => a.startsWith('--workers='))?.split('=')[1];
const BASELINE = process.argv.find((a) => a.startsWith('--baseline='))?.slice('--baseline='.length);
/** Node flags of the generation process (default: those of `npm run start:generation`); --node-args= for none. */
const NODE_ARGS = (process.argv.find((a) => a.startsWith('--node-args='))?.slice('--node-args='.length) ?? '--heap-growing-percent=20')
  .split(' ')
  .filter(Boolean);
/** --profile: one batch under the CPU profiler, summarised (instead of the measured runs). */
const PROFILE = process.argv.includes('--profile');
const API_KEY = `sl_bench_${randomUUID().replace(/-/g, '')}`;
const log = (m: string) => process.stderr.write(`[batch-create] ${m}\n`);
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
const url = (run: string, i: number) => `https://example.com/bench/${run}/${i}?utm_source=mail`;

/** POSTs `rows` NDJSON rows and reads the answer while sending; seconds, 201s, and the server's peak RSS. */
async function batch(
  base: string,
  apiKey: string,
  run: string,
  pid: number,
  key: string | null,
): Promise<{ seconds: number; created: number; peakRss: number; startRss: number; problems: Record<string, number> }> {
  const startRss = rssOf(pid);
  let peakRss = startRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(pid))), 50);
  const t0 = process.hrtime.bigint();
  let created = 0;
  // Problem codes of the rows not created, counted (a short count says why).
  const problems: Record<string, number> = {};
  try {
    await streamBatch({
      base,
      apiKey,
      rows: ROWS,
      row: (j) => `{"url":"${url(run, j)}"}`,
      idempotencyKey: key,
      answer: (p) => {
        if (p.startsWith('{"row":') && p.includes('"status":201')) created++;
        else {
          const code = /"code":"([A-Z_]+)"/.exec(p)?.[1] ?? 'other';
          problems[code] = (problems[code] ?? 0) + 1;
        }
      },
    });
  } finally {
    clearInterval(sampler);
  }
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, created, peakRss, startRss, problems };
}

/** The baseline: the rows a batch creates, as link rows, straight into the shards the router names. */
async function rawInserts(run: string, tenantId: string): Promise<number> {
  const config = loadConfig(process.env);
  if (config.db.driver !== 'mysql') throw new Error('the bench needs DB_DRIVER=mysql (source stack.env)');
  const router = createShardRouter(
    config.db.strategy,
    config.db.shards.map((s) => ({ name: s.name })),
    config.db.virtualNodes,
  );
  const now = new Date();
  const byShard = new Map<string, unknown[][]>();
  const base = BigInt(Date.now()) * 1_000_000n; // far above the sequence's ids
  for (let i = 0; i < ROWS; i++) {
    const code = `r${run}${i.toString(36)}`;
    const shard = router.shardFor(code);
    byShard.set(shard, [
      ...(byShard.get(shard) ?? []),
      [(base + BigInt(i)).toString(), 'bench.raw', code, url(run, i), tenantId, now, now, null, 1, 302, 1, 0, null, null],
    ]);
  }
  const conns = await Promise.all(config.db.shards.map(async (s) => ({ name: s.name, conn: await createConnection(s.url) })));
  const t0 = process.hrtime.bigint();
  await Promise.all(
    conns.map(async ({ name, conn }) => {
      const rows = byShard.get(name) ?? [];
      for (let i = 0; i < rows.length; i += STATEMENT_ROWS) {
        const slice = rows.slice(i, i + STATEMENT_ROWS);
        await conn.query(
          `INSERT INTO links (id, domain, code, target_url, tenant_id, created_at, updated_at, expires_at, status, redirect_type, version, moderation, title, options) VALUES ?`,
          [slice],
        );
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await Promise.all(conns.map(({ conn }) => conn.end()));
  return seconds;
}

async function main() {
  const started = new Date();
  const startLoad = loadAverages();
  const env = {
    DB_DRIVER: 'mysql',
    CACHE_DRIVER: 'redis',
    LOG_LEVEL: 'warn',
    SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
    ...serverSecrets(),
    SHORTLINK_PUBLIC_BASE_URL: 'http://bench.shortlink.test',
    ...(WORKERS === undefined ? {} : { BATCH_WORKERS: WORKERS }),
  };
  let generation: App | null = null;
  let baselineApp: App | null = null;
  const tenants: string[] = [];
  try {
    // The generation app as `npm run start:generation` runs it.
    const profileFile = join(REPO_ROOT, 'bench', 'results', 'batch-create.cpuprofile');
    generation = await startApp(
      'generation',
      { ...env, ...(PROFILE ? profileHookEnv(profileFile) : {}) },
      { nodeArgs: NODE_ARGS, ...(PROFILE ? { preload: [PROFILE_HOOK] } : {}) },
    );
    const idleRss = rssOf(generation.proc.pid);
    // The checkout to compare with: its own sources (tools/register.js there, and its tsconfig, not the one this process set).
    const baseline = BASELINE ? await startApp('generation', env, { nodeArgs: NODE_ARGS, checkout: BASELINE }) : null;
    baselineApp = baseline;
    const baseCommit = BASELINE ? execFileSync('git', ['-C', BASELINE, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim() : '';
    const created = (await (
      await fetch(`${generation.base}/api/v1/admin/tenants`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify({ name: 'bench', plan: 'paid' }),
      })
    ).json()) as { tenant: { id: string }; apiKey: string };
    tenants.push(created.tenant.id);
    const rawTenant = randomUUID();
    tenants.push(rawTenant);
    const results: Record<'raw' | 'api' | 'apiKeyed' | 'baseApi' | 'baseApiKeyed', number[]> = {
      raw: [],
      api: [],
      apiKeyed: [],
      baseApi: [],
      baseApiKeyed: [],
    };
    const peaks: number[] = [];
    const starts: number[] = [];
    // A warm-up batch (JIT, pools, caches), not counted.
    await batch(generation.base, created.apiKey, `warm${Date.now().toString(36)}`, generation.proc.pid, null);
    if (baseline) await batch(baseline.base, created.apiKey, `warmb${Date.now().toString(36)}`, baseline.proc.pid, null);
    if (PROFILE) {
      const app = generation;
      const { result, profile } = await captureProfile(app.proc, profileFile, () =>
        batch(app.base, created.apiKey, `prof${Date.now().toString(36)}`, app.proc.pid, null),
      );
      process.stdout.write(`${Math.round(ROWS / result.seconds)} rows/s under the profiler\n\n${profile ? summariseProfile(profile) : 'no profile written'}\n`);
      return;
    }
    for (let r = 0; r < RUNS; r++) {
      const run = `${Date.now().toString(36)}${r}`;
      const raw = await rawInserts(run, rawTenant);
      results.raw.push(ROWS / raw);
      for (const keyed of [false, true]) {
        const b = await batch(generation.base, created.apiKey, `${run}${keyed ? 'k' : 'n'}`, generation.proc.pid, keyed ? `bench-${run}` : null);
        if (b.created !== ROWS) throw new Error(`only ${b.created} of ${ROWS} rows created (problems: ${JSON.stringify(b.problems)})`);
        (keyed ? results.apiKeyed : results.api).push(ROWS / b.seconds);
        peaks.push(b.peakRss);
        starts.push(b.startRss);
        log(
          `run ${r + 1}/${RUNS}: raw ${Math.round(ROWS / raw)} rows/s, API${keyed ? ' + Idempotency-Key' : ''} ${Math.round(ROWS / b.seconds)} rows/s, peak RSS ${Math.round(b.peakRss / 1048576)} MB`,
        );
        if (baseline) {
          const key = keyed ? `bench-${run}-base` : null;
          const o = await batch(baseline.base, created.apiKey, `${run}${keyed ? 'k' : 'n'}b`, baseline.proc.pid, key);
          if (o.created !== ROWS) throw new Error(`baseline: only ${o.created} of ${ROWS} rows created (problems: ${JSON.stringify(o.problems)})`);
          (keyed ? results.baseApiKeyed : results.baseApi).push(ROWS / o.seconds);
          log(`run ${r + 1}/${RUNS}: baseline ${baseCommit} API${keyed ? ' + Idempotency-Key' : ''} ${Math.round(ROWS / o.seconds)} rows/s`);
        }
      }
    }
    const raw = median(results.raw);
    const mb = (b: number) => `${Math.round(b / 1048576)} MB`;
    const table = markdownTable(
      [
        ['case', 'l'],
        ['rows/s (median)', 'r'],
        ['runs', 'l'],
        ['vs raw INSERTs', 'r'],
      ],
      [
        [
          `raw mysql2 multi-row INSERTs (${STATEMENT_ROWS} rows per statement, 4 shards in parallel)`,
          Math.round(raw),
          results.raw.map(Math.round).join(', '),
          '1.00×',
        ],
        [
          'POST /api/v1/links/batch (NDJSON, streamed)',
          Math.round(median(results.api)),
          results.api.map(Math.round).join(', '),
          `${fmt(median(results.api) / raw)}×`,
        ],
        [
          'the same with Idempotency-Key',
          Math.round(median(results.apiKeyed)),
          results.apiKeyed.map(Math.round).join(', '),
          `${fmt(median(results.apiKeyed) / raw)}×`,
        ],
        ...(baseline
          ? [
              [
                `baseline ${baseCommit}: POST /api/v1/links/batch`,
                Math.round(median(results.baseApi)),
                results.baseApi.map(Math.round).join(', '),
                `${fmt(median(results.baseApi) / raw)}×`,
              ],
              [
                `baseline ${baseCommit}: the same with Idempotency-Key`,
                Math.round(median(results.baseApiKeyed)),
                results.baseApiKeyed.map(Math.round).join(', '),
                `${fmt(median(results.baseApiKeyed) / raw)}×`,
              ],
            ]
          : []),
      ],
    );
    const memory = `Generation process (node ${NODE_ARGS.join(' ') || 'without flags'}) RSS: ${mb(idleRss)} when started, ${mb(median(starts))} before a batch (median), peak during a batch ${mb(Math.max(...peaks))} (max over ${peaks.length} batches of ${ROWS.toLocaleString('en-US')} rows; median peak ${mb(median(peaks))}).`;
    const report = [
      `# Batch creation bench, ${started.toISOString()}`,
      '',
      ...machineFacts({ start: started, startLoad }),
      '',
      `${ROWS.toLocaleString('en-US')} links per batch, ${RUNS} runs, each: raw INSERTs, then the API without and with a key${BASELINE ? ', each followed by the same batch on the baseline app' : ''} (a warm-up batch first). BATCH_WORKERS: ${WORKERS ?? 'default (1)'}.`,
      '',
      table,
      '',
      memory,
      '',
    ].join('\n');
    process.stdout.write(`${report}\n`);
    const file = writeResultFile('batch-create', started, report);
    log(`written to ${file}`);
  } finally {
    await generation?.stop();
    await baselineApp?.stop();
    await deleteTenantLinks(tenants).catch((e) => log(`clean-up failed: ${(e as Error).message}`));
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
