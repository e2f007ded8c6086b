import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditContext } from '@shortlink/audit-domain';
import type { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode } from '@shortlink/core';
import { LINK_COMMANDS, type Link, type LinkCommands, LinkService, type ShortUrlIdentifier } from '@shortlink/links-domain';
import { AcceptsFormBody, APP_CONFIG, CompatAccess, problemFor, retryAfterFor } from '@shortlink/nest-platform';
import type { Principal, Scope } from '@shortlink/tenants-domain';
import { KeyDirectory } from './key-directory';
import { LinkClicks } from './link-clicks';
import { callbackOf, formatOf, render, type YourlsAnswer, yourlsDate } from './yourls-output';
import { YourlsSignatures } from './yourls-signatures';

export const YOURLS_KEYS = Symbol('YOURLS_KEYS');
export const YOURLS_CLICKS = Symbol('YOURLS_CLICKS');
export const YOURLS_SIGNATURES = Symbol('YOURLS_SIGNATURES');

/** The actions of `/yourls-api.php` and the scope each needs. */
export const YOURLS_ACTIONS: Readonly<Record<string, Scope>> = {
  shorturl: 'links:write',
  expand: 'links:read',
  'url-stats': 'analytics:read',
  stats: 'analytics:read',
  'db-stats': 'analytics:read',
};
/** The links `stats` and `db-stats` look at: the tenant's newest, at most this many. */
export const STATS_WINDOW = 1000;
const STATS_FILTERS = ['top', 'bottom', 'rand', 'last'];
const NEED_FORMAT = 'Need either XML or JSON format for stats';

type Params = Record<string, string | undefined>;

/** A refusal in YOURLS' words: HTTP status, and the body's fields besides `message`. */
class YourlsRefusal extends Error {
  constructor(
    readonly httpStatus: number,
    message: string,
    readonly fields: Record<string, unknown> = {},
    readonly retryAfter?: string,
  ) {
    super(message);
  }
}

/**
 * YOURLS' API (`/yourls-api.php`, GET or POST, query or form): `shorturl`, `expand`, `url-stats`,
 * `stats`, `db-stats` over the caller's links, in `format=json|xml|simple|jsonp` (docs/design.md,
 * "Compatibility APIs"). Credentials: a key's `signature` token, a time-limited signature
 * (`timestamp`, `signature`, `username`, optional `hash`), or `username` + `password` (the API
 * key). Scoped, rate-limited and audited as our API is; answers and messages are YOURLS'.
 */
