/**
 * Framework reference for the redirect benchmark: plain Fastify (no Nest, no logger, no hooks)
 * with one `GET /:code` route answering the same constant 302 as bare-server.ts. Shows how much of
 * the gap to the bare node:http ceiling is the framework itself. It loads the Fastify copy that
 * @nestjs/platform-fastify resolves (the one the apps really run, which may be a nested version),
 * not necessarily the top-level one. Started by run.ts (pinned with taskset); listens on
 * BENCH_BARE_PORT at 127.0.0.1.
 */
import { createRequire } from 'module';
import type FastifyFactory from 'fastify';

const fromNest = createRequire(require.resolve('@nestjs/platform-fastify'));
const Fastify = fromNest('fastify') as typeof FastifyFactory;
const version = (fromNest('fastify/package.json') as { version: string }).version;

const port = Number(process.env.BENCH_BARE_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('BENCH_BARE_PORT must be set');
const location = process.env.BENCH_BARE_LOCATION || 'https://example.com/bench-target';

const app = Fastify({ logger: false });
app.get('/:code', (_req, reply) => {
  reply.code(302).header('location', location).header('cache-control', 'private, no-store').send();
});
app.listen({ port, host: '127.0.0.1' }).then(() => process.stdout.write(`fastify ${version} on 127.0.0.1:${port}\n`));
const stop = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
