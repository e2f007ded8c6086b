/** Integration suites read the stack's addresses from the env that deploy/local/.run/stack.env exports. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: start the real stack (npm run stack:up) and source deploy/local/.run/stack.env`);
  }
  return value;
}

/** The Redis Cluster seed nodes of the stack (`REDIS_CLUSTER_NODES=host:port,…`). */
export function redisClusterNodes(): Array<{ host: string; port: number }> {
  return requireEnv('REDIS_CLUSTER_NODES')
    .split(',')
    .map((n) => ({ host: n.split(':')[0], port: Number(n.split(':')[1]) }));
}

/**
 * Scratch databases on the stack's MariaDB (named `shortlink_it_<name>_<run>`), created here and
 * dropped by `drop()`, so that a suite never touches the ring or the shards of the stack.
 */
export async function scratchMysqlDatabases(names: string[]): Promise<{ urls: string[]; drop(): Promise<void> }> {
  const { createConnection } = await import('mysql2/promise');
  const server = new URL(requireEnv('MYSQL_META_URL'));
  const admin = await createConnection({
    host: server.hostname,
    port: Number(server.port),
    user: decodeURIComponent(server.username),
    password: decodeURIComponent(server.password),
  });
  const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
  const dbs = names.map((n) => `shortlink_it_${n}_${run}`);
  for (const db of dbs) await admin.query(`CREATE DATABASE \`${db}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  return {
    urls: dbs.map((db) => `${server.protocol}//${server.username}:${server.password}@${server.host}/${db}`),
    drop: async () => {
      for (const db of dbs) await admin.query(`DROP DATABASE IF EXISTS \`${db}\``);
      await admin.end();
    },
  };
}

export { startTargetTestServer, type TargetTestServer } from './target-test-server';
export { startWebRiskTestServer, type WebRiskTestServer } from './web-risk-test-server';
export { DnsResponder } from './dns-responder';
