import { Controller, Get, Inject, NotFoundException, Req, Res } from '@nestjs/common';
import type { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode, KeyedWindowLimiter } from '@shortlink/core';
import {
  APP_CONFIG,
  AUTH_FAILURE_LIMITER,
  ClientAddressResolver,
  cookieOf,
  SESSION_COOKIE,
  SESSION_VERIFIER,
  type SessionVerifier,
} from '@shortlink/nest-platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'stream';

/** Where the relay answers: `/api/analytics/v1/<route>` is the analytics app's `/api/v1/<route>`. */
export const RELAY_PREFIX = '/api/analytics/v1/';

/**
 * The analytics app's read routes the console uses, and only those (docs/design.md, "The console's
 * analytics"): a link's stats, breakdowns and visits, the tenant's overview, top links and orphan
 * visits, the conversion funnel (per link, per dimension value, per bucket), the live click stream. Codes are the API's own `A-Za-z0-9_-`: nothing that could climb
 * out of the prefix (`..`, an encoded slash) matches.
 */
const RELAYED =
  /^(?:links\/[A-Za-z0-9_-]{1,64}\/(?:stats|visits|breakdown\/[a-z]{2,20})|stats\/(?:overview|top-links|orphans|conversions(?:\/series|\/breakdown\/[a-z]{2,20})?)|events\/stream)$/;

/** The analytics route a relayed path names (`links/abc/stats` → `/api/v1/links/abc/stats`), or null when it is not relayed. */
export function relayedRoute(pathname: string): string | null {
  if (!pathname.startsWith(RELAY_PREFIX)) return null;
  const route = pathname.slice(RELAY_PREFIX.length);
  return RELAYED.test(route) ? `/api/v1/${route}` : null;
}

/** What the analytics app's answer keeps on its way to the browser (the rest is hop-by-hop or the relay's own). */
export const RELAYED_RESPONSE_HEADERS = [
  'content-type',
  'content-disposition',
  'cache-control',
  'link',
  'retry-after',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-accel-buffering',
] as const;

/** A query (JSON or CSV) gets this long; the live stream stays open as long as the browser keeps it. */
const QUERY_TIMEOUT_MS = 30_000;

/**
 * The console's way to the analytics query API (README, "The console"; docs/design.md, "The
 * console's analytics"): `GET /api/analytics/v1/…` on the generation app, relayed to the analytics
 * app (SHORTLINK_ANALYTICS_API_URL) with the person's session cookie and nothing else, the answer
 * (JSON, CSV, problem+json or the event stream) streamed back as it comes. Same origin for the
 * browser, so the console's CSP (`connect-src 'self'`) and the session cookie (`Path=/api`,
 * SameSite=Lax) stay as they are, wherever the analytics app runs. Read-only: GET of the routes in
 * RELAYED; the session is checked here first (a bad one never reaches the analytics app, whose
 * failed-check window would count the relay's address), and the analytics app checks it again
 * and counts the tenant's plan once.
 */
@Controller('api/analytics/v1')
export class ConsoleAnalyticsRelay {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SESSION_VERIFIER) private readonly sessions: SessionVerifier,
    @Inject(AUTH_FAILURE_LIMITER) private readonly failures: KeyedWindowLimiter,
    @Inject(ClientAddressResolver) private readonly addresses: ClientAddressResolver,
  ) {}

  @Get('*')
  async relay(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const url = new URL(req.url, 'http://relay');
    const route = relayedRoute(url.pathname);
    if (route === null) throw new NotFoundException();
    const token = cookieOf(req, SESSION_COOKIE);
    try {
      if (token === undefined)
        throw new DomainError(ErrorCode.UNAUTHENTICATED, 'sign in: the analytics relay takes a session (a program calls the analytics app with its key)');
      const session = await this.sessions.verify(token);
      if (!session.principal.scopes.includes('analytics:read'))
        throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'this role lacks the analytics:read scope', { scope: 'analytics:read' });
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.UNAUTHENTICATED) {
        const counted = this.failures.hit(this.addresses.of(req.raw));
        if (!counted.allowed)
          throw new DomainError(ErrorCode.RATE_LIMITED, 'too many failed checks from this address; retry later', {
            retryAfterSeconds: counted.retryAfterSeconds,
          });
      }
      throw error;
    }

    const stream = route === '/api/v1/events/stream';
    const aborted = new AbortController();
    reply.raw.on('close', () => aborted.abort());
    const headers: Record<string, string> = { cookie: `${SESSION_COOKIE}=${token}`, accept: String(req.headers.accept ?? '*/*') };
    const lastEventId = req.headers['last-event-id'];
    if (typeof lastEventId === 'string') headers['last-event-id'] = lastEventId;
    let upstream: Response;
    try {
      upstream = await fetch(`${this.config.people.analyticsApiUrl}${route}${url.search}`, {
        headers,
        signal: stream ? aborted.signal : AbortSignal.any([aborted.signal, AbortSignal.timeout(QUERY_TIMEOUT_MS)]),
        redirect: 'manual',
      });
    } catch (error) {
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the analytics app did not answer; retry shortly', { retryAfterSeconds: 1 }, { cause: error });
    }
    reply.code(upstream.status);
    for (const name of RELAYED_RESPONSE_HEADERS) {
      const value = upstream.headers.get(name);
      if (value !== null) reply.header(name, value);
    }
    reply.header('x-content-type-options', 'nosniff');
    if (!upstream.body) {
      reply.send();
      return;
    }
    // A browser gone (or a timeout) ends the copy; the error is that ending, not a fault.
    const body = Readable.fromWeb(upstream.body as Parameters<typeof Readable.fromWeb>[0]).on('error', () => undefined);
    reply.send(body);
  }
}
