import { createServer, IncomingMessage, Server, ServerResponse } from 'http';
import type { Duplex } from 'stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { AdmissionControl } from './admission';
import { problem, ProblemDetails } from './problem-details';

export interface HttpServerLimits {
  /** A request's headers must be complete within this (slow-header clients are cut off). */
  readonly headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this. */
  readonly requestTimeoutMs: number;
}

/** Longer than a load balancer's idle timeout (AWS ALB 60 s), so the balancer closes first. */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** How often Node looks for connections past their header or request deadline. */
const CONNECTIONS_CHECK_INTERVAL_MS = 1000;

/** Handles a request before the framework, or returns false to pass it on. */
export type FrontHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * The HTTP server of every app (Fastify's `serverFactory`), with the timeouts of
 * docs/design.md ("Security model"). Fastify applies its own server options only to servers it
 * creates, so they are set here. `front` answers some requests before Fastify (the redirect's hot
 * route); it is read per request, so it may be bound after the app is built. Node's own request
 * timeout is one value for the whole server, so the body deadline is kept here per request:
 * `requestTimeoutMs`, or what `deadlineOf` gives a request (a batch upload may take minutes).
 * `admission` (admission.ts) admits each request before the front route and Fastify, or sheds it.
 */
export function httpServerFactory(
  limits: HttpServerLimits,
  front: { handle: FrontHandler | null } = { handle: null },
  deadlineOf: (req: IncomingMessage) => number | null = () => null,
  admission: AdmissionControl | null = null,
) {
  return (handler: (req: IncomingMessage, res: ServerResponse) => void): Server => {
    const server = createServer(
      { connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS, headersTimeout: limits.headersTimeoutMs, requestTimeout: 0 },
      (req, res) => {
        const streamed = deadlineOf(req);
        if (hasBody(req)) armBodyDeadline(req, res, streamed ?? limits.requestTimeoutMs);
        const serve = () => {
          if (!front.handle || !front.handle(req, res)) handler(req, res);
        };
        if (admission?.enabled) admission.admit(req, res, streamed !== null, serve);
        else serve();
      },
    );
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    server.headersTimeout = limits.headersTimeoutMs;
    server.requestTimeout = 0;
    return server;
  };
}

/** Headers arrive within the headers timeout (Node's); only a body can then trickle. */
const hasBody = (req: IncomingMessage): boolean =>
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined;

/** A body not complete within `ms` of its headers: 408 (when nothing was answered yet) and the connection closed. */
function armBodyDeadline(req: IncomingMessage, res: ServerResponse, ms: number): void {
  const timer = setTimeout(() => {
    if (req.complete) return;
    const socket = req.socket;
    if (!res.headersSent && socket.writable) socket.write(rawResponse(problem(408, 'REQUEST_TIMEOUT', 'the request did not arrive in time')));
    socket.destroy();
  }, ms);
  timer.unref();
  const clear = () => clearTimeout(timer);
  req.once('end', clear);
  res.once('close', clear);
}

/**
 * Errors raised below the framework (Node's HTTP parser and timeouts): problem+json like every
 * other error, nothing of the request echoed, and the connection closed.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const p =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? problem(431, 'HEADERS_TOO_LARGE', 'the request line and headers exceed the 16 KiB limit')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? problem(408, 'REQUEST_TIMEOUT', 'the request did not arrive in time')
        : problem(400, 'BAD_REQUEST', 'the request is not valid HTTP/1.1');
  if (socket.writable) socket.write(rawResponse(p));
  socket.destroy();
}

function rawResponse(p: ProblemDetails): string {
  const body = JSON.stringify(p);
  return `HTTP/1.1 ${p.status} ${p.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** Fastify's own rejections before routing (a malformed URL, an over-long path parameter). */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const p =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? problem(414, 'URI_TOO_LONG', 'a path segment is longer than this API accepts')
      : problem(400, 'BAD_REQUEST', 'the request URL is malformed');
  reply.code(p.status).header('content-type', 'application/problem+json').send(p);
}
