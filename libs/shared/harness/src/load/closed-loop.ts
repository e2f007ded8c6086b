/**
 * Closed-loop load (throughput at saturation): wrk with one thread, or autocannon when wrk is not
 * installed, `connections` keep-alive connections for `seconds`. Both report the same JSON line.
 */
import { join } from 'path';
import { cpuMeter } from '../cpu';
import { startCommand } from '../process';
import { commandPath } from '../shell';
import { LoadRig, LoadTarget, scratchFile } from './rig';

export type ClosedLoopLoader = 'wrk' | 'autocannon';

/** wrk when it is installed, else autocannon (from node_modules). */
export const defaultClosedLoopLoader = (): ClosedLoopLoader => (commandPath('wrk') !== null ? 'wrk' : 'autocannon');

export interface ClosedLoopJob extends LoadTarget {
  loader: ClosedLoopLoader;
  connections: number;
  seconds: number;
  /** A process whose CPU use during the run is reported (the server under test). */
  cpuOf?: number;
}

export interface ClosedLoopResult {
  /** Answered requests per second: responses with status ≥ 400 are left out. */
  rps: number;
  requests: number;
  p50ms: number;
  p99ms: number;
  /** Socket errors, timeouts and responses with status ≥ 400. */
  errors: number;
  /** CPU of `cpuOf` during the run, in % of one core (null when not asked or not readable). */
  cpu: number | null;
}

const WRK_SCRIPT = join(__dirname, 'wrk-report.lua');
const AUTOCANNON_RUNNER = join(__dirname, 'autocannon-runner.js');

export async function closedLoop(rig: LoadRig, job: ClosedLoopJob): Promise<ClosedLoopResult> {
  const { base, paths, connections, seconds } = job;
  let args: string[];
  if (job.loader === 'wrk') {
    args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', WRK_SCRIPT];
    if (paths.length === 1 && !paths[0].includes('\t')) args.push(`${base}${paths[0]}`);
    else args.push(`${base}/`, '--', scratchFile(rig, 'paths', paths));
  } else args = [AUTOCANNON_RUNNER];
  // The paths go in a file: a thousand requests with headers are too long for an environment variable.
  const env: Record<string, string> =
    job.loader === 'wrk' ? {} : { BENCH_AC_JOB: JSON.stringify({ url: base, pathsFile: scratchFile(rig, 'paths', paths), connections, duration: seconds }) };
  const proc = startCommand(job.loader === 'wrk' ? 'wrk' : process.execPath, args, { name: job.loader, env, core: rig.core, group: rig.group });
  const cpu = job.cpuOf !== undefined ? cpuMeter(job.cpuOf) : () => null;
  const killer = setTimeout(() => void proc.stop(2_000), (seconds + 30) * 1000);
  await proc.exited;
  clearTimeout(killer);
  const serverCpu = cpu();
  const line = proc
    .output()
    .split('\n')
    .find((l) => l.startsWith('WRK_JSON ') || l.startsWith('AC_JSON '));
  if (!line) throw new Error(`loader produced no result (exit ${proc.child.exitCode}):\n${proc.output().slice(-3000)}`);
  const r = JSON.parse(line.slice(line.indexOf(' ') + 1)) as {
    requests: number;
    duration_us: number;
    errors: Record<string, number>;
    latency_us: { p50: number; p99: number };
  };
  return {
    rps: Math.max(0, r.requests - (r.errors.status ?? 0)) / (r.duration_us / 1e6),
    requests: r.requests,
    p50ms: r.latency_us.p50 / 1000,
    p99ms: r.latency_us.p99 / 1000,
    errors: Object.values(r.errors).reduce((a, b) => a + b, 0),
    cpu: serverCpu,
  };
}