@Controller()
export class YourlsController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LinkService) private readonly links: LinkService,
    @Inject(LINK_COMMANDS) private readonly commands: LinkCommands<AuditContext>,
    @Inject(CompatAccess) private readonly access: CompatAccess,
    @Inject(YOURLS_KEYS) private readonly keys: KeyDirectory,
    @Inject(YOURLS_SIGNATURES) private readonly signatures: YourlsSignatures,
    @Inject(YOURLS_CLICKS) private readonly clicks: LinkClicks,
  ) {}

  @Get('yourls-api.php')
  get(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.handle(request, reply);
  }

  @Post('yourls-api.php')
  @AcceptsFormBody()
  post(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.handle(request, reply);
  }

  private async handle(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // $_REQUEST: the query, then the form body over it (PHP's request_order "GP").
    const params: Params = { ...flat(request.query), ...flat(request.body) };
    const format = formatOf(params.format);
    const callback = format === 'jsonp' ? callbackOf(params.callback ?? params.jsonp) : null;
    let answer: YourlsAnswer;
    if (format === 'jsonp' && callback === null) {
      answer = failure(400, 'Invalid or missing "callback" parameter');
      return void this.send(reply, 'json', answer, null);
    }
    try {
      answer = await this.run(request, reply, params);
    } catch (error) {
      answer = this.refusal(error, reply);
    }
    this.send(reply, format, answer, callback);
  }

  private send(reply: FastifyReply, format: ReturnType<typeof formatOf>, answer: YourlsAnswer, callback: string | null): void {
    const { contentType, text } = render(format, answer, callback);
    reply.status(answer.httpStatus).header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').type(contentType).send(text);
  }

  private async run(request: FastifyRequest, reply: FastifyReply, params: Params): Promise<YourlsAnswer> {
    const principal = await this.authenticate(request, params);
    const action = params.action ?? '';
    const scope = YOURLS_ACTIONS[action];
    if (!scope) return failure(400, 'Unknown or missing "action" parameter');
    const audit = await this.access.admit(request, reply, principal, scope);
    switch (action) {
      case 'shorturl':
        return this.shorten(principal, audit, params);
      case 'expand':
        return this.expand(principal, params);
      case 'url-stats':
        return this.urlStats(principal, params);
      case 'stats':
        return this.stats(principal, params);
      default:
        return this.dbStats(principal);
    }
  }

  /** The key of the request's credentials; YOURLS' 403 "Please log in" without any, "Invalid username or password" for wrong ones. */
  private async authenticate(request: FastifyRequest, params: Params): Promise<Principal> {
    const { signature, timestamp, username, password } = params;
    if (signature && timestamp) {
      const user = this.signatures.verifyTimed({ username, timestamp, signature, hash: params.hash }, Date.now());
      if (user === 'expired' || user === 'unknown-hash' || user === null) {
        this.access.countFailure(request);
        throw new YourlsRefusal(
          403,
          user === 'expired'
            ? 'Expired signature: the timestamp is more than 15 minutes away'
            : user === 'unknown-hash'
              ? 'Unknown hash function'
              : username
                ? 'Invalid username or password'
                : 'A time-limited signature needs the username it was made for',
        );
      }
      return this.access.checked(request, () => this.keys.principalOf(user));
    }
    if (signature) {
      const user = this.signatures.verify(signature);
      if (!user) {
        this.access.countFailure(request);
        throw new YourlsRefusal(403, 'Invalid username or password');
      }
      return this.access.checked(request, () => this.keys.principalOf(user));
    }
    if (username && password) {
      const principal = await this.access.keyPrincipal(request, password);
      // The username names the key whose API key is the password: its id, or its YOURLS username.
      if (username !== principal.keyId && username !== YourlsSignatures.usernameOf(principal)) {
        this.access.countFailure(request);
        throw new YourlsRefusal(403, 'Invalid username or password');
      }
      return principal;
    }
    throw new YourlsRefusal(403, 'Please log in');
  }

  private async shorten(principal: Principal, audit: AuditContext, params: Params): Promise<YourlsAnswer> {
    const url = (params.url ?? '').trim();
    if (!url || url === 'http://' || url === 'https://')
      return {
        httpStatus: 400,
        body: { status: 'fail', code: 'error:nourl', message: 'Missing or malformed URL', errorCode: '400', statusCode: 400 },
        simple: '',
      };
    const keyword = params.keyword?.trim() || undefined;
    if (this.isShortUrl(url))
      return { httpStatus: 400, body: { status: 'fail', code: 'error:noloop', message: 'URL is a short URL', errorCode: '400', statusCode: 400 }, simple: '' };
    if (!keyword) {
      // YOURLS_UNIQUE_URLS (its default): a URL already shortened answers its short URL, as a failure.
      const existing = await this.findByUrl(principal.tenantId, url);
      if (existing) {
        const { clicks } = await this.clicks.total(existing);
        return {
          httpStatus: 200,
          body: {
            status: 'fail',
            code: 'error:url',
            url: { ...this.urlView(existing), clicks },
            message: `${url} already exists in database`,
            title: this.titleOf(existing),
            shorturl: this.shortUrl(existing),
            statusCode: 200,
          },
          simple: this.shortUrl(existing),
        };
      }
    }
    let link: Link;
    try {
      link = await this.commands.create(audit, { tenantId: principal.tenantId, url, alias: keyword, title: params.title?.trim() || undefined });
    } catch (error) {
      if (error instanceof DomainError) {
        if (error.code === ErrorCode.ALIAS_TAKEN || error.code === ErrorCode.ALIAS_RETIRED || error.code === ErrorCode.ALIAS_RESERVED)
          return {
            httpStatus: 200,
            body: { status: 'fail', code: 'error:keyword', message: `Short URL ${keyword} already exists in database or is reserved`, statusCode: 200 },
            simple: '',
          };
        if (error.code === ErrorCode.INVALID_ALIAS)
          return { httpStatus: 400, body: { status: 'fail', code: 'error:keyword', message: error.message, errorCode: '400', statusCode: 400 }, simple: '' };
        if (error.code === ErrorCode.INVALID_URL)
          return {
            httpStatus: 400,
            body: { status: 'fail', code: 'error:nourl', message: 'Missing or malformed URL', errorCode: '400', statusCode: 400 },
            simple: '',
          };
        if (error.code === ErrorCode.URL_NOT_ALLOWED || error.code === ErrorCode.DOMAIN_BLOCKED)
          return { httpStatus: 400, body: { status: 'fail', code: 'error:blocked', message: error.message, errorCode: '400', statusCode: 400 }, simple: '' };
      }
      throw error;
    }
    const shorturl = this.shortUrl(link);
    return {
      httpStatus: 200,
      body: {
        url: this.urlView(link),
        status: 'success',
        message: `${url} added to database`,
        title: this.titleOf(link),
        shorturl,
        statusCode: 200,
      },
      simple: shorturl,
    };
  }

  private async expand(principal: Principal, params: Params): Promise<YourlsAnswer> {
    const link = await this.linkOf(principal, params.shorturl);
    if (!link) return notFound(params.shorturl);
    return {
      httpStatus: 200,
      body: { keyword: link.code, shorturl: this.shortUrl(link), longurl: link.targetUrl, title: this.titleOf(link), message: 'success', statusCode: 200 },
      simple: link.targetUrl,
    };
  }

  private async urlStats(principal: Principal, params: Params): Promise<YourlsAnswer> {
    const link = await this.linkOf(principal, params.shorturl);
    if (!link) return notFound(params.shorturl);
    const { clicks, note } = await this.clicks.total(link);
    return {
      httpStatus: 200,
      body: { statusCode: 200, message: 'success', link: this.statsView(link, clicks), ...(note ? { note } : {}) },
      simple: NEED_FORMAT,
    };
  }

  private async stats(principal: Principal, params: Params): Promise<YourlsAnswer> {
    const filter = params.filter === 'random' ? 'rand' : (params.filter ?? 'top');
    if (!STATS_FILTERS.includes(filter)) return failure(400, `Unknown filter "${filter}": top, bottom, rand or last`);
    const limit = boundedInt(params.limit, 10, 1, 1000);
    const start = boundedInt(params.start, 0, 0, STATS_WINDOW);
    if (limit === null || start === null) return failure(400, 'limit (1-1000) and start (0-1000) must be integers');
    const [links, counts] = await Promise.all([this.newest(principal.tenantId, STATS_WINDOW), this.clicks.byLink(principal.tenantId, STATS_WINDOW)]);
    const rows = links.map((link) => ({ link, clicks: counts.clicks.get(`${link.domain}/${link.code}`) ?? 0 }));
    if (filter === 'top') rows.sort((a, b) => b.clicks - a.clicks);
    else if (filter === 'bottom') rows.sort((a, b) => a.clicks - b.clicks);
    else if (filter === 'rand') shuffle(rows);
    const page = rows.slice(start, start + limit);
    const total = await this.totals(principal.tenantId, links.length, counts.clicks);
    return {
      httpStatus: 200,
      body: {
        ...(page.length ? { links: Object.fromEntries(page.map((r, i) => [`link_${i + 1}`, this.statsView(r.link, r.clicks)])) } : {}),
        stats: total,
        statusCode: 200,
        message: 'success',
        ...(counts.note ? { note: counts.note } : {}),
      },
      simple: NEED_FORMAT,
    };
  }

  private async dbStats(principal: Principal): Promise<YourlsAnswer> {
    const [links, counts] = await Promise.all([this.newest(principal.tenantId, STATS_WINDOW + 1), this.clicks.byLink(principal.tenantId, STATS_WINDOW)]);
    return {
      httpStatus: 200,
      body: {
        'db-stats': await this.totals(principal.tenantId, links.length, counts.clicks),
        statusCode: 200,
        message: 'success',
        ...(counts.note ? { note: counts.note } : {}),
      },
      simple: NEED_FORMAT,
    };
  }

  /** The tenant's number of links (counted past the stats window when there are more) and clicks. */
  private async totals(tenantId: string, seen: number, clicks: ReadonlyMap<string, number>) {
    let total = seen;
    if (seen > STATS_WINDOW) total = await this.count(tenantId);
    let sum = 0;
    for (const n of clicks.values()) sum += n;
    return { total_links: String(total), total_clicks: String(sum) };
  }

  private async count(tenantId: string): Promise<number> {
    let n = 0;
    let cursor: string | null = null;
    do {
      const page: { links: Link[]; nextCursor: string | null } = await this.links.list(tenantId, { limit: 500, cursor });
      n += page.links.length;
      cursor = page.nextCursor;
    } while (cursor);
    return n;
  }

  private async newest(tenantId: string, max: number): Promise<Link[]> {
    const out: Link[] = [];
    let cursor: string | null = null;
    do {
      const page: { links: Link[]; nextCursor: string | null } = await this.links.list(tenantId, { limit: Math.min(500, max - out.length), cursor });
      out.push(...page.links);
      cursor = page.nextCursor;
    } while (cursor && out.length < max);
    return out;
  }

  /** The tenant's link of that exact target, if any (searched among the links whose target contains it). */
  private async findByUrl(tenantId: string, url: string): Promise<Link | null> {
    if (url.length > 200) return null;
    const page = await this.links.list(tenantId, { limit: 50, q: url });
    return page.links.find((l) => l.targetUrl === url || l.targetUrl === normalized(url)) ?? null;
  }

  /** A short URL or a keyword (`abc`, `https://sho.rt/abc`) to the caller's link; null when it is not one. */
  private async linkOf(principal: Principal, shorturl: string | undefined): Promise<Link | null> {
    if (!shorturl) throw new YourlsRefusal(400, 'Need a shorturl', { errorCode: 400 });
    const id = this.identify(shorturl.trim());
    if (!id) return null;
    try {
      return await this.links.get(principal.tenantId, id);
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.LINK_NOT_FOUND) return null;
      throw error;
    }
  }

  private identify(shorturl: string): ShortUrlIdentifier | null {
    if (!shorturl.includes('/')) return /^[A-Za-z0-9_-]{1,64}$/.test(shorturl) ? { domain: this.config.links.defaultDomain, code: shorturl } : null;
    let url: URL;
    try {
      url = new URL(/^https?:\/\//i.test(shorturl) ? shorturl : `https://${shorturl}`);
    } catch {
      return null;
    }
    const code = url.pathname.replace(/^\/+|\/+$/g, '');
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(code)) return null;
    const base = new URL(this.config.links.publicBaseUrl);
    const domain = url.host.toLowerCase() === base.host.toLowerCase() ? this.config.links.defaultDomain : url.host.toLowerCase();
    return { domain, code };
  }

  private isShortUrl(url: string): boolean {
    let host: string;
    try {
      host = new URL(url).host.toLowerCase();
    } catch {
      return false;
    }
    return host === new URL(this.config.links.publicBaseUrl).host.toLowerCase() || this.config.links.domains.includes(host);
  }

  shortUrl(link: Link): string {
    const base = link.domain === this.config.links.defaultDomain ? this.config.links.publicBaseUrl : `https://${link.domain}`;
    return `${base}/${link.code}`;
  }

  /** YOURLS stores the page's title, or the URL when it has none. */
  private titleOf(link: Link): string {
    return link.title ?? link.targetUrl;
  }

  /** We keep no creator address (privacy): `ip` is empty. */
  private urlView(link: Link) {
    return { keyword: link.code, url: link.targetUrl, title: this.titleOf(link), date: yourlsDate(link.createdAt), ip: '' };
  }

  private statsView(link: Link, clicks: number) {
    return {
      shorturl: this.shortUrl(link),
      url: link.targetUrl,
      title: this.titleOf(link),
      timestamp: yourlsDate(link.createdAt),
      ip: '',
      clicks: String(clicks),
      keyword: link.code,
    };
  }

  /** An error in YOURLS' shape: its message, `errorCode` and the status as the HTTP status. */
  private refusal(error: unknown, reply: FastifyReply): YourlsAnswer {
    if (error instanceof YourlsRefusal) {
      if (error.retryAfter) reply.header('retry-after', error.retryAfter);
      return failure(error.httpStatus, error.message, error.fields);
    }
    const problem = problemFor(error);
    const retry = retryAfterFor(error, problem.status);
    if (retry) reply.header('retry-after', retry);
    if (problem.status === 401) return failure(403, 'Invalid username or password');
    if (problem.status >= 500) return failure(problem.status, problem.status === 500 ? 'Internal error' : 'Service temporarily unavailable; retry shortly');
    return failure(problem.status, problem.detail, { code: `error:${problem.code.toLowerCase().replace(/_/g, '-')}` });
  }
}

