/**
 * The local real stack of deploy/local/stack.sh, read-only: its env file (the apps' settings) and
 * `stack.sh status`. Bench tooling, kept out of the libs (no lib depends on the deployment's
 * scripts): a bench uses it to decide whether its real-stack cases can run, and the PIDs
 * to notice another session restarting a piece of the (shared) stack during a case.
 */
import { spawnSync } from 'child_process';
import { existsSync, readFileSync } from 'fs';
import { join, relative } from 'path';
import { REPO_ROOT, sleep } from '@shortlink/harness';

/**
 * `stack.env`: the one named by STACK_RUN_DIR when the caller sourced one (e.g. a git worktree using
 * the main checkout's stack), else this checkout's deploy/local/.run/stack.env.
 */
export function stackEnvFile(): string {
  const dir = process.env.STACK_RUN_DIR || join(REPO_ROOT, 'deploy', 'local', '.run');
  return join(dir, 'stack.env');
}

/** The variables `stack.env` exports, or null when there is none (the stack was never started). */
export function readStackEnv(file = stackEnvFile()): Record<string, string> | null {
  if (!existsSync(file)) return null;
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^export ([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]] = m[2].replace(/^"(.*)"$/, '$1');
  }
  return env;
}

/** Components of `stack.sh status`, by the prefix of their row, with how many rows each must have. */
export const STACK_COMPONENTS = {
  redis: { row: 'redis-node-', count: 6, label: 'Redis Cluster (6 nodes)' },
  mysql: { row: 'mysql-', count: 2, label: 'MariaDB (2 instances)' },
  kafka: { row: 'kafka', count: 1, label: 'Kafka' },
  clickhouse: { row: 'clickhouse', count: 1, label: 'ClickHouse' },
} as const;

export type StackComponent = keyof typeof STACK_COMPONENTS;

export interface StackState {
  up: boolean;
  detail: string;
  env: Record<string, string> | null;
  /** The PIDs of the components asked about: changes when one was restarted. */
  pids: string;
}

/** Whether the given components are all up, from `stack.sh status`. */
export function stackState(components: readonly StackComponent[] = ['redis', 'mysql']): StackState {
  const file = stackEnvFile();
  const env = readStackEnv(file);
  if (!env) return { up: false, detail: `${relative(REPO_ROOT, file)} not found (the stack was never started)`, env: null, pids: '' };
  const script = env.STACK_SCRIPT || join(REPO_ROOT, 'deploy', 'local', 'stack.sh');
  const r = spawnSync('bash', [script, 'status'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
  const wanted = components.map((c) => STACK_COMPONENTS[c]);
  const lines = `${r.stdout}`.split('\n').filter((l) => wanted.some((w) => l.trim().startsWith(w.row)));
  const down = lines.filter((l) => !/\sup\b/.test(l));
  const pids = lines.map((l) => l.trim().split(/\s+/).slice(0, 2).join('=')).join(' ');
  const missing = wanted.filter((w) => lines.filter((l) => l.trim().startsWith(w.row)).length < w.count);
  if (missing.length || down.length) {
    const why = down.length
      ? down.map((l) => l.trim().replace(/\s+/g, ' ')).join('; ')
      : `${missing.map((w) => w.label).join(', ')} not listed: ${(r.stderr || r.stdout || 'no output').trim()}`;
    return { up: false, detail: `stack.sh status: ${why}`, env, pids };
  }
  return {
    up: true,
    detail: `${wanted
      .map((w) => w.label)
      .join(', ')
      .replace(/, ([^,]*)$/, ' and $1')} up`,
    env,
    pids,
  };
}

/** `stackState` until it is up or `seconds` have passed. */
export async function waitStackUp(components: readonly StackComponent[], seconds: number, log: (msg: string) => void): Promise<StackState> {
  let s = stackState(components);
  for (const until = Date.now() + seconds * 1000; !s.up && Date.now() < until; s = stackState(components)) {
    log(`real stack not up (${s.detail}); waiting up to ${seconds}s`);
    await sleep(5000);
  }
  return s;
}
