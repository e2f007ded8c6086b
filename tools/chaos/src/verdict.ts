/** The verdict table a chaos run prints (and docs/reliability.md keeps): markdown, so it can be pasted as it is. */
import { markdownTable } from '@shortlink/harness';
import { FaultSummary, RECOVERY_MS, Verdict } from './checker';
import { RunConfig } from './record';

const pct = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)} %`);
const s = (ms: number) => (ms / 1000).toFixed(1);

/** Faults of one kind (target and action) together: how many, how long down, the availability around them and the slowest recovery. */
function byKind(faults: readonly FaultSummary[]): Array<Array<string | number>> {
  const kinds = new Map<string, FaultSummary[]>();
  for (const f of faults) kinds.set(`${f.fault.target} ${f.fault.action}`, [...(kinds.get(`${f.fault.target} ${f.fault.action}`) ?? []), f]);
  return [...kinds.entries()].map(([kind, fs]) => {
    const avg = (xs: Array<number | null>) => {
      const v = xs.filter((x): x is number => x !== null);
      return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
    };
    return [
      kind,
      fs.length,
      s(avg(fs.map((f) => f.fault.end - f.fault.start)) ?? 0),
      s(RECOVERY_MS[fs[0].fault.target]),
      pct(avg(fs.map((f) => f.redirectAvailability))),
      pct(avg(fs.map((f) => f.apiAvailability))),
      fs.reduce((a, f) => a + f.failures, 0),
      s(Math.max(...fs.map((f) => f.recoveredAfterMs))),
    ];
  });
}

export function verdictTable(config: RunConfig, v: Verdict, wallMs: number): string {
  const out: string[] = [];
  out.push(
    `chaos run, seed ${config.seed} (${config.mode}; replay: npm run chaos -- ${config.mode === 'short' ? '--short ' : ''}--seed ${config.seed}), ${s(wallMs)} s`,
  );
  out.push('');
  out.push(
    markdownTable(
      [
        ['operation', 'l'],
        ['sent', 'r'],
        ['ok', 'r'],
        ['refused (4xx)', 'r'],
        ['unknown (5xx / no answer)', 'r'],
      ],
      v.ops.map((o) => [o.kind, o.total, o.ok, o.fail, o.unknown]),
    ),
  );
  out.push('');
  out.push(
    markdownTable(
      [
        ['fault', 'l'],
        ['count', 'r'],
        ['down (s, mean)', 'r'],
        ['recovery allowed (s)', 'r'],
        ['redirects answered in window', 'r'],
        ['API calls answered in window', 'r'],
        ['failed requests', 'r'],
        ['time to recover (s, max)', 'r'],
      ],
      byKind(v.faults),
    ),
  );
  out.push('');
  const t0 = v.faults[0]?.fault.start ?? 0;
  out.push(
    markdownTable(
      [
        ['#', 'r'],
        ['at (s)', 'r'],
        ['fault', 'l'],
        ['victim', 'l'],
        ['down (s)', 'r'],
        ['failed requests', 'r'],
        ['time to recover (s)', 'r'],
      ],
      v.faults.map((f, i) => [
        i + 1,
        s(f.fault.start - t0),
        `${f.fault.target} ${f.fault.action}${f.fault.error ? ' (not back)' : ''}`,
        f.fault.victim,
        s(f.fault.end - f.fault.start),
        f.failures,
        s(f.recoveredAfterMs),
      ]),
    ),
  );
  const notes = v.faults.map((f, i) => (f.fault.note ? `  - #${i + 1} ${f.fault.target} ${f.fault.victim}: ${f.fault.note}` : '')).filter(Boolean);
  if (notes.length) out.push('', 'what the faults saw:', ...notes);
  out.push('');
  out.push(
    markdownTable(
      [
        ['clicks (302s)', 'r'],
        ['counted in rollups', 'r'],
        ['missing', 'r'],
        ['counted dropped', 'r'],
        ['buffered in SIGKILLed redirects', 'r'],
        ['counted beyond the 302s seen (unanswered requests served)', 'r'],
      ],
      [[v.clicks.produced, v.clicks.counted, v.clicks.missing, v.clicks.dropped, v.clicks.atRiskAtKill, v.clicks.extra]],
    ),
  );
  const c = v.conversions;
  if (c.leadsSent + c.salesSent) {
    const range = ([a, b]: [number, number]) => (a === b ? `${a}` : `${a}–${b}`);
    out.push('');
    out.push(
      markdownTable(
        [
          ['leads sent (retries incl.)', 'r'],
          ['sales sent', 'r'],
          ['sent again', 'r'],
          ['leads to count', 'r'],
          ['leads counted', 'r'],
          ['sales to count', 'r'],
          ['sales counted', 'r'],
          ['revenue to count (EUR cents)', 'r'],
          ['revenue counted', 'r'],
        ],
        [
          [
            c.leadsSent,
            c.salesSent,
            c.retries,
            range(c.leads),
            c.counted?.leads ?? '–',
            range(c.sales),
            c.counted?.sales ?? '–',
            range(c.revenue),
            c.counted?.revenue ?? '–',
          ],
        ],
      ),
    );
  }
  if (v.overload.length) {
    const ms = (x: number | null) => (x === null ? '–' : String(Math.round(x)));
    out.push('');
    out.push(
      markdownTable(
        [
          ['overload window', 'l'],
          ['down (s)', 'r'],
          ["workload's redirects", 'r'],
          ['succeeded', 'r'],
          ['p50 (ms)', 'r'],
          ['max (ms)', 'r'],
          ['API max (ms)', 'r'],
          ['client stall max (ms)', 'r'],
          ['shed 503s (flood incl.)', 'r'],
        ],
        v.overload.map((w) => [
          `#${v.faults.findIndex((f) => f.fault === w.fault) + 1} ${w.fault.target}`,
          s(w.fault.end - w.fault.start),
          w.redirects,
          w.redirectsOk,
          ms(w.redirectP50Ms),
          ms(w.redirectMaxMs),
          ms(w.apiMaxMs),
          ms(w.clientStallMaxMs),
          w.shed,
        ]),
      ),
    );
  }
  if (v.pressure.meanSome !== null)
    out.push(
      '',
      `the machine's CPU pressure (PSI some) over the faults: mean ${pct(v.pressure.meanSome)}, ${s(v.pressure.pressuredSeconds * 1000)} s at ≥ 80 %; shed answers (503 with Retry-After) outside every fault window in those seconds: ${v.pressure.shedExcused}`,
    );
  out.push('');
  out.push(
    markdownTable(
      [
        ['invariant', 'l'],
        ['result', 'l'],
        ['violations', 'r'],
      ],
      v.results.map((r) => [`${r.name}: ${r.says}`, r.violations.length ? 'FAIL' : 'pass', r.violations.length]),
    ),
  );
  for (const r of v.results.filter((x) => x.violations.length)) {
    out.push('', `${r.name} (first 20 of ${r.violations.length}):`);
    for (const x of r.violations.slice(0, 20)) out.push(`  - ${x.message}`);
  }
  out.push('', v.passed ? 'verdict: PASS' : 'verdict: FAIL');
  return out.join('\n');
}
