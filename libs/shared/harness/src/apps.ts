/** The apps as child processes: each on its own free public and admin ports, with the server profile's keys. */
import { randomBytes } from 'crypto';
import { join } from 'path';
import { AppName, appPorts } from './ports';
import { EntryOptions, Proc, startCommand, startProcess, whenServing } from './process';

/**
 * A fresh pair of the server profile's keys (≥ 32 random bytes each), required with
 * DB_DRIVER=mysql. Every process of one run must share the same pair.
 */
export function serverSecrets(): { SHORTLINK_CODE_SECRET: string; SHORTLINK_VISITOR_SECRET: string } {
  return { SHORTLINK_CODE_SECRET: randomBytes(32).toString('base64'), SHORTLINK_VISITOR_SECRET: randomBytes(32).toString('base64') };
}

export interface App {
  readonly name: AppName;
  /** The public listener (API, redirects, `/health`). */
  readonly base: string;
  /** The app's operator listener (/metrics, /internal/*, /health/details). */
  readonly admin: string;
  readonly proc: Proc;
  stop(): Promise<void>;
}

export interface StartAppOptions extends EntryOptions {
  /**
   * `health`: until the public `/health` is 200; `listening`: until both listeners answer at all (the
   * admin `/metrics` 200, the public `/health` any status: its dependencies may be down). The public
   * listener opens after the bootstrap, which may wait for a dependency a while (the change channel).
   */
  wait?: 'health' | 'listening';
  timeoutMs?: number;
  /** Listen on this app's ports again (a restart after a kill) instead of free ones. */
  portsOf?: App;
  /**
   * Run the compiled app as the image does (`node --enable-source-maps dist/apps/<name>/src/main.js`,
   * after `node tools/build.js <name>`) instead of the sources through tools/register.js.
   */
  built?: boolean;
  /** Called with the process as soon as it is spawned, before it serves (a bench that watches it from its first moment). */
  started?: (proc: Proc) => void;
  /**
   * Run the app of another checkout (a bench's "before"): its sources, compiled with its own
   * tsconfig (tools/register.js otherwise keeps the path this process set).
   */
  checkout?: string;
}

/** The ports an app listened on, as `appPorts` gives them. */
function samePorts(app: App): { base: string; admin: string; env: Record<string, string> } {
  const prefix = app.name.toUpperCase();
  return { base: app.base, admin: app.admin, env: { [`${prefix}_PORT`]: new URL(app.base).port, [`${prefix}_ADMIN_PORT`]: new URL(app.admin).port } };
}

/** Starts `apps/<name>/src/main.ts` on free ports and waits for it; stops it again when it does not come up. */
export async function startApp(name: AppName, env: Record<string, string>, opts: StartAppOptions = {}): Promise<App> {
  const { wait = 'health', timeoutMs = 60_000, portsOf, built, started, checkout, ...rest } = opts;
  const start = checkout ? { ...rest, cwd: checkout } : rest;
  if (checkout) env = { ...env, SWC_NODE_PROJECT: join(checkout, 'tsconfig.base.json') };
  const ports = portsOf ? samePorts(portsOf) : await appPorts(name);
  const proc = built
    ? startCommand(process.execPath, [...(start.nodeArgs ?? []), '--enable-source-maps', `dist/apps/${name}/src/main.js`], {
        name,
        ...start,
        env: { ...start.env, ...env, ...ports.env },
      })
    : startProcess(`apps/${name}/src/main.ts`, { ...env, ...ports.env }, { name, ...start });
  started?.(proc);
  const status = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(3000) })).status;
  const ready =
    wait === 'health'
      ? async () => (await status(`${ports.base}/health`)) === 200
      : async () => (await status(`${ports.admin}/metrics`)) === 200 && (await status(`${ports.base}/health`)) > 0;
  try {
    await whenServing(proc, `${name} on ${ports.base} (${wait})`, ready, timeoutMs, 200);
  } catch (e) {
    await proc.stop();
    throw e;
  }
  return { name, base: ports.base, admin: ports.admin, proc, stop: () => proc.stop() };
}
