import { execFile } from 'child_process';
import { existsSync, readFileSync } from 'fs';
import { join } from 'path';
import { Cluster, Redis } from 'ioredis';
import { createLinks as createLinksThrough, CreatedLink, eventually, metric, Metrics, metricsOf, total } from '@shortlink/harness';
import { CacheKeys } from '@shortlink/read-path';
import { TenantService } from '@shortlink/tenants-domain';
import { redisClusterNodes, requireEnv } from '@shortlink/testing';
import { API_KEY, SERVER_SECRETS } from '../e2e/support';
import { MysqlMetaStore } from '@shortlink/wiring';

/**
 * What is particular to the resilience tier: the stack's own stop/start (or a SIGKILL by the PID it
 * recorded), direct Redis access, the redirect's counters this tier asserts on, and its links.
 * Processes, ports, HTTP load, metrics parsing and link creation are in @shortlink/harness.
 */

export { API_KEY };

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

/**
 * The PID stack.sh recorded in `<name>.pid`, checked against the process' command line (never signal a
 * PID the system gave to another process since): `looksRight` tells the server's command line.
 */
export function stackPid(name: string, looksRight: (cmdline: string) => boolean): number {
  const file = join(requireEnv('STACK_PIDS_DIR'), `${name}.pid`);
  if (!existsSync(file)) throw new Error(`no pid file ${file}: is ${name} running?`);
  const pid = Number(readFileSync(file, 'utf8').trim());
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  if (!looksRight(cmdline)) throw new Error(`pid ${pid} of ${name} is "${cmdline.slice(0, 200)}", not that server`);
  return pid;
}

/** The PID of a Redis node. */
export const redisNodePid = (port: number): number => stackPid(`redis-${port}`, (c) => c.includes('redis-server') && c.includes(`:${port}`));

// ----------------------------------------------------------------------------- apps

/** The apps' settings on the stack's MariaDB and Redis, with an in-process bus and chdb, on a domain of the scenario's own. */
export const stackApps = (domain: string): Record<string, string> => ({
  DB_DRIVER: 'mysql',
  CACHE_DRIVER: 'redis',
  BUS_DRIVER: 'memory',
  OLAP_DRIVER: 'chdb',
  LOG_LEVEL: 'warn',
  SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
  ...SERVER_SECRETS,
  SHORTLINK_DEFAULT_DOMAIN: domain,
  SHORTLINK_PUBLIC_BASE_URL: `http://${domain}`,
});

// ----------------------------------------------------------------------------- redis

/** Until the node at `port` answers and sees a healthy cluster (after a SIGCONT or a restart). */
export const healthyAgain = (port: number) =>
  eventually(
    `redis-node-${port} back in a healthy cluster`,
    async () => /cluster_state:ok/.test((await nodeCommand(port, 'CLUSTER', 'INFO')) ?? ''),
    60_000,
    100,
  );

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
  const r = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
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
    return text
      .trim()
      .split('\n')
      .map((line) => {
        const f = line.trim().split(' ');
        const slots = f
          .slice(8)
          .filter((s) => /^\d/.test(s))
          .map((s) => {
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

/**
 * True when the Bloom filter's layout lists ready generations only and every partition of them
 * carries its sentinel (bit 0), like BloomFilter.isBuilt.
 */
export function bloomBuilt(): Promise<boolean> {
  return withCluster(async (c) => {
    const raw = await c.get(CacheKeys.bloomLayout());
    if (!raw) return false;
    const layout = JSON.parse(raw) as { generations: Array<{ id: string; partitions: number; state: string }> };
    if (layout.generations.length === 0 || layout.generations.some((g) => g.state !== 'ready')) return false;
    for (const g of layout.generations) {
      const bits = await Promise.all(Array.from({ length: g.partitions }, (_, p) => c.getbit(CacheKeys.bloomPartition(g.id, p), 0)));
      if (!bits.every((b) => b === 1)) return false;
    }
    return true;
  });
}

// ----------------------------------------------------------------------------- metrics

export const lookups = (m: Metrics, source: string) => metric(m, `shortlink_redirect_lookup_total{source="${source}"}`);
export const dbQueries = (m: Metrics) => metric(m, 'shortlink_redirect_db_queries_total');
export const allLookups = (m: Metrics) => total(m, 'shortlink_redirect_lookup_total');

export async function sumOver(bases: readonly string[], read: (m: Metrics) => number): Promise<number> {
  const all = await Promise.all(bases.map(metricsOf));
  return all.reduce((s, m) => s + read(m), 0);
}

// ----------------------------------------------------------------------------- links

/** `count` links made through the generation API with the tier's key, their URLs tagged for the scenario. */
export function createLinks(generation: string, count: number, tag: string, concurrency = 8): Promise<CreatedLink[]> {
  return createLinksThrough({
    generation,
    apiKey: API_KEY,
    count,
    concurrency,
    url: (i) => `https://example.com/resilience/${tag}/${i}?r=${Date.now().toString(36)}`,
  });
}

/**
 * A tenant and its first key, made by the tenant service on the real meta database: for tests that
 * run the analytics app alone, without a generation app whose admin API would do it.
 */
export async function createTenantInMeta(): Promise<string> {
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  try {
    return (await new TenantService(meta.tenants).createTenant({ name: 'resilience', plan: 'paid' })).issued.apiKey;
  } finally {
    await meta.close();
  }
}
