import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'crypto';
import { AppConfig } from '@shortlink/config';
import { DomainError } from '@shortlink/core';
import { RedirectResolver } from '@shortlink/links-domain';
import { ClickBuffer } from '@shortlink/clicks-domain';
import { APP_CONFIG, problemFor } from '@shortlink/nest-platform';
import { RedirectMetrics } from './redirect.metrics';

@Controller()
export class RedirectController {
  private readonly domains: Set<string>;

  constructor(
    @Inject(RedirectResolver) private readonly resolver: RedirectResolver,
    @Inject(ClickBuffer) private readonly clicks: ClickBuffer,
    @Inject(RedirectMetrics) private readonly metrics: RedirectMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.domains = new Set(config.links.domains);
  }

  /** Fastify answers HEAD with this GET handler: same status and Location, not counted as a click. */
  @Get(':code')
  redirect(@Param('code') code: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    return this.handle(code, req, reply, req.method !== 'HEAD');
  }

  private async handle(code: string, req: FastifyRequest, reply: FastifyReply, countClick: boolean): Promise<void> {
    const stop = this.metrics.duration.startTimer();
    const domain = this.domainOf(req);
    try {
      const { link, source } = await this.resolver.resolve({ domain, code });
      this.metrics.lookups.inc({ source });
      if (source === 'db') this.metrics.dbQueries.inc();
      if (countClick) {
        this.clicks.push({
          eventId: randomUUID(),
          occurredAt: Date.now(),
          linkId: link.id,
          tenantId: link.tenantId,
          domain,
          code,
          ip: req.ip,
          userAgent: String(req.headers['user-agent'] ?? ''),
          referer: typeof req.headers.referer === 'string' ? req.headers.referer : null,
        });
      }
      this.metrics.requests.inc({ status: String(link.redirectType) });
      // Browsers must not cache a 302, or later clicks would never reach us.
      reply.status(link.redirectType).header('location', link.targetUrl).header('cache-control', link.redirectType === 302 ? 'private, no-store' : 'public, max-age=300').send();
    } catch (error) {
      const source = (error as DomainError)?.details?.source;
      if (typeof source === 'string') {
        this.metrics.lookups.inc({ source: source === 'rejected' ? 'rejected' : source });
        if (source === 'db_miss') this.metrics.dbQueries.inc();
      }
      const problem = problemFor(error, req.url);
      this.metrics.requests.inc({ status: String(problem.status) });
      if (problem.status === 503) reply.header('retry-after', '1');
      reply.status(problem.status).header('content-type', 'application/problem+json').send(problem);
    } finally {
      stop();
    }
  }

  /** The link's host: a known short domain, else the default domain (e.g. when reached by IP). */
  private domainOf(req: FastifyRequest): string {
    const host = (req.headers.host ?? '').toLowerCase();
    return this.domains.has(host) ? host : this.config.links.defaultDomain;
  }
}
