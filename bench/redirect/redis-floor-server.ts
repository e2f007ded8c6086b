/**
 * The floor of a Redis hit, for the bench's "Redis floor" row: node:http, one GET through the
 * redirect's own Redis client (RedisClusterStore: cork batching, 500 ms deadline), JSON.parse, 302.
 * No pipeline, L1, metrics, click capture or framework. What the Redis-hit case costs above this is
 * ours; what this costs above the bare server is the round trip to Redis on this machine.
 */
import { createServer } from 'http';
import { RedisClusterStore } from '@shortlink/cache';
import { linkCacheKey } from '@shortlink/links-domain';

const port = Number(process.env.BENCH_FLOOR_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('BENCH_FLOOR_PORT must be set');
const domain = process.env.SHORTLINK_DEFAULT_DOMAIN ?? '';
const nodes = (process.env.REDIS_CLUSTER_NODES ?? '')
  .split(',')
  .filter(Boolean)
  .map((hostPort) => {
    const at = hostPort.lastIndexOf(':');
    return { host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)) };
  });
if (!domain || !nodes.length) throw new Error('SHORTLINK_DEFAULT_DOMAIN and REDIS_CLUSTER_NODES must be set');

const store = new RedisClusterStore({ nodes });
const server = createServer((req, res) => {
  store.get(linkCacheKey({ domain, code: (req.url ?? '/').slice(1) })).then(
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