function failure(httpStatus: number, message: string, fields: Record<string, unknown> = {}): YourlsAnswer {
  return { httpStatus, body: { errorCode: httpStatus, message, ...fields }, simple: message };
}

function notFound(shorturl: string | undefined): YourlsAnswer {
  return {
    httpStatus: 404,
    body: { statusCode: 404, message: 'Error: short URL not found', errorCode: 404, shorturl: shorturl ?? '' },
    simple: 'Error: short URL not found',
  };
}

/** Query or form values as YOURLS reads them: the last of a repeated name, strings only. */
function flat(input: unknown): Params {
  const out: Params = {};
  if (!input || typeof input !== 'object') return out;
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    const v = Array.isArray(value) ? value[value.length - 1] : value;
    if (typeof v === 'string') out[key] = v;
  }
  return out;
}

function boundedInt(raw: string | undefined, fallback: number, min: number, max: number): number | null {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,7}$/.test(raw)) return null;
  const n = Number(raw);
  return n >= min && n <= max ? n : null;
}

function normalized(url: string): string {
  try {
    return new URL(url).toString();
  } catch {
    return url;
  }
}

function shuffle<T>(rows: T[]): void {
  for (let i = rows.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [rows[i], rows[j]] = [rows[j], rows[i]];
  }
}
