/**
 * The floor of a Redis hit, for the bench's "Redis floor" row: node:http, one GET through the
 * redirect's own Redis client (RedisClusterStore: cork batching, 500 ms deadline), JSON.parse, 302.
 * No pipeline, L1, metrics, click capture or framework. What the Redis-hit case costs above this is
 * ours; what this costs above the bare server is the round trip to Redis on this machine.
 */
import { createServer } from 'http';
import { loadConfig } from '@shortlink/config';
import { RedisClusterStore } from '@shortlink/cache';
import { CacheKeys } from '@shortlink/read-path';

const port = Number(process.env.BENCH_FLOOR_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('BENCH_FLOOR_PORT must be set');
// The redirect's own config schema, so the nodes, batching and timeout are read as the redirect reads them.
const config = loadConfig({ ...process.env, CACHE_DRIVER: 'redis' });
if (config.cache.driver !== 'redis') throw new Error('unreachable: CACHE_DRIVER is redis');
const { nodes, writeBatching, commandTimeoutMs } = config.cache;
const domain = config.links.defaultDomain;

// Built as Infrastructure.cacheStore() builds it, without loading every other adapter into this process.
const store = new RedisClusterStore({ nodes, writeBatching, commandTimeoutMs });
const server = createServer((req, res) => {
  store.get(CacheKeys.link({ domain, code: (req.url ?? '/').slice(1) })).then(
    (value) => {
      if (!value) {
        res.writeHead(404, { 'content-length': '0' });
        res.end();
        return;
      }
      const { targetUrl } = JSON.parse(value) as { targetUrl: string };
      res.writeHead(302, { location: targetUrl, 'cache-control': 'private, no-store', 'content-length': '0' });
      res.end();
    },
    () => {
      res.writeHead(503, { 'content-length': '0' });
      res.end();
    },
  );
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`redis floor server on 127.0.0.1:${port}\n`));
const stop = () => server.close(() => void store.close().finally(() => process.exit(0)));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
