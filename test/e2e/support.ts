import { createClient } from '@clickhouse/client';
import { randomUUID } from 'crypto';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { allocateEndpoints, App, Endpoints, RunningProcess, serverSecrets, startApp, startProcess, waitHealthy, withoutAppSettings } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';

/**
 * What is particular to the e2e tier: the embedded process of `npm start` on its own data
 * directory and ports, the tier's API key and server keys, and the API calls the specs assert on.
 * Processes, ports and polling are in @shortlink/harness.
 */

/**
 * Starts `npm start`'s entry point (the three apps in one process) and waits until the three answer
 * /health. Only `env` configures it: none of the shell's shortlink settings (a sourced stack.env
 * carries the server profile's SHORTLINK_CODE_SECRET, which would make two installations share a key).
 */
async function launchEmbedded(endpoints: Endpoints, env: Record<string, string>): Promise<RunningProcess> {
  const proc = startProcess('tools/embedded/src/main.ts', env, { baseEnv: withoutAppSettings() });
  await Promise.all([endpoints.generation, endpoints.redirect, endpoints.analytics].map((base) => waitHealthy(base, proc)));
  return proc;
}

/** The README's `npm start` (three apps in one process) on its own data directory and ports. */
export async function startEmbedded(
  dataDir: string,
  extra: Record<string, string> = {},
): Promise<{ proc: RunningProcess; endpoints: Endpoints; env: Record<string, string> }> {
  // A port found free can be taken by another test process before the app binds it (two tiers run side by side):
  // EADDRINUSE then means other ports, not a failed test.
  for (let attempt = 1; ; attempt++) {
    const { endpoints, env: ports } = await allocateEndpoints();
    const env = {
      SHORTLINK_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      DB_DRIVER: 'sqlite',
      CACHE_DRIVER: 'memory',
      BUS_DRIVER: 'memory',
      OLAP_DRIVER: 'chdb',
      ...ports,
      ...extra,
    };
    try {
      return { proc: await launchEmbedded(endpoints, env), endpoints, env };
    } catch (error) {
      if (attempt >= 3 || !String((error as Error).message).includes('EADDRINUSE')) throw error;
    }
  }
}

/** Starts the embedded process again on the same data directory and ports. */
export async function restartEmbedded(proc: RunningProcess, endpoints: Endpoints, env: Record<string, string>): Promise<RunningProcess> {
  await proc.stop();
  return launchEmbedded(endpoints, env);
}

export const API_KEY = 'sl_e2e_test_key_0123456789abcdef';

/**
 * The promise of docs/design.md, "Edits reach every instance" (README, "When an edit reaches the redirect"): a redirect
 * request sent this long after the API answered an edit, a disable, a delete or a bulk line sees the change, on every
 * instance, while the change channel is up.
 */
export const EDIT_PROPAGATION_BOUND_MS = 100;

/** Resolves once the propagation bound has passed since `answeredAt` (when the client read the edit's answer): no sooner, no later. */
export const propagated = (answeredAt: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, answeredAt + EDIT_PROPAGATION_BOUND_MS - Date.now())));

/** The keys every server-profile process of one test run shares (required with DB_DRIVER=mysql). */
export const SERVER_SECRETS = serverSecrets();

export async function createLink(endpoints: Endpoints, body: object, apiKey = API_KEY) {
  const res = await fetch(`${endpoints.generation}/api/v1/links`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, unknown> };
}

export async function getStats(endpoints: Endpoints, code: string, apiKey = API_KEY) {
  const res = await fetch(`${endpoints.analytics}/api/v1/links/${code}/stats`, { headers: { 'x-api-key': apiKey } });
  return {
    status: res.status,
    body: (await res.json()) as { totals: { clicks: number; visitors: number }; series: Array<{ minute: string; clicks: number; visitors: number }> },
  };
}

/** A desktop browser: what a person clicking a link sends (analytics leaves bots out by default). */
export const BROWSER_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

export const redirectOf = (endpoints: Endpoints, code: string, headers: Record<string, string> = {}) =>
  fetch(`${endpoints.redirect}/${code}`, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA, ...headers } });

