import { execFile } from 'child_process';
import { existsSync, readFileSync } from 'fs';
import * as http from 'http';
import { join } from 'path';
import { Cluster, Redis } from 'ioredis';
import { redisClusterNodes, requireEnv } from '@shortlink/testing';
import { API_KEY, eventually, freePort, RunningProcess, startProcess } from '../e2e/support';

/**
 * Helpers of the resilience tier: the redirect app as child processes against the real stack of
 * deploy/local/stack.sh, load over keep-alive sockets, Prometheus counters read from /metrics,
 * and the stack's own stop/start (or a SIGKILL by the PID it recorded).
 */

export { API_KEY, eventually };
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ----------------------------------------------------------------------------- stack

export type Component = 'redis' | `redis-node-${number}` | 'mysql-a' | 'mysql-b' | 'clickhouse' | 'kafka';

/** `bash stack.sh <cmd> <component>`; resolves with its log (stderr), rejects with it. */
export function stack(cmd: 'stop' | 'start' | 'status', component?: Component, timeoutMs = 150_000): Promise<string> {
  const script = requireEnv('STACK_SCRIPT');
  const args = [script, cmd, ...(component ? [component] : [])];
  return new Promise((resolve, reject) => {
    execFile('bash', args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`stack.sh ${args.slice(1).join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve(`${stdout}${stderr}`);
    });
  });
}

/**
 * Components a test stopped: started again by `restoreAll` (in the test's finally and, as a net,
 * in afterAll), so the stack is left up also when an assertion fails mid-outage.
 */
export class Outages {
  private readonly down = new Set<Component>();
  readonly timings: Record<string, number> = {};

  async stop(component: Component): Promise<void> {
    this.down.add(component);
    const t = Date.now();
    await stack('stop', component);
    this.timings[`stop ${component}`] = Date.now() - t;
  }

  /** The component was taken down by other means (SIGKILL): remember to start it again. */
  killed(component: Component): void {
    this.down.add(component);
  }

  async start(component: Component): Promise<void> {
    const t = Date.now();
    await stack('start', component);
    this.down.delete(component);
    this.timings[`start ${component}`] = Date.now() - t;
  }

  /** Starts everything still down; tries each even when one fails, then throws the first error. */
  async restoreAll(): Promise<void> {
    let first: unknown;
    for (const c of [...this.down]) {
      await this.start(c).catch((e) => (first ??= e));
    }
    if (first) throw first;
  }

  get pending(): Component[] {
    return [...this.down];
  }
}

/** The PID stack.sh recorded for a Redis node, checked against the process' command line. */
export function redisNodePid(port: number): number {
  const file = join(requireEnv('STACK_PIDS_DIR'), `redis-${port}.pid`);
  if (!existsSync(file)) throw new Error(`no pid file ${file}: is redis node ${port} running?`);
  const pid = Number(readFileSync(file, 'utf8').trim());
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  if (!cmdline.includes('redis-server') || !cmdline.includes(`:${port}`)) throw new Error(`pid ${pid} of redis node ${port} is "${cmdline}", not that node`);
  return pid;
}

// ----------------------------------------------------------------------------- redis

/** A short-lived Cluster client of the test itself (never used while Redis is down). */
export async function withCluster<T>(fn: (c: Cluster) => Promise<T>): Promise<T> {
  const c = new Cluster(redisClusterNodes(), { redisOptions: { connectTimeout: 2000, maxRetriesPerRequest: 1 }, clusterRetryStrategy: () => null });
  c.on('error', () => undefined);
  try {
    return await fn(c);
  } finally {
    c.disconnect();
  }
}

/** One command on one node (no cluster redirection), or null when it does not answer. */
export async function nodeCommand(port: number, ...args: string[]): Promise<string | null> {
  const r = new Redis({ host: '127.0.0.1', port, lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return String(await r.call(args[0], ...args.slice(1)));
  } catch {
    return null;
  } finally {
    r.disconnect();
  }
}

export interface ClusterNode {
  id: string;
  port: number;
  flags: string[];
  masterId: string | null;
  slots: Array<[number, number]>;
}

/** CLUSTER NODES as seen by the first node that answers. */
export async function clusterNodes(): Promise<ClusterNode[]> {
  for (const { port } of redisClusterNodes()) {
    const text = await nodeCommand(port, 'CLUSTER', 'NODES');
    if (!text) continue;
    return text.trim().split('\n').map((line) => {
      const f = line.trim().split(' ');
      const slots = f.slice(8).filter((s) => /^\d/.test(s)).map((s) => {
        const [a, b] = s.split('-').map(Number);
        return [a, b ?? a] as [number, number];
      });
      return { id: f[0], port: Number(f[1].split('@')[0].split(':')[1]), flags: f[2].split(','), masterId: f[3] === '-' ? null : f[3], slots };
    });
  }
  throw new Error('no Redis node answers CLUSTER NODES');
}

export async function keySlot(key: string): Promise<number> {
  for (const { port } of redisClusterNodes()) {
    const s = await nodeCommand(port, 'CLUSTER', 'KEYSLOT', key);
    if (s !== null) return Number(s);
  }
  throw new Error('no Redis node answers CLUSTER KEYSLOT');
}

export const BLOOM_PARTITIONS = 16; // BLOOM_PARTITIONS default; every app of the tier runs with it

/** True when every Bloom partition carries its "built" sentinel (bit 0), like BloomFilter.isBuilt. */
export function bloomBuilt(): Promise<boolean> {
  return withCluster(async (c) => {
    const bits = await Promise.all(Array.from({ length: BLOOM_PARTITIONS }, (_, p) => c.getbit(`shortlink:bloom:links:${p}`, 0)));
    return bits.every((b) => b === 1);
  });
}

// ----------------------------------------------------------------------------- http

export interface Reply {
  status: number; // 0: network error or timeout
  location: string | null;
  retryAfter: string | null;
  contentType: string | null;
  body: string;
  ms: number;
  error: string | null;
  startedAt: number;
}

/** One request over a keep-alive agent; never rejects (a network error is status 0). */
export function send(agent: http.Agent, base: string, path: string, method: 'GET' | 'HEAD' = 'GET', timeoutMs = 5000): Promise<Reply> {
  const startedAt = Date.now();
  const url = new URL(path, base);
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: Omit<Reply, 'ms' | 'startedAt'>) => {
      if (done) return;
      done = true;
      resolve({ ...r, ms: Date.now() - startedAt, startedAt });
    };
    const req = http.request({ agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () =>
        finish({
          status: res.statusCode ?? 0,
          location: (res.headers.location as string | undefined) ?? null,
          retryAfter: (res.headers['retry-after'] as string | undefined) ?? null,
          contentType: (res.headers['content-type'] as string | undefined) ?? null,
          body,
          error: null,
        }),
      );
      res.on('error', (e) => finish({ status: 0, location: null, retryAfter: null, contentType: null, body, error: e.message }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no response within ${timeoutMs} ms`)));
    req.on('error', (e) => finish({ status: 0, location: null, retryAfter: null, contentType: null, body: '', error: e.message }));
    req.end();
  });
}

