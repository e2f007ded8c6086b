import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditContext } from '@shortlink/audit-domain';
import type { ClickAggregateStore, Dimension } from '@shortlink/clicks-domain';
import type { AppConfig } from '@shortlink/config';
import { LINK_COMMANDS, type Link, type LinkCommands, type LinkEdit, LinkService, type ShortUrlIdentifier } from '@shortlink/links-domain';
import { APP_CONFIG, CompatAccess } from '@shortlink/nest-platform';
import type { Principal, Scope } from '@shortlink/tenants-domain';
import { type BitlyError, bitlyErrorOf, invalidArg, notFound } from './bitly-errors';
import { BitlyArgError, bitlyTime, bucketize, type UnitWindow, windowOf } from './bitly-units';

export const BITLY_CLICKS = Symbol('BITLY_CLICKS');
/** Domains Bitly clients name by default (the `bitly` npm client sends `bit.ly`): our default domain. */
export const BITLY_DOMAINS = ['bit.ly', 'bitly.com', 'j.mp'];
/** What the answers say when the click counts are not reachable from the generation app. */
export const CLICKS_UNAVAILABLE = 'click counts are not available to this instance (analytics store unreachable); clicks are reported as 0';
const METRICS_SIZE_MAX = 1000;

type Body = Record<string, unknown> | undefined;
type MetricsQuery = { unit?: string; units?: string; unit_reference?: string; size?: string };

/** Answered by the handler: a Bitly error. */
class BitlyRefusal extends Error {
  constructor(readonly error: BitlyError) {
    super(error.body.message);
  }
}

/**
 * Bitly's v4 API, the part its clients use most (docs/design.md, "Compatibility APIs"): shorten,
 * read and edit a bitlink, expand, and its click metrics, over the caller's links. The token is an
 * API key, as `Authorization: Bearer <key>` or bare (the `bitly` npm client sends it so). Scoped,
 * rate-limited and audited as our API is; errors in Bitly's shape.
 */
