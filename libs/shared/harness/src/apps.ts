/** The apps as child processes: each on its own free public and admin ports, with the server profile's keys. */
import { randomBytes } from 'crypto';
import { AppName, appPorts } from './ports';
import { EntryOptions, Proc, startProcess, whenServing } from './process';

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
  /** `health`: until the public `/health` is 200; `listening`: only until the admin `/metrics` answers (its dependencies may be down). */
  wait?: 'health' | 'listening';
  timeoutMs?: number;
}

/** Starts `apps/<name>/src/main.ts` on free ports and waits for it; stops it again when it does not come up. */
export async function startApp(name: AppName, env: Record<string, string>, opts: StartAppOptions = {}): Promise<App> {
  const { wait = 'health', timeoutMs = 60_000, ...start } = opts;
  const ports = await appPorts(name);
  const proc = startProcess(`apps/${name}/src/main.ts`, { ...env, ...ports.env }, { name, ...start });
  const url = wait === 'health' ? `${ports.base}/health` : `${ports.admin}/metrics`;
  try {
    await whenServing(proc, `${name} on ${ports.base} (${wait})`, async () => (await fetch(url, { signal: AbortSignal.timeout(3000) })).status === 200, timeoutMs, 200);
  } catch (e) {
    await proc.stop();
    throw e;
  }
  return { name, base: ports.base, admin: ports.admin, proc, stop: () => proc.stop() };
}