export const keepAliveAgent = () => new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 2048 });

/** Runs `total` requests with at most `concurrency` in flight (bounded by count and deadline). */
export async function pooled(total: number, concurrency: number, one: (i: number) => Promise<Reply>, deadlineMs = 60_000): Promise<Reply[]> {
  const out = new Array<Reply>(total);
  const deadline = Date.now() + deadlineMs;
  let next = 0;
  const worker = async () => {
    while (next < total) {
      if (Date.now() > deadline) throw new Error(`pooled load: deadline of ${deadlineMs} ms passed after ${next} of ${total} requests`);
      const i = next++;
      out[i] = await one(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  return out;
}

/**
 * Open-loop steady load: `ratePerSecond` requests for `durationMs` (a fixed count), started on a
 * 10 ms tick whatever the responses do, so a stall shows up as slow or failed requests.
 */
export async function steadyLoad(ratePerSecond: number, durationMs: number, one: (i: number) => Promise<Reply>): Promise<Reply[]> {
  const total = Math.round((ratePerSecond * durationMs) / 1000);
  const pending: Array<Promise<Reply>> = [];
  const t0 = Date.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((Date.now() - t0) * ratePerSecond) / 1000));
      while (pending.length < due) pending.push(one(pending.length));
      if (pending.length >= total || Date.now() - t0 > durationMs + 5000) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  return Promise.all(pending);
}

// ----------------------------------------------------------------------------- metrics

export type Metrics = Map<string, number>;

/** Prometheus text → "name{labels}" → value (labels as printed, `app` label dropped). */
export function parseMetrics(text: string): Metrics {
  const m: Metrics = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels = (match[2] ?? '').replace(/,?app="[^"]*"/, '').replace(/^\{,/, '{').replace(/^\{\}$/, '');
    m.set(`${match[1]}${labels}`, Number(match[3]));
  }
  return m;
}

