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
