/**
 * The result: the main table, the open-loop latency table, the click events of the redirect cases,
 * every run, the side-by-side runs and the CPU profile summaries, written to
 * bench/results/redirect-<date>.md and (tables, notes, profiles) to stdout.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'fs';
import { join, relative } from 'path';
import { Column, datedResultFile, fmt, machineFacts, markdownTable, median, REPO_ROOT, shellOutput } from '@shortlink/harness';
import { BenchContext, LOADER_CORE, RESULTS_DIR, SERVER_CORE } from './context';
import { Bare, bareMedianP99, CaseResult, LatencyResult, medianP99, Skipped, summariseRuns } from './measure';
import { REDIRECT_NODE_FLAGS } from './servers';

type Row = CaseResult | Skipped;
const measured = (rows: readonly Row[]) => rows.filter((r): r is CaseResult => !('reason' in r));

/**
 * The p99 < 5 ms verdict of one rate. When the bare server, paired with the case in the same
 * minutes, is itself at 5 ms or more, the machine decides the tail and the target cannot be shown
 * either way: that is reported as such, with the case's p99 next to the bare one, not as "missed".
 */
function p99Verdict(l: LatencyResult): string {
  const p99 = medianP99(l);
  if (p99 < 5) return 'met';
  const bare = bareMedianP99(l);
  return bare >= 5 ? `undecided: the bare server's own p99 was ${fmt(bare)} ms` : '**missed**';
}

function targetsOf(r: CaseResult): string {
  const ratio = r.ratio ?? null;
  const judged = r.concurrentRatio ?? ratio;
  const targets: string[] = [];
  if (r.targetRatio !== undefined && judged !== null)
    targets.push(`≥ ${r.targetRatio}× ${judged >= r.targetRatio ? 'met' : '**missed**'}${r.concurrentRatio !== undefined ? ' (side by side)' : ''}`);
  if (r.p99Target && r.latency?.length) {
    const verdicts = r.latency.map(p99Verdict);
    const verdict = verdicts.find((v) => v.startsWith('**')) ?? verdicts.find((v) => v !== 'met') ?? 'met';
    targets.push(`p99 < 5 ms ${verdict} (open loop, ${r.latency.map((l) => l.rate).join(' and ')}/s)`);
  } else if (r.p99Target) targets.push(`p99 < 5 ms ${r.p99ms < 5 ? 'met' : '**missed**'} (closed loop)`);
  return targets.join('; ') || '—';
}

const MAIN_COLUMNS: Column[] = [
  ['case', 'l'],
  ['setup', 'l'],
  ['codes', 'r'],
  ['rps (median)', 'r'],
  ['rps min–max', 'r'],
  ['p50 ms', 'r'],
  ['p99 ms', 'r'],
  ['paired bare rps', 'r'],
  ['× bare', 'r'],
  ['× bare, side by side', 'r'],
  ['target', 'l'],
  ['server CPU', 'r'],
  ['served from', 'l'],
  ['errors', 'r'],
];

export function table(results: readonly Row[]): string {
  const rows = results.map((r) => {
    if ('reason' in r) return [r.label, '—', '—', 'skipped', '—', '—', '—', '—', '—', '—', '—', '—', '—', r.reason];
    const rpsRange = `${Math.round(Math.min(...r.runs.map((x) => x.rps)))}–${Math.round(Math.max(...r.runs.map((x) => x.rps)))}`;
    const errPct = r.requests ? (r.errors / r.requests) * 100 : 0;
    return [
      r.label,
      r.setup,
      r.codes,
      Math.round(r.rps),
      rpsRange,
      fmt(r.p50ms),
      fmt(r.p99ms),
      r.bareRps !== undefined ? Math.round(r.bareRps) : '—',
      r.ratio !== undefined ? fmt(r.ratio) : '—',
      r.concurrentRatio !== undefined ? fmt(r.concurrentRatio, 3) : '—',
      targetsOf(r),
      r.serverCpu !== null ? `${r.serverCpu.toFixed(0)}%` : '?',
      r.served ?? '—',
      r.errors ? `${r.errors} (${errPct.toFixed(1)}%)` : '0',
    ];
  });
  return markdownTable(MAIN_COLUMNS, rows);
}

