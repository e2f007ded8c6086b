import { ChildProcess, spawn } from 'child_process';
import { createServer } from 'net';
import { join } from 'path';

export const ROOT = join(__dirname, '..', '..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface RunningProcess {
  readonly child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts a TypeScript entry point the way `npm start` does, with its own environment. */
export function startProcess(entry: string, env: Record<string, string>): RunningProcess {
  let out = '';
  const child = spawn(process.execPath, ['-r', './tools/register.js', entry], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return {
    child,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => (clearTimeout(kill), resolve()));
        child.kill('SIGTERM');
      }),
  };
}

export async function eventually<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

export async function waitHealthy(baseUrl: string, proc: RunningProcess, timeoutMs = 60_000): Promise<void> {
  await eventually(
    `${baseUrl}/health`,
    async () => {
      if (proc.child.exitCode !== null) throw new Error(`process exited (${proc.child.exitCode}):\n${proc.output()}`);
      const res = await fetch(`${baseUrl}/health`);
      return res.status === 200;
    },
    timeoutMs,
    250,
  ).catch((e) => {
    throw new Error(`${(e as Error).message}\n--- output ---\n${proc.output()}`);
  });
}

export interface Endpoints {
  generation: string;
  redirect: string;
  analytics: string;
}

export const API_KEY = 'sl_e2e_test_key_0123456789abcdef';

export async function createLink(endpoints: Endpoints, body: object, apiKey = API_KEY) {
  const res = await fetch(`${endpoints.generation}/api/v1/links`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, unknown> };
}

export async function getStats(endpoints: Endpoints, code: string, apiKey = API_KEY) {
  const res = await fetch(`${endpoints.analytics}/api/v1/links/${code}/stats`, { headers: { 'x-api-key': apiKey } });
  return { status: res.status, body: (await res.json()) as { totals: { clicks: number; visitors: number }; series: Array<{ minute: string; clicks: number; visitors: number }> } };
}

export const redirectOf = (endpoints: Endpoints, code: string, headers: Record<string, string> = {}) => fetch(`${endpoints.redirect}/${code}`, { redirect: 'manual', headers });