@Controller('v4')
export class BitlyController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LinkService) private readonly links: LinkService,
    @Inject(LINK_COMMANDS) private readonly commands: LinkCommands<AuditContext>,
    @Inject(CompatAccess) private readonly access: CompatAccess,
    @Inject(BITLY_CLICKS) private readonly clicks: ClickAggregateStore | null,
  ) {}

  @Post('shorten')
  @HttpCode(200)
  shorten(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Body() body: Body): Promise<void> {
    return this.answer(req, reply, 'links:write', async (principal, audit) => {
      const longUrl = body?.long_url;
      if (typeof longUrl !== 'string' || !longUrl.trim()) throw new BitlyRefusal(invalidArg('long_url', 'long_url is required'));
      const domain = this.domainOf(body?.domain);
      // Bitly answers a long URL the account shortened before with that bitlink (200), a new one with 201.
      const existing = await this.findByUrl(principal.tenantId, longUrl.trim(), domain);
      if (existing) return { status: 200, body: this.shortened(existing) };
      const link = await this.commands.create(audit, { tenantId: principal.tenantId, url: longUrl.trim(), domain });
      return { status: 201, body: this.shortened(link) };
    });
  }

  @Post('expand')
  @HttpCode(200)
  expand(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Body() body: Body): Promise<void> {
    return this.answer(req, reply, 'links:read', async (principal) => {
      const id = typeof body?.bitlink_id === 'string' ? this.identify(body.bitlink_id) : null;
      if (!id) throw new BitlyRefusal(invalidArg('bitlink_id', 'bitlink_id must be a bitlink (domain/hash)'));
      const link = await this.links.get(principal.tenantId, id);
      return {
        status: 200,
        body: { link: this.shortUrl(link), id: this.idOf(link), long_url: link.targetUrl, created_at: bitlyTime(link.createdAt.getTime() / 1000) },
      };
    });
  }

  @Get('bitlinks/:domain/:hash')
  get(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('domain') domain: string, @Param('hash') hash: string): Promise<void> {
    return this.answer(req, reply, 'links:read', async (principal) => ({ status: 200, body: this.bitlink(await this.linkOf(principal, domain, hash)) }));
  }

  @Patch('bitlinks/:domain/:hash')
  update(
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('domain') domain: string,
    @Param('hash') hash: string,
    @Body() body: Body,
  ): Promise<void> {
    return this.answer(req, reply, 'links:write', async (principal, audit) => {
      const edit = editOf(body ?? {});
      const id = this.idFromPath(domain, hash);
      const change = await this.commands.edit(audit, principal.tenantId, id, edit, null);
      return { status: 200, body: this.bitlink(change.after) };
    });
  }

  @Get('bitlinks/:domain/:hash/clicks/summary')
  summary(
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('domain') domain: string,
    @Param('hash') hash: string,
    @Query() query: MetricsQuery,
  ): Promise<void> {
    return this.answer(req, reply, 'analytics:read', async (principal) => {
      const { window, buckets, note } = await this.clickBuckets(principal, domain, hash, query);
      return {
        status: 200,
        body: {
          unit_reference: bitlyTime(window.reference),
          total_clicks: buckets.reduce((n, b) => n + b.clicks, 0),
          units: window.units,
          unit: window.unit,
          ...noted(note),
        },
      };
    });
  }

  @Get('bitlinks/:domain/:hash/clicks')
  clicksOf(
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('domain') domain: string,
    @Param('hash') hash: string,
    @Query() query: MetricsQuery,
  ): Promise<void> {
    return this.answer(req, reply, 'analytics:read', async (principal) => {
      const { window, buckets, note } = await this.clickBuckets(principal, domain, hash, query);
      return {
        status: 200,
        body: {
          link_clicks: buckets.map((b) => ({ clicks: b.clicks, date: bitlyTime(b.date) })),
          units: window.units,
          unit: window.unit,
          unit_reference: bitlyTime(window.reference),
          ...noted(note),
        },
      };
    });
  }

  @Get('bitlinks/:domain/:hash/countries')
  countries(
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('domain') domain: string,
    @Param('hash') hash: string,
    @Query() query: MetricsQuery,
  ): Promise<void> {
    return this.metrics(req, reply, domain, hash, query, 'countries', 'countries');
  }

  @Get('bitlinks/:domain/:hash/referrers')
  referrers(
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('domain') domain: string,
    @Param('hash') hash: string,
    @Query() query: MetricsQuery,
  ): Promise<void> {
    return this.metrics(req, reply, domain, hash, query, 'referers', 'referrers');
  }

  private metrics(
    req: FastifyRequest,
    reply: FastifyReply,
    domain: string,
    hash: string,
    query: MetricsQuery,
    dimension: Dimension,
    facet: 'countries' | 'referrers',
  ): Promise<void> {
    return this.answer(req, reply, 'analytics:read', async (principal) => {
      const link = await this.linkOf(principal, domain, hash);
      const window = metricsWindow(query, link);
      const size = query.size === undefined || query.size === '' ? 50 : /^\d{1,4}$/.test(query.size) ? Number(query.size) : NaN;
      if (!(size >= 1 && size <= METRICS_SIZE_MAX)) throw new BitlyRefusal(invalidArg('size', `size must be 1-${METRICS_SIZE_MAX}`));
      let rows: Array<{ value: string; clicks: number }> = [];
      let note: string | null = null;
      if (!this.clicks) note = CLICKS_UNAVAILABLE;
      else
        try {
          rows = await this.clicks.breakdown(
            scopeOf(link),
            { from: window.from, to: window.to, granularity: window.granularity, bots: 'exclude' },
            dimension,
            size,
          );
        } catch {
          note = CLICKS_UNAVAILABLE;
        }
      return {
        status: 200,
        body: {
          unit_reference: bitlyTime(window.reference),
          metrics: rows.map((r) => ({ value: r.value === '' ? (facet === 'referrers' ? 'direct' : 'Unknown') : r.value, clicks: r.clicks })),
          units: window.units,
          unit: window.unit,
          facet,
          ...noted(note),
        },
      };
    });
  }

  /** Authenticates, admits (scope, plan window), runs the route and answers its JSON, or the error in Bitly's shape. */
  private async answer(
    req: FastifyRequest,
    reply: FastifyReply,
    scope: Scope,
    route: (principal: Principal, audit: AuditContext) => Promise<{ status: number; body: object }>,
  ): Promise<void> {
    let status: number;
    let body: object;
    try {
      const principal = await this.access.keyPrincipal(req, tokenOf(req.headers.authorization));
      const audit = await this.access.admit(req, reply, principal, scope);
      ({ status, body } = await route(principal, audit));
    } catch (error) {
      const refusal =
        error instanceof BitlyRefusal ? error.error : error instanceof BitlyArgError ? invalidArg(error.field, error.message) : bitlyErrorOf(error);
      if (refusal.retryAfter) reply.header('retry-after', refusal.retryAfter);
      ({ status, body } = refusal);
    }
    reply.status(status).header('cache-control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(body));
  }

  /** A link's clicks in the window the query names, in Bitly's units (the summary and the clicks routes). */
  private async clickBuckets(principal: Principal, domain: string, hash: string, query: MetricsQuery) {
    const link = await this.linkOf(principal, domain, hash);
    const window = metricsWindow(query, link);
    const { points, note } = await this.series(link, window);
    return { window, buckets: bucketize(window, points), note };
  }

  private async series(link: Link, window: UnitWindow): Promise<{ points: Array<{ time: number; clicks: number }>; note: string | null }> {
    if (!this.clicks) return { points: [], note: CLICKS_UNAVAILABLE };
    try {
      const { series } = await this.clicks.series(scopeOf(link), { from: window.from, to: window.to, granularity: window.granularity, bots: 'exclude' });
      return { points: series.map((p) => ({ time: p.time, clicks: p.clicks })), note: null };
    } catch {
      return { points: [], note: CLICKS_UNAVAILABLE };
    }
  }

  private async linkOf(principal: Principal, domain: string, hash: string): Promise<Link> {
    return this.links.get(principal.tenantId, this.idFromPath(domain, hash));
  }

  private idFromPath(domain: string, hash: string): ShortUrlIdentifier {
    const id = this.identify(`${domain}/${hash}`);
    if (!id) throw new BitlyRefusal(notFound());
    return id;
  }

  /** `bit.ly/abc`, `sho.rt/abc` or `https://sho.rt/abc` to a link's identifier (Bitly's domains are our default one). */
  private identify(bitlink: string): ShortUrlIdentifier | null {
    const m = /^(?:https?:\/\/)?([^/?#\s]{1,253})\/([A-Za-z0-9_-]{1,64})\/?$/i.exec(bitlink.trim());
    if (!m) return null;
    return { domain: this.domainOf(m[1]), code: m[2] };
  }

  /** Bitly's default domains and our public base URL's host are our default domain; another is a domain of ours (or the tenant's). */
  private domainOf(raw: unknown): string {
    if (typeof raw !== 'string' || raw === '') return this.config.links.defaultDomain;
    const host = raw.toLowerCase();
    if (BITLY_DOMAINS.includes(host) || host === new URL(this.config.links.publicBaseUrl).host.toLowerCase()) return this.config.links.defaultDomain;
    return host;
  }

  private async findByUrl(tenantId: string, url: string, domain: string): Promise<Link | null> {
    if (url.length > 200) return null;
    const page = await this.links.list(tenantId, { limit: 50, q: url, domain });
    return page.links.find((l) => l.targetUrl === url && l.status === 'active') ?? null;
  }

  private shortUrl(link: Link): string {
    const base = link.domain === this.config.links.defaultDomain ? this.config.links.publicBaseUrl : `https://${link.domain}`;
    return `${base}/${link.code}`;
  }

  /** Bitly's id of a bitlink: its domain (host of the short URL) and hash. */
  private idOf(link: Link): string {
    return this.shortUrl(link).replace(/^https?:\/\//, '');
  }

  private shortened(link: Link) {
    return {
      created_at: bitlyTime(link.createdAt.getTime() / 1000),
      id: this.idOf(link),
      link: this.shortUrl(link),
      custom_bitlinks: [],
      long_url: link.targetUrl,
      archived: false,
      tags: [...link.tags],
      deeplinks: [],
      references: {},
    };
  }

  private bitlink(link: Link) {
    return {
      ...this.shortened(link),
      title: link.title ?? '',
      archived: link.status === 'disabled',
      created_by: '',
      client_id: '',
      launchpad_ids: [],
      qr_code_ids: [],
      is_deleted: false,
    };
  }
}

/** `Authorization: Bearer <key>`, or the bare key the `bitly` npm client sends. */
export function tokenOf(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : header.trim() || undefined;
}

/** PATCH's fields: `title` (null clears), `tags`, `long_url`; `archived: true` hides a link in Bitly, which has no equivalent here. */
export function editOf(body: Record<string, unknown>): LinkEdit {
  const edit: Record<string, unknown> = {};
  if ('title' in body) edit.title = body.title === '' ? null : body.title;
  if ('tags' in body) {
    if (!Array.isArray(body.tags)) throw new BitlyRefusal(invalidArg('tags', 'tags must be a list of strings'));
    edit.tags = body.tags;
  }
  if ('long_url' in body) edit.url = body.long_url;
  if ('archived' in body && body.archived !== false && body.archived !== null)
    throw new BitlyRefusal(invalidArg('archived', 'archiving is not supported: delete or disable the link with the shortlink API'));
  return edit as LinkEdit;
}

function metricsWindow(query: MetricsQuery, link: Link): UnitWindow {
  return windowOf(query, link.createdAt.getTime(), Date.now());
}

function scopeOf(link: Link) {
  return { tenantId: link.tenantId, domain: link.domain, code: link.code };
}

function noted(note: string | null) {
  return note ? { note } : {};
}
