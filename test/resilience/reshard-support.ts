import * as http from 'http';
import { createConnection } from 'mysql2/promise';
import { routerOf, parseRingVersion, RingVersion } from '@shortlink/sharding-domain';
import { pooled, Reply, send, startCommand, withoutAppSettings } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { API_KEY } from './support';

/**
 * What the resharding and shard-failure scenarios share: the reshard CLI as a child process, the
 * ring and the shards read straight from MariaDB, and a bounded redirect + write load that records
 * every acknowledged write so that lost or stale ones can be counted afterwards.
 */

// ----------------------------------------------------------------------------- the CLI

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  pid: number;
}

/** `npm run reshard -- <args>` with `env`; resolves when it exits (bounded by `timeoutMs`, then SIGKILL). */
export function reshard(args: readonly string[], env: Record<string, string>, timeoutMs = 240_000): { pid: number; done: Promise<CliRun> } {
  const proc = startCommand(process.execPath, ['-r', './tools/register.js', 'tools/cli/src/reshard.ts', ...args], {
    name: `reshard ${args.join(' ')}`,
    env,
    baseEnv: withoutAppSettings(),
  });
  const timer = setTimeout(() => proc.alive && process.kill(proc.pid, 'SIGKILL'), timeoutMs);
  const done = proc.exited.then(() => {
    clearTimeout(timer);
    return { code: proc.child.exitCode, signal: proc.child.signalCode, out: proc.output(), pid: proc.pid };
  });
  return { pid: proc.pid, done };
}

/** Runs the CLI and fails with its output unless it exits 0; the JSON it printed last (--json), if any. */
export async function reshardOk(args: readonly string[], env: Record<string, string>): Promise<{ run: CliRun; json: Record<string, unknown> | null }> {
  const run = await reshard(args, env).done;
  if (run.code !== 0) throw new Error(`reshard ${args.join(' ')} exited ${run.code ?? run.signal}\n${run.out.slice(-6000)}`);
  const start = run.out.lastIndexOf('\n{');
  const text = start >= 0 ? run.out.slice(start + 1) : run.out.startsWith('{') ? run.out : '';
  return { run, json: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

// ----------------------------------------------------------------------------- the databases

type Conn = Awaited<ReturnType<typeof createConnection>>;

async function withConnection<T>(url: string, fn: (c: Conn) => Promise<T>): Promise<T> {
  const c = await createConnection(url);
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** name -> url of every shard of the stack: the ring's and the spare ones. */
export function shardUrls(): Map<string, string> {
  const spec = [requireEnv('MYSQL_SHARDS'), process.env.MYSQL_SPARE_SHARDS ?? ''].join(',');
  return new Map(
    spec
      .split(',')
      .filter(Boolean)
      .map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]),
  );
}

export async function currentRing(): Promise<RingVersion | null> {
  return withConnection(requireEnv('MYSQL_META_URL'), async (c) => {
    const [rows] = await c.query('SELECT version, spec FROM shard_ring_versions ORDER BY version DESC LIMIT 1');
    const r = (rows as Array<{ version: number; spec: string }>)[0];
    return r ? parseRingVersion(Number(r.version), r.spec) : null;
  });
}

/** Codes stored on each shard. */
export async function codesByShard(): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const [name, url] of shardUrls()) {
    // A spare shard has no tables until something opens it (its store migrates on first use).
    const codes = await withConnection(url, (c) => c.query('SELECT code FROM links')).then(
      ([rows]) => (rows as Array<{ code: string }>).map((r) => r.code),
      (e: { code?: string }) => (e.code === 'ER_NO_SUCH_TABLE' ? [] : Promise.reject(e)),
    );
    out.set(name, codes);
  }
  return out;
}

/** Rows stored on a shard that the ring does not give to it (none once a move is complete). */
export function misplaced(ring: RingVersion, byShard: Map<string, string[]>): string[] {
  const router = routerOf(ring.spec);
  return [...byShard].flatMap(([shard, codes]) => codes.filter((c) => router.shardFor(c) !== shard).map((c) => `${c}@${shard}`));
}

export function stddev(values: readonly number[]): number {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length);
}

/** The MariaDB server process of a shard (for SIGSTOP): `mysql-a` or `mysql-b` by its port. */
export function instanceOf(shard: string): 'mysql-a' | 'mysql-b' {
  const port = new URL(shardUrls().get(shard)!).port;
  return port === requireEnv('STACK_MYSQL_PORT_A') ? 'mysql-a' : 'mysql-b';
}

// ----------------------------------------------------------------------------- the load

export interface Tracked {
  code: string;
  domain: string;
  /** Every URL the link has had: a redirect may answer any of them while an edit propagates. */
  urls: Set<string>;
  /** The last acknowledged state; null once deleted. */
  last: { url: string; version: number } | null;
  /** Part of the redirect load (never deleted). */
  readable: boolean;
}

export interface LoadResult {
  redirects: number;
  redirectFailures: Array<{ base: string; code: string; status: number; location: string | null; error: string | null; ms: number; body: string }>;
  writes: Record<string, number>;
  writeFailures: Array<{ op: string; code: string; status: number; body: string }>;
  redirectLatency: number[];
}

async function api(agent: http.Agent, base: string, method: string, path: string, body?: object): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': API_KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(20_000),
  }).catch((e: Error) => ({ status: 0, text: async () => e.message }) as unknown as Response);
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { raw: text.slice(0, 200) };
  }
  void agent;
  return { status: res.status, body: parsed };
}

/**
 * Runs `work` under a bounded load: redirects at `redirectRate`/s over the readable links (spread
 * over `redirects`), and creates, edits and deletes at about `writeRate`/s through the generation
 * API. The load starts `leadMs` before the work and ends `tailMs` after it.
 */