export function latencyTable(results: readonly Row[]): string {
  const rows = measured(results).flatMap((r) =>
    (r.latency ?? []).map((l) => {
      const m = (f: (x: LatencyResult['runs'][number]) => number, xs = l.runs) => median(xs.map(f));
      return [
        r.label,
        l.rate,
        Math.round(m((x) => x.answered)),
        fmt(m((x) => x.p50ms)),
        fmt(m((x) => x.p90ms)),
        fmt(medianP99(l)),
        fmt(
          m((x) => x.maxms),
          1,
        ),
        `${fmt(m((x) => x.p50ms, l.bareRuns))} / ${fmt(bareMedianP99(l))}`,
        p99Verdict(l),
        l.runs.reduce((a, x) => a + x.errors, 0),
      ];
    }),
  );
  const columns: Column[] = [
    ['case', 'l'],
    ['rate /s', 'r'],
    ['answered /s', 'r'],
    ['p50 ms', 'r'],
    ['p90 ms', 'r'],
    ['p99 ms', 'r'],
    ['max ms', 'r'],
    ['paired bare p50 / p99 ms', 'r'],
    ['p99 < 5 ms', 'l'],
    ['errors', 'r'],
  ];
  return rows.length ? markdownTable(columns, rows) : '';
}

/** Click events of the redirect cases over the whole case (warm-up, sequential, side-by-side and open-loop runs). */
export function clickTable(results: readonly Row[]): string {
  const rows = measured(results)
    .filter((r) => r.clicks)
    .map((r) => {
      const c = r.clicks!;
      const pct = c.redirects ? `${((c.dropped / c.redirects) * 100).toFixed(c.dropped && c.dropped < c.redirects / 1000 ? 3 : 1)}%` : '—';
      return [r.label, c.bus, c.redirects, c.dropped, pct, c.sendFailures, c.buffered];
    });
  const columns: Column[] = [
    ['case', 'l'],
    ['click bus', 'l'],
    ['redirects', 'r'],
    ['click events dropped', 'r'],
    ['dropped / redirects', 'r'],
    ['send failures', 'r'],
    ['buffered at end', 'r'],
  ];
  return rows.length ? markdownTable(columns, rows) : '';
}

function bareRowOf(bare: Bare): CaseResult {
  return { id: 'bare', label: 'bare node:http 302 (all paired runs)', setup: 'node:http, constant 302', codes: 1, ...summariseRuns(bare.runs), ratio: 1 };
}

