/**
 * Open-loop latency with vegeta: `rate` requests per second on at most `connections` keep-alive
 * connections, on a fixed schedule, one Go thread. Unlike a closed loop, a slow answer does not hold
 * back the next request, so the percentiles are the latency a client sees at that load (no
 * coordinated omission) instead of queueing at saturation.
 */
import { existsSync, readFileSync, rmSync } from 'fs';
import { join } from 'path';
import { startCommand } from '../process';
import { commandPath, shell } from '../shell';
import { LoadRig, LoadTarget, requestOf, scratchFile } from './rig';

export const VEGETA_MODULE = 'github.com/tsenart/vegeta/v12@v12.13.0';

/** vegeta from PATH or the Go bin directory; installed with `go install` (the Go proxy) when missing and Go is there. */
export function findVegeta(log: (msg: string) => void): string | null {
  const gobin = () => {
    const [bin, path] = shell('go env GOBIN GOPATH').stdout.split('\n');
    return bin || (path ? join(path, 'bin') : '');
  };
  const look = () => {
    const onPath = commandPath('vegeta');
    if (onPath) return onPath;
    const dir = gobin();
    return dir && existsSync(join(dir, 'vegeta')) ? join(dir, 'vegeta') : null;
  };
  const found = look();
  if (found || !commandPath('go')) return found;
  log(`vegeta not found: go install ${VEGETA_MODULE} (about a minute)`);
  const r = shell(`go install ${VEGETA_MODULE} 2>&1`);
  if (r.status !== 0) log(`go install failed:\n${r.stdout.slice(-2000)}`);
  return look();
}

export interface OpenLoopJob extends LoadTarget {
  vegeta: string;
  rate: number;
  /** Seconds counted. */
  seconds: number;
  /** Seconds sent first and left out: a new vegeta opening its connections (10–30 ms latencies on a bare server). */
  warmupSeconds: number;
  connections: number;
}

/** Result of an open-loop run: requests are sent on a fixed schedule, whatever the answers do. */
export interface OpenLoopResult {
  rate: number;
  /** Requests per second answered with a redirect (3xx). */
  answered: number;
  p50ms: number;
  p90ms: number;
  p99ms: number;
  p999ms: number;
  maxms: number;
  errors: number;
}

export async function openLoop(rig: LoadRig, job: OpenLoopJob): Promise<OpenLoopResult> {
  const { vegeta, base, rate, seconds, warmupSeconds: warm } = job;
  // vegeta's http format: a request line, its header lines, a blank line between requests.
  const targets = scratchFile(
    rig,
    'vegeta',
    job.paths.flatMap((line) => {
      const { path, headers } = requestOf(line);
      return [`GET ${base}${path}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), ''];
    }),
  );
  const c = String(job.connections);
  const csv = join(rig.tmpDir, 'vegeta-results.csv');
  // -redirects=-1: a 302 is the answer, not something to follow.
  const attack = [
    vegeta,
    'attack',
    `-rate=${rate}/s`,
    `-duration=${seconds + warm}s`,
    `-targets=${targets}`,
    `-connections=${c}`,
    `-max-connections=${c}`,
    `-workers=${c}`,
    '-redirects=-1',
    '-timeout=5s',
  ];
  const cmd = `${attack.map((a) => `'${a}'`).join(' ')} | '${vegeta}' encode --to csv > '${csv}'`;
  const proc = startCommand('sh', ['-c', cmd], { name: 'vegeta', env: { GOMAXPROCS: '1' }, core: rig.core, group: rig.group });
  const killer = setTimeout(() => void proc.stop(2_000), (seconds + warm + 30) * 1000);
  await proc.exited;
  clearTimeout(killer);
  // CSV columns: timestamp (ns), status code, latency (ns), bytes out, bytes in, error, ...
  const rows = existsSync(csv)
    ? readFileSync(csv, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(',', 3))
        .map(([t, code, latency]) => ({ t: Number(t), code: Number(code), latency: Number(latency) }))
    : [];
  rmSync(csv, { force: true });
  if (!rows.length) throw new Error(`vegeta produced no results (exit ${proc.child.exitCode}):\n${proc.output().slice(-3000)}`);
  const t0 = rows.reduce((m, r) => Math.min(m, r.t), Infinity);
  const kept = rows.filter((r) => r.t >= t0 + warm * 1e9);
  const latencies = kept.map((r) => r.latency).sort((a, b) => a - b);
  const pct = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] / 1e6 : 0);
  const ok = kept.filter((r) => r.code >= 300 && r.code < 400).length;
  return {
    rate,
    answered: ok / seconds,
    p50ms: pct(0.5),
    p90ms: pct(0.9),
    p99ms: pct(0.99),
    p999ms: pct(0.999),
    maxms: latencies.length ? latencies[latencies.length - 1] / 1e6 : 0,
    errors: kept.length - ok,
  };
}
