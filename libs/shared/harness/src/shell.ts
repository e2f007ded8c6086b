/** Small shell helpers for the machine facts and tool lookups. */
import { execFileSync, spawnSync } from 'child_process';

/** Runs a shell command line, waiting for it; the caller reads status and output. */
export const shell = (cmd: string) => spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });

/** A shell command's trimmed output (stdout+stderr when it fails). */
export function shellOutput(cmd: string): string {
  try {
    return execFileSync('sh', ['-c', cmd], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (e) {
    return `${(e as { stdout?: string }).stdout ?? ''}${(e as { stderr?: string }).stderr ?? ''}`.trim();
  }
}

/** Where `name` is on PATH, or null. */
export function commandPath(name: string): string | null {
  const r = shell(`command -v ${name}`);
  return r.status === 0 ? r.stdout.trim() : null;
}
