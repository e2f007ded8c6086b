/**
 * Process supervision: start a command or a TypeScript entry point as a child process with its own
 * environment and captured output, wait until it serves, and stop it by its PID (SIGTERM, then
 * SIGKILL). A ProcessGroup remembers what it started so a supervisor can stop all of it on exit.
 */
import { ChildProcess, spawn } from 'child_process';
import { REPO_ROOT } from './paths';
import { eventually } from './poll';

export interface StartOptions {
  /** Shown in logs and errors (default: the command or entry point). */
  name?: string;
  /** The process's own settings, applied over `baseEnv`. */
  env?: Record<string, string>;
  /** The environment it starts from (default: this process's). See `withoutAppSettings`. */
  baseEnv?: NodeJS.ProcessEnv;
  /** Pins it to this core with `taskset -c`, which execs the command: the PID stays the command's own. */
  core?: string;
  /** Default: the repository's root. */
  cwd?: string;
  /** Registers the process there; its grace period and log are the defaults of this one. */
  group?: ProcessGroup;
  /** Milliseconds between SIGTERM and SIGKILL in `stop()` (default 10 000). */
  graceMs?: number;
  log?: (msg: string) => void;
}

export interface EntryOptions extends StartOptions {
  /** Node/V8 flags, before the preloads (e.g. `--max-semi-space-size=64`). */
  nodeArgs?: readonly string[];
  /** Modules preloaded with `-r` after tools/register.js (paths relative to the repository). */
  preload?: readonly string[];
}

/** Output kept per process: the last half is kept when it grows past this. */
const MAX_OUTPUT = 1_000_000;

/** Whether `exited` settles within `ms` (the timer is cleared either way, so it holds no handle open). */
async function exitsWithin(exited: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([exited.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A started child process: its captured stdout+stderr, whether it runs, and a stop by PID. */
export class Proc {
  private out = '';
  readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    private readonly graceMs = 10_000,
    private readonly log: (msg: string) => void = () => undefined,
  ) {
    const keep = (d: Buffer) => {
      this.out += d.toString();
      if (this.out.length > MAX_OUTPUT) this.out = this.out.slice(-MAX_OUTPUT / 2);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.once('error', (e) => {
        this.out += `\n[spawn error] ${e.message}\n`;
        resolve();
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null && this.child.pid !== undefined;
  }

  output(): string {
    return this.out;
  }

  /** SIGTERM, then SIGKILL after the grace period, by this process's own PID. */
  async stop(graceMs = this.graceMs): Promise<void> {
    if (!this.alive) return;
    try {
      process.kill(this.pid, 'SIGTERM');
    } catch {
      return;
    }
    const timedOut = !(await exitsWithin(this.exited, graceMs));
    if (timedOut && this.alive) {
      this.log(`${this.name} (pid ${this.pid}) did not stop on SIGTERM, sending SIGKILL`);
      try {
        process.kill(this.pid, 'SIGKILL');
      } catch {
        // gone already
      }
      await exitsWithin(this.exited, 3_000);
    }
  }
}

/** The e2e and resilience tiers' name for a started process. */
export type RunningProcess = Proc;

/** Everything a supervisor started, stopped together (newest first) by PID. */
export class ProcessGroup {
  private readonly procs: Proc[] = [];

  constructor(readonly defaults: { graceMs?: number; log?: (msg: string) => void } = {}) {}

  add(p: Proc): Proc {
    this.procs.push(p);
    return p;
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      this.procs
        .filter((p) => p.alive)
        .reverse()
        .map((p) => p.stop()),
    );
  }
}

/** Starts `command args` (optionally pinned to a core), with stdout and stderr captured. */
export function startCommand(command: string, args: readonly string[], opts: StartOptions = {}): Proc {
  const [cmd, argv] = opts.core === undefined ? [command, [...args]] : ['taskset', ['-c', opts.core, command, ...args]];
  const env = { ...(opts.baseEnv ?? process.env), ...opts.env };
  const child = spawn(cmd, argv, { cwd: opts.cwd ?? REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const g = opts.group?.defaults ?? {};
  const p = new Proc(opts.name ?? command, child, opts.graceMs ?? g.graceMs, opts.log ?? g.log);
  opts.group?.add(p);
  return p;
}

/** Starts a TypeScript entry point the way `npm start` does (`node -r ./tools/register.js <entry>`), with its own environment. */
export function startProcess(entry: string, env: Record<string, string> = {}, opts: EntryOptions = {}): Proc {
  const preload = ['./tools/register.js', ...(opts.preload ?? [])].flatMap((m) => ['-r', m]);
  return startCommand(process.execPath, [...(opts.nodeArgs ?? []), ...preload, entry], { name: entry, ...opts, env: { ...opts.env, ...env } });
}

/** Settings of the shortlink apps, and NODE_OPTIONS: left out by `withoutAppSettings`. */
const APP_SETTING =
  /^(NODE_ENV|LOG_LEVEL|HOST|ADMIN_HOST|SHORTLINK_|CODE_STRATEGY|ID_BLOCK_|DB_|SHARD_|SQLITE_|MYSQL_|CACHE_|REDIS_|MEMORY_CACHE_|BUS_|KAFKA_|CLICK_|OLAP_|CLICKHOUSE_|ANALYTICS_|REDIRECT_|GENERATION_|BLOOM_|HOT_|LOCK_|BREAKER_|RATE_LIMIT_|SNAPSHOT_|BATCH_|BULK_|PLAN_|DOMAIN_|TRUSTED_PROXIES$|HTTP_|AUTH_FAILURES_|NODE_OPTIONS$)/;

/** An environment without any shortlink setting, so only what the caller sets applies to a started app. */
export function withoutAppSettings(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !APP_SETTING.test(k)) out[k] = v;
  return out;
}

/**
 * Polls `probe` until it holds; fails at once, with the process's output, when the process exits,
 * and with its output on timeout.
 */
export async function whenServing(proc: Proc, what: string, probe: () => Promise<boolean>, timeoutMs = 60_000, intervalMs = 250): Promise<void> {
  let state: 'up' | 'exited';
  try {
    state = await eventually(what, async () => (!proc.alive ? 'exited' : (await probe()) && 'up'), timeoutMs, intervalMs);
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- output of ${proc.name} ---\n${proc.output().slice(-4000)}`);
  }
  if (state === 'exited') {
    throw new Error(
      `${proc.name} exited (code ${proc.child.exitCode}, signal ${proc.child.signalCode}) while waiting for ${what}\n--- output ---\n${proc.output().slice(-4000)}`,
    );
  }
}

/** Waits until `GET <baseUrl>/health` answers 200. */
export function waitHealthy(baseUrl: string, proc: Proc, timeoutMs = 60_000): Promise<void> {
  return whenServing(
    proc,
    `${baseUrl}/health`,
    async () => (await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(3000) })).status === 200,
    timeoutMs,
  );
}
