import Database from 'better-sqlite3';
import { createHash, randomBytes, randomUUID } from 'crypto';
import { createConnection } from 'mysql2/promise';
import { allocateEndpoints, Endpoints, RunningProcess, serverSecrets, startProcess, waitHealthy, withoutAppSettings } from '@shortlink/harness';

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
export async function startEmbedded(dataDir: string, extra: Record<string, string> = {}): Promise<{ proc: RunningProcess; endpoints: Endpoints; env: Record<string, string> }> {
  const { endpoints, env: ports } = await allocateEndpoints();
  const env = { SHORTLINK_DATA_DIR: dataDir, LOG_LEVEL: 'warn', DB_DRIVER: 'sqlite', CACHE_DRIVER: 'memory', BUS_DRIVER: 'memory', OLAP_DRIVER: 'chdb', ...ports, ...extra };
  return { proc: await launchEmbedded(endpoints, env), endpoints, env };
}

/** Starts the embedded process again on the same data directory and ports. */
export async function restartEmbedded(proc: RunningProcess, endpoints: Endpoints, env: Record<string, string>): Promise<RunningProcess> {
  await proc.stop();
  return launchEmbedded(endpoints, env);
}

export const API_KEY = 'sl_e2e_test_key_0123456789abcdef';

/** The keys every server-profile process of one test run shares (required with DB_DRIVER=mysql). */
export const SERVER_SECRETS = serverSecrets();

export async function createLink(endpoints: Endpoints, body: object, apiKey = API_KEY) {
  const res = await fetch(`${endpoints.generation}/api/v1/links`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, unknown> };
}

export async function getStats(endpoints: Endpoints, code: string, apiKey = API_KEY) {
  const res = await fetch(`${endpoints.analytics}/api/v1/links/${code}/stats`, { headers: { 'x-api-key': apiKey } });
  return { status: res.status, body: (await res.json()) as { totals: { clicks: number; visitors: number }; series: Array<{ minute: string; clicks: number; visitors: number }> } };
}

export const redirectOf = (endpoints: Endpoints, code: string, headers: Record<string, string> = {}) => fetch(`${endpoints.redirect}/${code}`, { redirect: 'manual', headers });

/**
 * An operator's ban of a link, written where the moderation would write it (the admin API is
 * another issue): the link's row on its shard, whichever that is. Only for a link no redirect has
 * read yet, since no cache is told.
 */
export async function banLink(shards: { sqliteFiles: string[] } | { mysqlUrls: string[] }, domain: string, code: string): Promise<void> {
  let changed = 0;
  if ('sqliteFiles' in shards) {
    for (const file of shards.sqliteFiles) {
      const db = new Database(file);
      try {
        db.pragma('busy_timeout = 5000');
        changed += db.prepare('UPDATE links SET moderation = 2, version = version + 1 WHERE domain = ? AND code = ?').run(domain, code).changes;
      } finally {
        db.close();
      }
    }
  } else {
    for (const url of shards.mysqlUrls) {
      const conn = await createConnection(url);
      try {
        const [result] = await conn.query('UPDATE links SET moderation = 2, version = version + 1 WHERE domain = ? AND code = ?', [domain, code]);
        changed += (result as { affectedRows: number }).affectedRows;
      } finally {
        await conn.end();
      }
    }
  }
  if (changed !== 1) throw new Error(`banning ${domain}/${code} changed ${changed} rows`);
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