export async function underLoad<T>(
  o: {
    generation: string;
    redirects: readonly string[];
    links: Tracked[];
    redirectRate: number;
    writeRate: number;
    leadMs: number;
    tailMs: number;
    maxMs: number;
    tag: string;
  },
  work: () => Promise<T>,
): Promise<{ result: T; load: LoadResult }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const load: LoadResult = { redirects: 0, redirectFailures: [], writes: {}, writeFailures: [], redirectLatency: [] };
  let stop = false;
  const started = Date.now();
  const pending: Array<Promise<unknown>> = [];
  const readable = () => o.links.filter((l) => l.readable && l.last);

  const redirectLoop = (async () => {
    let sent = 0;
    while (!stop && Date.now() - started < o.maxMs) {
      const due = Math.floor(((Date.now() - started) * o.redirectRate) / 1000);
      while (sent < due) {
        const pool = readable();
        const link = pool[Math.floor(Math.random() * pool.length)];
        const base = o.redirects[sent % o.redirects.length];
        sent++;
        pending.push(
          send(agent, base, `/${link.code}`, 'GET', 15_000).then((r: Reply) => {
            load.redirects++;
            load.redirectLatency.push(r.ms);
            if (r.status !== 302 || !r.location || !link.urls.has(r.location)) {
              load.redirectFailures.push({
                base,
                code: link.code,
                status: r.status,
                location: r.location,
                error: r.error,
                ms: r.ms,
                body: r.body.slice(0, 200),
              });
            }
          }),
        );
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();

  let n = 0;
  const count = (op: string) => (load.writes[op] = (load.writes[op] ?? 0) + 1);
  const writeOne = async () => {
    const i = n++;
    const kind = i % 10 < 4 ? 'create' : i % 10 < 9 ? 'edit' : 'delete';
    if (kind === 'create') {
      const url = `https://example.com/reshard/${o.tag}/new/${i}`;
      const r = await api(agent, o.generation, 'POST', '/api/v1/links', { url });
      if (r.status === 201) {
        o.links.push({
          code: String(r.body.code),
          domain: String(r.body.domain),
          urls: new Set([url]),
          last: { url, version: Number(r.body.version) },
          readable: true,
        });
        count('create');
      } else load.writeFailures.push({ op: 'create', code: '-', status: r.status, body: JSON.stringify(r.body).slice(0, 300) });
      return;
    }
    const pool = o.links.filter((l) => l.last && (kind === 'delete' ? !l.readable : l.readable));
    if (pool.length === 0) return;
    const link = pool[Math.floor(Math.random() * pool.length)];
    if (kind === 'edit') {
      const url = `https://example.com/reshard/${o.tag}/edit/${i}`;
      link.urls.add(url); // it may be visible before the answer arrives
      const r = await api(agent, o.generation, 'PATCH', `/api/v1/links/${link.code}`, { url });
      if (r.status === 200 && r.body.url === url) {
        if (!link.last || Number(r.body.version) > link.last.version) link.last = { url, version: Number(r.body.version) };
        count('edit');
      } else load.writeFailures.push({ op: 'edit', code: link.code, status: r.status, body: JSON.stringify(r.body).slice(0, 300) });
    } else {
      const r = await api(agent, o.generation, 'DELETE', `/api/v1/links/${link.code}`);
      if (r.status === 204) {
        link.last = null;
        count('delete');
      } else load.writeFailures.push({ op: 'delete', code: link.code, status: r.status, body: JSON.stringify(r.body).slice(0, 300) });
    }
  };
  // Two writers, each paced to half the rate. Edits go to the readable links, deletes to the others, so no write races a delete of its own link.
  const writers = (o.writeRate > 0 ? [0, 1] : []).map(async () => {
    while (!stop && Date.now() - started < o.maxMs) {
      const t0 = Date.now();
      await writeOne();
      await new Promise((r) => setTimeout(r, Math.max(0, 2000 / o.writeRate - (Date.now() - t0))));
    }
  });

  await new Promise((r) => setTimeout(r, o.leadMs));
  let result: T;
  try {
    result = await work();
    await new Promise((r) => setTimeout(r, o.tailMs));
  } finally {
    stop = true;
    await redirectLoop;
    await Promise.all(writers);
    await Promise.all(pending);
    agent.destroy();
  }
  return { result, load };
}

/**
 * Reads every tracked link back through the API and a redirect that has no cache: the last
 * acknowledged URL and version, or 404 once deleted. Returns what differs (lost or stale writes).
 */
export async function staleOrLost(generation: string, redirectNoCache: string, links: readonly Tracked[]): Promise<string[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  try {
    const problems = await pooled(
      links.length,
      16,
      async (i) => {
        const l = links[i];
        const got = await api(agent, generation, 'GET', `/api/v1/links/${l.code}`);
        if (l.last === null) return got.status === 404 ? null : `${l.code}: deleted but GET answers ${got.status} v${got.body.version}`;
        if (got.status !== 200 || got.body.url !== l.last.url || got.body.version !== l.last.version)
          return `${l.code}: GET ${got.status} ${String(got.body.url)} v${String(got.body.version)}, last written ${l.last.url} v${l.last.version}`;
        const r = await send(agent, redirectNoCache, `/${l.code}`, 'GET', 5000);
        return r.status === 302 && r.location === l.last.url ? null : `${l.code}: redirect ${r.status} ${r.location}, last written ${l.last.url}`;
      },
      120_000,
    );
    return problems.filter((p): p is string => p !== null);
  } finally {
    agent.destroy();
  }
}
