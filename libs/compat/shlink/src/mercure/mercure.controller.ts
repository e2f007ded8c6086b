import { BeforeApplicationShutdown, Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PassThrough } from 'stream';
import { MercureHub, MercureUpdate } from './mercure-hub';
import { MercureTokens, topicMatches } from './mercure-token';

/** A comment line this often keeps proxies and clients from taking a quiet stream for a dead one. */
export const HEARTBEAT_MS = 15_000;
const MAX_TOPICS = 20;

/** The subscriber's JWT, as the Mercure protocol lets it come: `Authorization: Bearer`, the `mercureAuthorization` cookie, or the `authorization` query parameter. */
export function tokenOf(req: Pick<FastifyRequest, 'headers' | 'query'>): string | null {
  const header = req.headers.authorization;
  if (typeof header === 'string' && /^Bearer\s+/i.test(header)) return header.replace(/^Bearer\s+/i, '').trim();
  const cookie = typeof req.headers.cookie === 'string' ? /(?:^|;\s*)mercureAuthorization=([^;]+)/.exec(req.headers.cookie) : null;
  if (cookie) return decodeURIComponent(cookie[1]);
  const query = (req.query as Record<string, unknown> | undefined)?.authorization;
  return typeof query === 'string' ? query : null;
}

/** The last event id a subscriber got, as the Mercure protocol lets it come: the `Last-Event-ID` header, else the `lastEventID` query parameter. */
export function lastEventIdOf(req: Pick<FastifyRequest, 'headers' | 'query'>): string | null {
  const header = req.headers['last-event-id'];
  if (typeof header === 'string' && header.length > 0) return header.slice(0, 200);
  const query = (req.query as Record<string, unknown> | undefined)?.lastEventID;
  return typeof query === 'string' && query.length > 0 ? query.slice(0, 200) : null;
}

const problem = (reply: FastifyReply, status: number, title: string, detail: string, code: string) =>
  reply
    .status(status)
    .header('content-type', 'application/problem+json')
    .header('cache-control', 'no-store')
    .send({ type: `https://shortlink.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`, title, status, detail, code });

/**
 * The Mercure hub's subscription (`GET /.well-known/mercure?topic=…`, Server-Sent Events; the
 * Mercure protocol's subscriber side) for Shlink's clients: the JWT `mercure-info` gave, the topics
 * asked for (each `topic` parameter); a missing or bad token is 401, a topic the token does not allow
 * is 403. Updates are `id: urn:uuid:…` and `data: <JSON>` (no event type), a `:` comment every 15 s.
 * A `Last-Event-ID` (header or `lastEventID` parameter) first gets the kept updates after it, and the
 * response its `Last-Event-ID` (`earliest` when that id is not kept here).
 */
@Controller('.well-known/mercure')
export class MercureController implements BeforeApplicationShutdown {
  constructor(
    @Inject(MercureHub) private readonly hub: MercureHub,
    @Inject(MercureTokens) private readonly tokens: MercureTokens,
  ) {}

  @Get()
  subscribe(@Req() req: FastifyRequest, @Res() reply: FastifyReply): void {
    const token = tokenOf(req);
    if (token === null)
      return void problem(reply, 401, 'Unauthorized', 'a subscription needs the JWT of mercure-info (Authorization: Bearer)', 'UNAUTHENTICATED');
    const grant = this.tokens.verify(token);
    if (grant === null)
      return void problem(reply, 401, 'Unauthorized', 'the JWT is not one of ours, or it expired: ask mercure-info for another', 'INVALID_TOKEN');
    const raw = (req.query as Record<string, unknown>).topic;
    const topics = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter(
      (t): t is string => typeof t === 'string' && t.length > 0 && t.length <= 500,
    );
    if (topics.length === 0 || topics.length > MAX_TOPICS)
      return void problem(reply, 400, 'Bad request', `name 1 to ${MAX_TOPICS} topics, each as a topic parameter`, 'VALIDATION_FAILED');
    const refused = topics.find((t) => !grant.subscribe.some((selector) => topicMatches(selector, t)));
    if (refused !== undefined) return void problem(reply, 403, 'Forbidden', `the JWT does not allow the topic ${refused.slice(0, 200)}`, 'INSUFFICIENT_SCOPE');
    if (!this.hub.available) return void problem(reply, 503, 'Service unavailable', 'this instance has no click stream', 'DEPENDENCY_UNAVAILABLE');

    const body = new PassThrough();
    let ended = false;
    const write = (text: string) => {
      if (!ended) body.write(text);
    };
    const send = (update: MercureUpdate) => write(`id: ${update.id}\ndata: ${JSON.stringify(update.data)}\n\n`);
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      if (close) close();
      body.end();
    };
    const close = this.hub.subscribe(grant, topics, send, end);
    if (close === false)
      return void problem(
        reply,
        429,
        'Too many requests',
        'too many open subscriptions of this tenant on this instance; close one first',
        'STREAM_LIMIT_REACHED',
      );
    reply.raw.on('close', end);
    const heartbeat = setInterval(() => write(':\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    write(':\n\n');
    // A reconnection (EventSource sends the last id it got) gets what it missed first, in this same turn: before any live update.
    const lastEventId = lastEventIdOf(req);
    if (lastEventId !== null) reply.header('last-event-id', this.hub.replay(grant, topics, lastEventId, send));
    reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache, no-transform')
      .header('x-accel-buffering', 'no')
      .send(body);
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.hub.stop();
  }
}