export async function metricsOf(base: string): Promise<Metrics> {
  const res = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) });
  if (res.status !== 200) throw new Error(`GET ${base}/metrics: ${res.status}`);
  return parseMetrics(await res.text());
}

/** A counter or gauge (0 when the series does not exist yet). */
export const metric = (m: Metrics, series: string) => m.get(series) ?? 0;
export const lookups = (m: Metrics, source: string) => metric(m, `shortlink_redirect_lookup_total{source="${source}"}`);
export const dbQueries = (m: Metrics) => metric(m, 'shortlink_redirect_db_queries_total');
export const allLookups = (m: Metrics) => [...m].filter(([k]) => k.startsWith('shortlink_redirect_lookup_total{')).reduce((s, [, v]) => s + v, 0);

export async function sumOver(bases: readonly string[], read: (m: Metrics) => number): Promise<number> {
  const all = await Promise.all(bases.map(metricsOf));
  return all.reduce((s, m) => s + read(m), 0);
}

// ----------------------------------------------------------------------------- apps

export interface App {
  readonly base: string;
  /** The app's operator listener (/metrics, /internal/*, /health/details). */
  readonly admin: string;
  readonly proc: RunningProcess;
  stop(): Promise<void>;
}

/** Starts an app process on free ports; waits for /health (or only /metrics when its dependencies are down). */
export async function startApp(name: 'generation' | 'redirect', env: Record<string, string>, wait: 'health' | 'listening' = 'health', timeoutMs = 60_000): Promise<App> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const prefix = name === 'generation' ? 'GENERATION' : 'REDIRECT';
  const proc = startProcess(`apps/${name}/src/main.ts`, { ...env, [`${prefix}_PORT`]: String(port), [`${prefix}_ADMIN_PORT`]: String(adminPort) });
  const base = `http://127.0.0.1:${port}`;
  const admin = `http://127.0.0.1:${adminPort}`;
  try {
    const state = await eventually(
      `${name} on ${base} (${wait})`,
      async () => {
        if (proc.child.exitCode !== null || proc.child.signalCode !== null) return 'exited';
        const res = await fetch(wait === 'health' ? `${base}/health` : `${admin}/metrics`, { signal: AbortSignal.timeout(3000) });
        return res.status === 200 && 'up';
      },
      timeoutMs,
      200,
    );
    if (state === 'exited') throw new Error(`${name} exited (code ${proc.child.exitCode}, signal ${proc.child.signalCode}) before answering on ${base}`);
  } catch (e) {
    await proc.stop();
    throw new Error(`${(e as Error).message}\n--- output ---\n${proc.output()}`);
  }
  return { base, admin, proc, stop: () => proc.stop() };
}

/** A link created through the generation API. */
export interface CreatedLink {
  code: string;
  domain: string;
  url: string;
  key: string; // short:link:<domain>:<code>
}

export async function createLinks(generation: string, count: number, tag: string, concurrency = 8): Promise<CreatedLink[]> {
  const out: CreatedLink[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const url = `https://example.com/resilience/${tag}/${i}?r=${Date.now().toString(36)}`;
      const res = await fetch(`${generation}/api/v1/links`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify({ url }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await res.json()) as { code: string; domain: string };
      if (res.status !== 201) throw new Error(`creating a link: ${res.status} ${JSON.stringify(body)}`);
      out[i] = { code: body.code, domain: body.domain, url, key: `short:link:${body.domain}:${body.code}` };
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return out;
}

/** Summary of a batch of replies for assertion messages. */
export function tally(replies: readonly Reply[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const r of replies) {
    const k = r.status === 0 ? `error:${r.error}` : String(r.status);
    t[k] = (t[k] ?? 0) + 1;
  }
  return t;
}

export function latency(replies: readonly Reply[]): { p50: number; p99: number; max: number } {
  const ms = replies.map((r) => r.ms).sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99), max: ms[ms.length - 1] ?? 0 };
}
