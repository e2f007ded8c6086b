import { All, Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'stream';
import type { AppConfig } from '@shortlink/config';
import type { HealthProbe } from '@shortlink/core';
import { APP_CONFIG, HEALTH_PROBES } from '@shortlink/nest-platform';

/**
 * The Shlink release whose API ours answers (the generation app's SHLINK_VERSION, which the Shlink
 * e2e journey reads on both hosts): Shlink's clients turn screens on by it.
 */
export const SHLINK_API_VERSION = '5.0.0';

/** The request headers a Shlink call carries to the generation app (its key, its body's type, what it accepts). */
export const RELAYED_REQUEST_HEADERS = ['x-api-key', 'authorization', 'content-type', 'accept', 'accept-language', 'if-match', 'last-event-id'] as const;
/** What the generation app's answer keeps on its way back (the rest is hop-by-hop, or the relay's own). */
export const RELAYED_RESPONSE_HEADERS = [
  'content-type',
  'cache-control',
  'location',
  'etag',
  'retry-after',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'www-authenticate',
  'x-accel-buffering',
  'last-event-id',
] as const;

const TIMEOUT_MS = 30_000;
const PROBE_MS = 2_000;

/**
 * Shlink's REST API on the short domains (docs/design.md, "Compatible APIs"): Shlink serves its API
 * and its short URLs on one host, and its clients check each domain's `https://<domain>/rest/v3/health`.
 * Health is answered here, from this app's own probes; every other `/rest/v3/…` is relayed to the
 * generation app (SHORTLINK_GENERATION_URL) as it came (key, body, query), its answer streamed back:
 * the redirect app holds none of the generation app's services, so one implementation answers both hosts.
 */
@Controller()
export class ShlinkRelay {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(HEALTH_PROBES) private readonly probes: () => readonly HealthProbe[],
  ) {}

  @Get('rest/v3/health')
  async health(@Res() reply: FastifyReply): Promise<void> {
    const results = await Promise.all(this.probes().map((p) => (p.critical === false ? true : settled(p.check(), PROBE_MS))));
    const pass = results.every(Boolean);
    reply
      .status(pass ? 200 : 503)
      .header('content-type', 'application/health+json')
      .header('cache-control', 'no-store')
      .send({ status: pass ? 'pass' : 'fail', version: SHLINK_API_VERSION, links: { about: '/docs/shlink/openapi.json', project: 'https://shlink.io' } });
  }

  @All('rest/v3/*')
  relay(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.forward(req, reply, false);
  }

  /** Shlink's Mercure hub (the generation app's), whose URL `mercure-info` gives on the host it was asked on: a stream, open while the client keeps it. */
  @Get('.well-known/mercure')
  hub(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.forward(req, reply, true);
  }

  private async forward(req: FastifyRequest, reply: FastifyReply, stream: boolean): Promise<void> {
    // The host and scheme the client used: `mercure-info` names the hub on it.
    const headers: Record<string, string> = { 'x-forwarded-host': String(req.headers.host ?? ''), 'x-forwarded-proto': req.protocol };
    for (const name of RELAYED_REQUEST_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const aborted = new AbortController();
    reply.raw.on('close', () => aborted.abort());
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.body !== undefined && req.body !== null;
    let upstream: Response;
    try {
      upstream = await fetch(`${this.config.http.generationUrl}${req.url}`, {
        method: req.method,
        headers,
        body: hasBody ? (typeof req.body === 'string' ? req.body : JSON.stringify(req.body)) : undefined,
        redirect: 'manual',
        signal: stream ? aborted.signal : AbortSignal.any([aborted.signal, AbortSignal.timeout(TIMEOUT_MS)]),
      });
    } catch {
      reply.status(503).header('content-type', 'application/problem+json').header('retry-after', '1').send({
        type: 'https://shlink.io/api/error/service-unavailable',
        title: 'Service unavailable',
        detail: 'The API did not answer; retry shortly',
        status: 503,
        code: 'DEPENDENCY_UNAVAILABLE',
      });
      return;
    }
    reply.status(upstream.status);
    for (const name of RELAYED_RESPONSE_HEADERS) {
      const value = upstream.headers.get(name);
      if (value !== null) reply.header(name, value);
    }
    reply.header('x-content-type-options', 'nosniff');
    if (!upstream.body) {
      reply.send();
      return;
    }
    reply.send(Readable.fromWeb(upstream.body as Parameters<typeof Readable.fromWeb>[0]).on('error', () => undefined));
  }
}

function settled(check: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([
    check.then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
  ]);
}
