import { ChildProcess, spawn } from 'child_process';
import Database from 'better-sqlite3';
import { createHash, randomBytes, randomUUID } from 'crypto';
import { createConnection } from 'mysql2/promise';
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
  /** The operator listeners of the three apps. */
  admin: { generation: string; redirect: string; analytics: string };
}

/** Free public and admin ports for the three apps, as endpoints and as the env that sets them. */
export async function allocateEndpoints(): Promise<{ endpoints: Endpoints; env: Record<string, string> }> {
  const [g, r, a, ga, ra, aa] = await Promise.all(Array.from({ length: 6 }, () => freePort()));
  const url = (port: number) => `http://127.0.0.1:${port}`;
  return {
    endpoints: { generation: url(g), redirect: url(r), analytics: url(a), admin: { generation: url(ga), redirect: url(ra), analytics: url(aa) } },
    env: {
      GENERATION_PORT: String(g), REDIRECT_PORT: String(r), ANALYTICS_PORT: String(a),
      GENERATION_ADMIN_PORT: String(ga), REDIRECT_ADMIN_PORT: String(ra), ANALYTICS_ADMIN_PORT: String(aa),
    },
  };
}

/** The README's `npm start` (three apps in one process) on its own data directory and ports. */
export async function startEmbedded(dataDir: string, extra: Record<string, string> = {}): Promise<{ proc: RunningProcess; endpoints: Endpoints; env: Record<string, string> }> {
  const { endpoints, env: ports } = await allocateEndpoints();
  const env = { SHORTLINK_DATA_DIR: dataDir, LOG_LEVEL: 'warn', DB_DRIVER: 'sqlite', CACHE_DRIVER: 'memory', BUS_DRIVER: 'memory', OLAP_DRIVER: 'chdb', ...ports, ...extra };
  const proc = startProcess('tools/embedded/src/main.ts', env);
  await Promise.all([endpoints.generation, endpoints.redirect, endpoints.analytics].map((base) => waitHealthy(base, proc)));
  return { proc, endpoints, env };
}

/** Starts the embedded process again on the same data directory and ports. */
export async function restartEmbedded(proc: RunningProcess, endpoints: Endpoints, env: Record<string, string>): Promise<RunningProcess> {
  await proc.stop();
  const again = startProcess('tools/embedded/src/main.ts', env);
  await Promise.all([endpoints.generation, endpoints.redirect, endpoints.analytics].map((base) => waitHealthy(base, again)));
  return again;
}

export const API_KEY = 'sl_e2e_test_key_0123456789abcdef';

/** The keys every server-profile process of one test run shares (required with DB_DRIVER=mysql). */
export const SERVER_SECRETS = { SHORTLINK_CODE_SECRET: randomBytes(32).toString('base64'), SHORTLINK_VISITOR_SECRET: randomBytes(32).toString('base64') };

export async function createLink(endpoints: Endpoints, body: object, apiKey = API_KEY) {
  const res = await fetch(`${endpoints.generation}/api/v1/links`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, unknown> };
}

export async function getStats(endpoints: Endpoints, code: string, apiKey = API_KEY) {
  const res = await fetch(`${endpoints.analytics}/api/v1/links/${code}/stats`, { headers: { 'x-api-key': apiKey } });
  return { status: res.status, body: (await res.json()) as { totals: { clicks: number; visitors: number }; series: Array<{ minute: string; clicks: number; visitors: number }> } };
}

/** A desktop browser: what a person clicking a link sends (analytics leaves bots out by default). */
export const BROWSER_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

export const redirectOf = (endpoints: Endpoints, code: string, headers: Record<string, string> = {}) =>
  fetch(`${endpoints.redirect}/${code}`, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA, ...headers } });

/** Prometheus text -> "name{labels}" -> value, the `app` label dropped. */
export function parseMetrics(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels = (match[2] ?? '').replace(/,?app="[^"]*"/, '').replace(/^\{,/, '{').replace(/^\{\}$/, '');
    m.set(`${match[1]}${labels}`, Number(match[3]));
  }
  return m;
}

/**
 * A second tenant of the installation and its API key, written straight into the meta database
 * (sha256 of the key, as the tenant store keeps it): the public API has no tenant administration.
 */
export async function insertTenant(meta: { sqliteFile: string } | { mysqlUrl: string }): Promise<string> {
  const key = `sl_${randomBytes(24).toString('hex')}`;
  const id = randomUUID();
  const hash = createHash('sha256').update(key).digest('hex');
  if ('sqliteFile' in meta) {
    const db = new Database(meta.sqliteFile);
    try {
      db.pragma('busy_timeout = 5000');
      db.prepare('INSERT INTO tenants (id, name, plan, created_at) VALUES (?, ?, ?, ?)').run(id, 'e2e-other', 'paid', Date.now());
      db.prepare('INSERT INTO api_keys (key_hash, tenant_id, created_at) VALUES (?, ?, ?)').run(hash, id, Date.now());
    } finally {
      db.close();
    }
  } else {
    const conn = await createConnection(meta.mysqlUrl);
    try {
      await conn.query('INSERT INTO tenants (id, name, plan, created_at) VALUES (?, ?, ?, NOW(3))', [id, 'e2e-other', 'paid']);
      await conn.query('INSERT INTO api_keys (key_hash, tenant_id, created_at) VALUES (?, ?, NOW(3))', [hash, id]);
    } finally {
      await conn.end();
    }
  }
  return key;
}
