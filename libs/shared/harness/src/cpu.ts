/** CPU time of a process, from /proc/<pid>/stat. */
import { execFileSync } from 'child_process';
import { readFileSync } from 'fs';

function readClockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`). */
const CLK_TCK = readClockTicks();

/** User + system CPU seconds the process has used so far, or null when it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return null;
  }
}

/**
 * Starts measuring a process's CPU; the returned function gives its use since then, in % of one
 * core over the wall time (null when the process could not be read).
 */
export function cpuMeter(pid: number): () => number | null {
  const before = cpuSeconds(pid);
  const t = Date.now();
  return () => {
    const after = cpuSeconds(pid);
    const wall = (Date.now() - t) / 1000;
    return before !== null && after !== null && wall > 0 ? ((after - before) / wall) * 100 : null;
  };
}
