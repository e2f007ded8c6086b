/**
 * The practical ceiling for the redirect benchmark: a bare `node:http` server that answers every
 * request with the same 302 and Location header, no routing, no framework. Started by run.ts
 * (pinned with taskset); listens on BENCH_BARE_PORT at 127.0.0.1.
 */
import { createServer } from 'http';

const port = Number(process.env.BENCH_BARE_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('BENCH_BARE_PORT must be set');
const location = process.env.BENCH_BARE_LOCATION || 'https://example.com/bench-target';

const server = createServer((_req, res) => {
  res.writeHead(302, { location, 'cache-control': 'private, no-store', 'content-length': '0' });
  res.end();
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`bare server on 127.0.0.1:${port}\n`));
const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
