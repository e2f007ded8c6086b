import type { IncomingMessage, ServerResponse } from 'http';
import { performance } from 'perf_hooks';
import { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode, KeyedWindowLimiter } from '@shortlink/core';
import { CachedLink, GlobalRateLimiter, RedirectPipeline, RESERVED_PATHS, ShortUrlIdentifier } from '@shortlink/links-domain';
import { ClientAddressResolver, problemFor, retryAfterFor } from '@shortlink/nest-platform';
import { ClickRecorder } from './click-recorder';
import { RedirectMetrics } from './redirect.metrics';

/** One path segment that can be a code: `/abc1234`, optionally with a query string. */
const CODE_PATH = /^\/([A-Za-z0-9][A-Za-z0-9_-]{2,63})(?:\?.*)?$/;

/**
 * `GET|HEAD /{code}` answered at the node:http level, in front of Fastify and Nest. Nest still
 * builds and wires everything; only these requests skip the framework's per-request hooks
 * (Nest's adapter adds four onRequest hooks and middie to every Fastify route), which measured
 * at well over half of the hot path's cost. Every other path (health, metrics, internal, an
 * unknown shape) goes on to Fastify. Errors leave as the same problem+json as everywhere else.
 */
export class RedirectHttpHandler {
  private readonly domains: Set<string>;

  constructor(
    private readonly pipeline: RedirectPipeline,
    private readonly recorder: ClickRecorder,
    private readonly metrics: RedirectMetrics,
    private readonly perIp: KeyedWindowLimiter,
    private readonly global: GlobalRateLimiter,
    /** X-Forwarded-For is believed only from TRUSTED_PROXIES. */
    private readonly addresses: ClientAddressResolver,
    private readonly config: AppConfig,
  ) {
    this.domains = new Set(config.links.domains);
  }

  /** Handles the request and returns true when it is a redirect; false leaves it to Fastify. */
  readonly tryHandle = (req: IncomingMessage, res: ServerResponse): boolean => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const match = CODE_PATH.exec(req.url ?? '');
    if (!match || RESERVED_PATHS.has(match[1].toLowerCase())) return false;
    const started = performance.now();
    // Known once the code is taken apart: a LINK_NOT_FOUND thrown after that is an orphan visit.
    let id: ShortUrlIdentifier | null = null;
    let ip = '';
    try {
      ip = this.addresses.of(req);
      const perIp = this.perIp.hit(ip);
      if (!perIp.allowed) return this.refuse(req, res, 'ip', perIp.retryAfterSeconds, started);
      const all = this.global.allow();
      if (!all.allowed) return this.refuse(req, res, 'global', all.retryAfterSeconds, started);
      const at: ShortUrlIdentifier = (id = { domain: this.domainOf(req), code: match[1] });
      const local = this.pipeline.resolveLocal(at);
      if (local) {
        this.redirect(req, res, at, local.link, ip, started);
      } else {
        const client = ip;
        this.pipeline.resolve(at).then(
          ({ link }) => this.redirect(req, res, at, link, client, started),
          (error) => this.notFound(req, res, error, at, client, started),
        );
      }
    } catch (error) {
      if (id) this.notFound(req, res, error, id, ip, started);
      else this.problem(req, res, error, started);
    }
    return true;
  };

  private redirect(req: IncomingMessage, res: ServerResponse, id: ShortUrlIdentifier, link: CachedLink, ip: string, started: number): void {
    if (req.method === 'GET') this.recorder.record(req, link, ip, null, id);
    this.metrics.status(link.redirectType);
    // Browsers must not cache a 302, or later clicks would never reach us.
    res.writeHead(link.redirectType, { location: link.targetUrl, 'cache-control': link.redirectType === 302 ? 'private, no-store' : 'public, max-age=300', 'content-length': '0' });
    res.end();
    this.metrics.duration.observe((performance.now() - started) / 1000);
  }

  /** A code that does not exist is an orphan visit for analytics (docs/analytics.md); then the usual problem. */
  private notFound(req: IncomingMessage, res: ServerResponse, error: unknown, id: ShortUrlIdentifier, ip: string, started: number): void {
    if (req.method === 'GET' && (error as DomainError)?.code === ErrorCode.LINK_NOT_FOUND) this.recorder.recordOrphan(req, id, ip);
    this.problem(req, res, error, started);
  }

  private refuse(req: IncomingMessage, res: ServerResponse, scope: 'ip' | 'global', retryAfterSeconds: number, started: number): true {
    this.metrics.rateLimited.inc({ scope });
    const message = scope === 'ip' ? 'too many redirects from this address' : 'the service is at its request limit';
    this.problem(req, res, new DomainError(ErrorCode.RATE_LIMITED, message, { retryAfterSeconds }), started);
    return true;
  }

  private problem(req: IncomingMessage, res: ServerResponse, error: unknown, started: number): void {
    const problem = problemFor(error, req.url);
    this.metrics.status(problem.status);
    const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
    const retryAfter = retryAfterFor(error, problem.status);
    if (retryAfter) headers['retry-after'] = retryAfter;
    const body = JSON.stringify(problem);
    headers['content-length'] = String(Buffer.byteLength(body));
    res.writeHead(problem.status, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
    this.metrics.duration.observe((performance.now() - started) / 1000);
  }

  /** The link's host: a known short domain, else the default domain (e.g. when reached by IP). */
  private domainOf(req: IncomingMessage): string {
    const host = req.headers.host;
    if (host) {
      const h = host.toLowerCase();
      if (this.domains.has(h)) return h;
    }
    return this.config.links.defaultDomain;
  }
}
