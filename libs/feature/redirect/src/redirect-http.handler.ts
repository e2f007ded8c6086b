import { randomUUID } from 'crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode } from '@shortlink/core';
import { GlobalRateLimiter, PerIpRateLimiter, RedirectPipeline } from '@shortlink/links-domain';
import { ClickBuffer } from '@shortlink/clicks-domain';
import { problemFor } from '@shortlink/nest-platform';
import { RedirectMetrics } from './redirect.metrics';

/**
 * `GET /:code` as a plain Fastify route: Nest wires it, but requests skip Nest's guard /
 * interceptor / filter pipeline, which cost half the throughput of the hot path (issue 3).
 * Errors still leave as the same problem+json as everywhere else.
 */
export class RedirectHttpHandler {
  private readonly domains: Set<string>;

  constructor(
    private readonly pipeline: RedirectPipeline,
    private readonly clicks: ClickBuffer,
    private readonly metrics: RedirectMetrics,
    private readonly perIp: PerIpRateLimiter,
    private readonly global: GlobalRateLimiter,
    private readonly config: AppConfig,
  ) {
    this.domains = new Set(config.links.domains);
  }

  readonly handle = async (req: FastifyRequest<{ Params: { code: string } }>, reply: FastifyReply): Promise<void> => {
    const stop = this.metrics.duration.startTimer();
    try {
      const ip = this.perIp.allow(req.ip);
      if (!ip.allowed) return this.refuse(reply, req, 'ip', ip.retryAfterSeconds);
      const all = this.global.allow();
      if (!all.allowed) return this.refuse(reply, req, 'global', all.retryAfterSeconds);

      const code = req.params.code;
      const domain = this.domainOf(req);
      const { link } = await this.pipeline.resolve({ domain, code });
      if (req.method !== 'HEAD') {
        this.clicks.push({
          eventId: randomUUID(),
          occurredAt: Date.now(),
          linkId: link.id,
          tenantId: link.tenantId,
          domain,
          code,
          ip: req.ip,
          userAgent: req.headers['user-agent'] ?? '',
          referer: req.headers.referer ?? null,
        });
      }
      this.metrics.status(link.redirectType);
      // Browsers must not cache a 302, or later clicks would never reach us.
      reply.code(link.redirectType).header('location', link.targetUrl).header('cache-control', link.redirectType === 302 ? 'private, no-store' : 'public, max-age=300').send();
    } catch (error) {
      this.problem(reply, req, error);
    } finally {
      stop();
    }
  };

  private refuse(reply: FastifyReply, req: FastifyRequest, scope: 'ip' | 'global', retryAfterSeconds: number): void {
    this.metrics.rateLimited.inc({ scope });
    this.problem(reply, req, new DomainError(ErrorCode.RATE_LIMITED, scope === 'ip' ? 'too many redirects from this address' : 'the service is at its request limit', { retryAfterSeconds }));
  }

  private problem(reply: FastifyReply, req: FastifyRequest, error: unknown): void {
    const problem = problemFor(error, req.url);
    this.metrics.status(problem.status);
    if (problem.status === 429 || problem.status === 503) {
      const retry = (error as DomainError)?.details?.retryAfterSeconds;
      reply.header('retry-after', String(typeof retry === 'number' ? retry : 1));
    }
    reply.code(problem.status).header('content-type', 'application/problem+json').send(problem);
  }

  /** The link's host: a known short domain, else the default domain (e.g. when reached by IP). */
  private domainOf(req: FastifyRequest): string {
    const host = req.headers.host;
    if (host) {
      const h = host.toLowerCase();
      if (this.domains.has(h)) return h;
    }
    return this.config.links.defaultDomain;
  }
}