/** A new tenant of the installation, created by the operator through the admin API; its first key. */
export async function createTenant(endpoints: Endpoints, plan: 'free' | 'paid' = 'paid', operatorKey = API_KEY): Promise<{ tenantId: string; apiKey: string }> {
  const res = await fetch(`${endpoints.generation}/api/v1/admin/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': operatorKey },
    body: JSON.stringify({ name: `e2e-${randomUUID().slice(0, 8)}`, plan }),
  });
  if (res.status !== 201) throw new Error(`creating a tenant answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { tenant: { id: string }; apiKey: string };
  return { tenantId: body.tenant.id, apiKey: body.apiKey };
}

/** The apps of a real-stack suite, once its beforeAll has run. */
export interface RealStackApps {
  readonly endpoints: Endpoints;
  /** The settings every app got, without its ports and without `apps`' own (for one more instance). */
  readonly shared: Record<string, string>;
  /** What an app has printed so far (stdout and stderr). */
  output(app: 'generation' | 'analytics' | 'redirect'): string;
}

/**
 * The suites on the real stack share its meta database, and the fleet's jobs there take every suite's
 * due work: a domain verifier with the defaults (the machine's resolver, minutes of backoff) took the
 * domains journey's checks, failed them and pushed them past the journey's wait (CI); a dead-link
 * check without Web Risk took the safety journey's targets, which then went unscreened for an hour
 * (CI). Only the suites about them run these jobs (with DOMAIN_VERIFIER=on, or safetyEnv's checks).
 */
export const SHARED_META_JOBS_OFF = { DOMAIN_VERIFIER: 'off', LINK_CHECK_REQUESTS_PER_SECOND: '0' } as const;

/**
 * For a real-stack suite: generation, analytics and redirect as processes on the stack (MariaDB,
 * Redis Cluster, Kafka with topics and groups of this run; the rollups in a ClickHouse database of
 * this run, dropped after, or in chdb in a temporary directory), started in beforeAll with
 * `shared` + `apps` settings, stopped in afterAll. Generation first: it bootstraps the tenant.
 */
export function useRealStackApps(
  suite: string,
  o: { olap: 'clickhouse' | 'chdb'; shared?: Record<string, string>; apps?: Record<string, string> },
): () => RealStackApps {
  const procs: RunningProcess[] = [];
  const run = `e2e-${suite}.${Date.now().toString(36)}`;
  const database = `shortlink_e2e_${suite.replace(/\W/g, '_')}_${Date.now().toString(36)}`;
  let started: RealStackApps | null = null;
  let dataDir: string | null = null;
  beforeAll(async () => {
    const needs = ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', ...(o.olap === 'clickhouse' ? ['CLICKHOUSE_URL'] : [])];
    for (const name of needs) requireEnv(name);
    const allocated = await allocateEndpoints();
    const olap: Record<string, string> =
      o.olap === 'clickhouse' ? { CLICKHOUSE_DATABASE: database } : { SHORTLINK_DATA_DIR: (dataDir = mkdtempSync(join(tmpdir(), `shortlink-rs-${suite}-`))) };
    const shared: Record<string, string> = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: o.olap,
      ...olap,
      ...SERVER_SECRETS,
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      LOG_LEVEL: 'warn',
      KAFKA_CLICK_TOPIC: `shortlink.clicks.${run}`,
      KAFKA_CONSUMER_GROUP: `${run}.analytics`,
      KAFKA_EVENTS_TOPIC: `shortlink.events.${run}`,
      KAFKA_WEBHOOK_CONSUMER_GROUP: `${run}.webhooks`,
      CLICK_BUFFER_FLUSH_MS: '50',
      ...SHARED_META_JOBS_OFF,
      ...o.shared,
    };
    const { endpoints } = allocated;
    const byName = new Map<string, RunningProcess>();
    for (const [name, base] of [
      ['generation', endpoints.generation],
      ['analytics', endpoints.analytics],
      ['redirect', endpoints.redirect],
    ] as const) {
      const proc = startProcess(`apps/${name}/src/main.ts`, { ...shared, ...o.apps, ...allocated.env });
      procs.push(proc);
      byName.set(name, proc);
      await waitHealthy(base, proc);
    }
    started = { endpoints, shared, output: (app) => byName.get(app)?.output() ?? '' };
  }, 180_000);
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (o.olap === 'clickhouse') {
      const ch = createClient({
        url: process.env.CLICKHOUSE_URL,
        username: process.env.CLICKHOUSE_USER || 'default',
        password: process.env.CLICKHOUSE_PASSWORD || '',
      });
      await ch.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => undefined);
      await ch.close();
    }
  });
  return () => {
    if (!started) throw new Error(`the real-stack apps of ${suite} did not start`);
    return started;
  };
}

/**
 * The settings of an app on the real stack without Kafka and ClickHouse: MariaDB and Redis Cluster
 * (checked present), the server secrets, the bootstrap key; `extra` on top.
 */
export function realStackEnv(extra: Record<string, string> = {}): Record<string, string> {
  for (const name of ['MYSQL_SHARDS', 'MYSQL_META_URL', 'REDIS_CLUSTER_NODES']) requireEnv(name);
  return {
    DB_DRIVER: 'mysql',
    CACHE_DRIVER: 'redis',
    BUS_DRIVER: 'memory',
    OLAP_DRIVER: 'chdb',
    LOG_LEVEL: 'warn',
    ...SERVER_SECRETS,
    SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
    SHORTLINK_PUBLIC_BASE_URL: 'http://e2e.shortlink.test',
    ...SHARED_META_JOBS_OFF,
    ...extra,
  };
}

/**
 * For a real-stack suite about the generation API alone: `count` generation instances
 * (`realStackEnv`), started in beforeAll, stopped in afterAll; their base URLs once started.
 */
export function useRealStackGenerations(count: number, extra: Record<string, string> = {}): () => string[] {
  const apps: App[] = [];
  beforeAll(async () => {
    const env = realStackEnv(extra);
    for (let i = 0; i < count; i++) apps.push(await startApp('generation', env));
  }, 60_000 * count);
  afterAll(() => Promise.all(apps.map((a) => a.stop())));
  return () => apps.map((a) => a.base);
}