function runsSection(results: readonly Row[]): string[] {
  const out = [
    '## Runs',
    '',
    '| case | run | rps | p50 ms | p99 ms | errors | server CPU | paired bare rps | load avg (1 min) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of measured(results))
    r.runs.forEach((x, i) =>
      out.push(
        `| ${r.id} | ${i + 1} | ${Math.round(x.rps)} | ${fmt(x.p50ms)} | ${fmt(x.p99ms)} | ${x.errors} | ${x.serverCpu?.toFixed(0) ?? '?'}% | ${x.bareRps !== undefined ? Math.round(x.bareRps) : '—'} | ${x.load1.toFixed(2)} |`,
      ),
    );
  out.push('');
  const sideBySide = measured(results).filter((r) => r.concurrent);
  if (sideBySide.length)
    out.push('## Side-by-side runs', '', '| case | run | rps | server CPU | bare rps | bare CPU | cost ratio |', '|---|---:|---:|---:|---:|---:|---:|');
  const pct = (c: number | null) => (c === null ? '?' : `${c.toFixed(0)}%`);
  for (const r of sideBySide)
    r.concurrent!.forEach((c, i) =>
      out.push(`| ${r.id} | ${i + 1} | ${Math.round(c.rps)} | ${pct(c.cpu)} | ${Math.round(c.bareRps)} | ${pct(c.bareCpu)} | ${fmt(c.costRatio, 3)} |`),
    );
  out.push('');
  return out;
}

function methodText(ctx: BenchContext): string {
  const { opts } = ctx;
  return (
    `Server under test pinned to core ${SERVER_CORE}, loader (${opts.loader}, 1 thread, ${opts.connections} connections) to core ${LOADER_CORE}. ` +
    `rps (answered redirects per second: responses with status ≥ 400 are not counted, they are in "errors"), p50 and p99 are medians over the ${opts.runs} runs of a case. ` +
    'Each run of a case is preceded by a run of the bare node:http server (same loader, same duration): "paired bare rps" is the median of those, "× bare" the median of the per-run ratios. ' +
    `"× bare, side by side" (cases with a ratio target): ${opts.runs} more runs in which the case and the bare server are loaded at the same time, both on core ${SERVER_CORE} with a loader each on core ${LOADER_CORE}; ` +
    "the ratio is per CPU second, (case rps / case CPU) ÷ (bare rps / bare CPU), median of the runs. Both see the same machine at the same moment, so it does not move with the machine's speed between runs as the sequential ratio does; the ratio targets are judged on it. " +
    '"server CPU" is the server process\'s CPU time during a run in % of its core; "served from" is where the redirect\'s own metrics say the measured lookups were answered. ' +
    "The stack's Redis/MariaDB (and every other process on this shared machine) are not pinned and share both cores."
  );
}

/** Writes the result file and prints the tables; returns the file's path. */
export function writeReport(ctx: BenchContext, bare: Bare, stackAtStart: string): string {
  const { opts } = ctx;
  const rows: Row[] = bare.runs.length ? [bareRowOf(bare), ...ctx.results] : ctx.results;
  const loader =
    opts.loader === 'wrk'
      ? shellOutput('wrk -v 2>&1 | head -n1')
      : `autocannon ${JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', 'autocannon', 'package.json'), 'utf8')).version}`;
  const main = table(rows);
  const latency = latencyTable(rows);
  const clicks = clickTable(rows);
  const md: string[] = [];
  md.push(`# Redirect benchmark, ${new Date(ctx.t0).toISOString().slice(0, 10)}`, '');
  md.push(
    `Produced by \`node -r ./tools/register.js bench/redirect/run.ts${opts.argv.length ? ` ${opts.argv.join(' ')}` : ''}\` (see bench/redirect/README.md).`,
    '',
  );
  md.push('## Machine', '', ...machineFacts({ start: new Date(ctx.t0), startLoad: ctx.startLoad, tools: [`loader: ${loader}`] }));
  md.push(
    `- real stack: ${stackAtStart}`,
    `- redirect node flags (from \`npm run start:redirect\`): ${REDIRECT_NODE_FLAGS.join(' ') || 'none'}`,
    `- settings: ${opts.connections} connections, ${opts.warmup} s warm-up + ${opts.runs} × ${opts.duration} s per case (each run paired with a bare run), ${opts.codes} codes for the "many" cases`,
    '',
  );
  md.push('## Results', '', methodText(ctx), '', main, '');
  if (latency)
    md.push(
      '### Latency at a fixed rate (open loop)',
      '',
      `vegeta on core ${LOADER_CORE} (one Go thread), at most ${opts.connections} keep-alive connections, requests sent on a fixed schedule for ${opts.duration} s per run; ` +
        `medians of ${opts.runs} runs, each paired with a bare run at the same rate. "answered /s" counts 3xx answers.`,
      '',
      latency,
      '',
    );
  if (clicks)
    md.push(
      '### Click events',
      '',
      "The redirect's own counters (`/metrics` on its admin listener) over the whole case, from before its warm-up to after its last run: redirects answered (3xx), " +
        'click events dropped because the click buffer was full (`shortlink_click_events_dropped_total`), failed batch sends to the bus (retried) and events still buffered at the end.',
      '',
      clicks,
      '',
    );
  if (ctx.notes.length) md.push('## Notes', '', ...ctx.notes.map((n) => `- ${n}`), '');
  md.push(...runsSection(ctx.results));
  for (const p of ctx.profiles) {
    md.push(
      `## CPU profile: ${p.caseId}`,
      '',
      `Profile file: \`${relative(REPO_ROOT, p.file)}\` (open in Chrome DevTools → Performance, or speedscope). Throughput while profiling: ${Math.round(p.rps)} rps.`,
      '',
      p.text,
      '',
    );
  }
  md.push(`Total bench time: ${((Date.now() - ctx.t0) / 1000).toFixed(0)} s.`, '');
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = datedResultFile(RESULTS_DIR, 'redirect', new Date(ctx.t0));
  writeFileSync(file, md.join('\n'));
  process.stdout.write(`\n${main}\n\n${latency ? `${latency}\n\n` : ''}${clicks ? `${clicks}\n\n` : ''}`);
  for (const n of ctx.notes) process.stdout.write(`note: ${n}\n`);
  for (const p of ctx.profiles) process.stdout.write(`\nCPU profile ${p.caseId}:\n${p.text}\n`);
  process.stdout.write(`\nwritten ${relative(REPO_ROOT, file)} (total ${((Date.now() - ctx.t0) / 1000).toFixed(0)} s)\n`);
  return file;
}
