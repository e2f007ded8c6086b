import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Put, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { auditContextOf, AuthenticatedRequest } from '@shortlink/nest-platform';
import { parsed, ShlinkKeyGuard, ShlinkProblemFilter } from './shlink-access';
import { ShlinkRoute, ShlinkRouteSpec } from './shlink-route';
import {
  domainParams,
  domainQuery,
  deletedVisitsSchema,
  mercureInfoSchema,
  domainRedirectsEditSchema,
  domainRedirectsSchema,
  domainsListSchema,
  healthSchema,
  orphanVisitsQuery,
  redirectRulesListSchema,
  redirectRulesSetSchema,
  shortCodeParams,
  shortUrlCreationSchema,
  shortUrlEditSchema,
  shortUrlSchema,
  shortUrlsListSchema,
  shortUrlsQuery,
  tagParams,
  tagRenamingSchema,
  tagsDeletionQuery,
  tagsListSchema,
  tagsStatsListSchema,
  visitsListSchema,
  visitsOverviewSchema,
  visitsQuery,
} from './shlink.schemas';
import { ShlinkService } from './shlink.service';
import { MercureTokens } from './mercure/mercure-token';

/**
 * The origin the client called, for the hub's URL: `X-Forwarded-Proto`/`X-Forwarded-Host` when a
 * relay (the redirect app's) or a proxy names them, else this request's scheme and Host. It only
 * shapes the caller's own answer.
 */
export function publicOriginOf(req: { headers: Record<string, string | string[] | undefined>; protocol?: string }): string {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.split(',')[0]?.trim();
  const proto = first(req.headers['x-forwarded-proto']) === 'https' ? 'https' : (req.protocol ?? 'http');
  const host = first(req.headers['x-forwarded-host']) || first(req.headers.host) || 'localhost';
  return `${proto}://${host}`;
}

const SHORT_URLS = ['Short URLs'];
const VISITS = ['Visits'];
const TAGS = ['Tags'];
const DOMAINS = ['Domains'];

/** The routes of Shlink REST v3 we answer, each with its spec (guard, validation, document). */
export const SPECS = {
  listShortUrls: {
    operationId: 'listShortUrls',
    summary: 'List short URLs',
    description:
      'Shlink’s pagination (`page`, `itemsPerPage`, -1 for all) and filters over your links, newest first by default. At most the newest 10 000 links matching `searchTerm`, one tag and `domain` are looked through.',
    tags: SHORT_URLS,
    scope: 'links:read',
    query: shortUrlsQuery,
    status: 200,
    response: shortUrlsListSchema,
  },
  createShortUrl: {
    operationId: 'createShortUrl',
    summary: 'Create a short URL',
    description:
      '`customSlug` is our alias; `validUntil` our expiry; `maxVisits` our maxClicks; `findIfExists` answers an existing short URL whose given fields all match. `validSince` may only be a moment already past; `shortCodeLength` only 7.',
    tags: SHORT_URLS,
    scope: 'links:write',
    body: shortUrlCreationSchema,
    status: 200,
    response: shortUrlSchema,
    errorTypes: ['INVALID_ARGUMENT', 'INVALID_SLUG'],
    errors: [409],
  },
  getShortUrl: {
    operationId: 'getShortUrl',
    summary: 'Read a short URL',
    tags: SHORT_URLS,
    scope: 'links:read',
    params: shortCodeParams,
    query: domainQuery,
    status: 200,
    response: shortUrlSchema,
    errorTypes: ['INVALID_SHORTCODE'],
    errors: [404],
  },
  editShortUrl: {
    operationId: 'editShortUrl',
    summary: 'Edit a short URL (null clears)',
    tags: SHORT_URLS,
    scope: 'links:write',
    params: shortCodeParams,
    query: domainQuery,
    body: shortUrlEditSchema,
    status: 200,
    response: shortUrlSchema,
    errorTypes: ['INVALID_ARGUMENT', 'INVALID_SHORTCODE'],
    errors: [404],
  },
  deleteShortUrl: {
    operationId: 'deleteShortUrl',
    summary: 'Delete a short URL (its code is not handed out again for 90 days)',
    tags: SHORT_URLS,
    scope: 'links:write',
    params: shortCodeParams,
    query: domainQuery,
    status: 204,
    errorTypes: ['INVALID_SHORTCODE'],
    errors: [404],
  },
  getShortUrlVisits: {
    operationId: 'getShortUrlVisits',
    summary: 'Visits of a short URL, newest first',
    description:
      'From the raw visits (at most the newest 5 000 of the range). We keep no client address, user agent or full referer: `referer` is the referring host, `userAgent` a representative user agent of the browser and OS we parsed (any user-agent parser reads both back from it; empty when neither is known).',
    tags: VISITS,
    scope: 'analytics:read',
    params: shortCodeParams,
    query: visitsQuery,
    status: 200,
    response: visitsListSchema,
    errorTypes: ['INVALID_SHORTCODE'],
    errors: [404],
  },
  getTagVisits: {
    operationId: 'getTagVisits',
    summary: 'Visits of the short URLs with a tag',
    tags: VISITS,
    scope: 'analytics:read',
    params: tagParams,
    query: visitsQuery,
    status: 200,
    response: visitsListSchema,
    errorTypes: ['TAG_NOT_FOUND'],
    errors: [404],
  },
  getDomainVisits: {
    operationId: 'getDomainVisits',
    summary: 'Visits of the short URLs of a domain (`DEFAULT`: the default domain)',
    tags: VISITS,
    scope: 'analytics:read',
    params: domainParams,
    query: visitsQuery,
    status: 200,
    response: visitsListSchema,
    errorTypes: ['DOMAIN_NOT_FOUND'],
    errors: [404],
  },
  getOrphanVisits: {
    operationId: 'getOrphanVisits',
    summary: 'Visits of short codes that do not exist, on your own domains (operators: the service’s too)',
    tags: VISITS,
    scope: 'analytics:read',
    query: orphanVisitsQuery,
    status: 200,
    response: visitsListSchema,
  },
  getNonOrphanVisits: {
    operationId: 'getNonOrphanVisits',
    summary: 'Visits of all your short URLs',
    tags: VISITS,
    scope: 'analytics:read',
    query: visitsQuery,
    status: 200,
    response: visitsListSchema,
  },
  getVisitsOverview: {
    operationId: 'getVisitsOverview',
    summary: 'Visit totals: your short URLs’ and orphan ones',
    tags: VISITS,
    scope: 'analytics:read',
    status: 200,
    response: visitsOverviewSchema,
  },
  listTags: { operationId: 'listTags', summary: 'Your tags', tags: TAGS, scope: 'links:read', status: 200, response: tagsListSchema },
  getTagsStats: {
    operationId: 'getTagsStats',
    summary: 'Your tags with their short URL and visit counts',
    tags: TAGS,
    scope: 'links:read',
    status: 200,
    response: tagsStatsListSchema,
  },
  renameTag: {
    operationId: 'renameTag',
    summary: 'Rename a tag on every short URL that has it',
    tags: TAGS,
    scope: 'links:write',
    body: tagRenamingSchema,
    status: 204,
    errorTypes: ['TAG_NOT_FOUND', 'TAG_CONFLICT'],
    errors: [404, 409],
  },
  deleteTags: {
    operationId: 'deleteTags',
    summary: 'Remove tags from every short URL that has them',
    tags: TAGS,
    scope: 'links:write',
    query: tagsDeletionQuery,
    status: 204,
  },
  listDomains: {
    operationId: 'listDomains',
    summary: 'The default domain and yours (operators: the service’s too), with their redirects',
    tags: DOMAINS,
    scope: 'links:read',
    status: 200,
    response: domainsListSchema,
  },
  setDomainRedirects: {
    operationId: 'setDomainRedirects',
    summary: 'Set a domain’s redirects (our root, not-found and path-not-found redirects)',
    description:
      '`baseUrlRedirect` is the root redirect, `invalidShortUrlRedirect` the not-found redirect (an unknown or disabled code), `regular404Redirect` the path-not-found redirect (any other path); absent stays, null clears. The default domain and the service’s other domains need an operator key (the admin scope); a tenant’s own verified domains its own key.',
    tags: DOMAINS,
    scope: 'links:write',
    body: domainRedirectsEditSchema,
    status: 200,
    response: domainRedirectsSchema,
    errorTypes: ['INVALID_ARGUMENT', 'DOMAIN_NOT_FOUND'],
    errors: [404],
  },
  health: {
    operationId: 'health',
    summary: 'Health of this instance',
    description: '`pass` (200) while every critical dependency answers, `fail` (503) otherwise; no key needed.',
    tags: ['Monitoring'],
    status: 200,
    response: healthSchema,
    responseType: 'application/health+json',
    errors: [503],
  },
  getShortUrlRedirectRules: {
    operationId: 'getShortUrlRedirectRules',
    summary: 'Redirect rules of a short URL, in priority order',
    description:
      'The link’s redirect rules (as `redirectRules` on /api/v1/links, where country and device targets are rules too), in Shlink’s words. Our `os` conditions read as Shlink’s `device` (windows, macos, linux, chromeos); our `region` as `geolocation-region-name`.',
    tags: SHORT_URLS,
    scope: 'links:read',
    params: shortCodeParams,
    query: domainQuery,
    status: 200,
    response: redirectRulesListSchema,
    errorTypes: ['INVALID_SHORTCODE'],
    errors: [404],
  },
  setShortUrlRedirectRules: {
    operationId: 'setShortUrlRedirectRules',
    summary: 'Replace the redirect rules of a short URL',
    description:
      'Every rule, in priority order; `[]` removes them. The first rule whose conditions all hold gives the target, the long URL otherwise. Languages count when accepted with a quality of at least 0.9; dates are ISO 8601 with a zone; every long URL passes the URL policy. At most 100 rules of 1 to 10 conditions.',
    tags: SHORT_URLS,
    scope: 'links:write',
    params: shortCodeParams,
    query: domainQuery,
    body: redirectRulesSetSchema,
    status: 200,
    response: redirectRulesListSchema,
    errorTypes: ['INVALID_ARGUMENT', 'INVALID_SHORTCODE'],
    errors: [404],
  },
  deleteShortUrlVisits: {
    operationId: 'deleteShortUrlVisits',
    summary: 'Delete the visits of a short URL',
    description:
      'From the raw visits, the rollups and the breakdowns of the analytics store (audited as `link.visits_deleted`). `deletedVisits` counts the raw visits (those of the visit retention); the counts drop within seconds, as the store applies the deletion in the background.',
    tags: VISITS,
    scope: 'links:write',
    params: shortCodeParams,
    query: domainQuery,
    status: 200,
    response: deletedVisitsSchema,
    errorTypes: ['INVALID_SHORTCODE'],
    errors: [404, 503],
  },
  deleteOrphanVisits: {
    operationId: 'deleteOrphanVisits',
    summary: 'Delete the orphan visits you see (of your own domains; operators: the service’s too)',
    description: 'As deleteShortUrlVisits, for the orphan visits (audited as `orphan_visits.deleted`, naming the domains).',
    tags: VISITS,
    scope: 'links:write',
    status: 200,
    response: deletedVisitsSchema,
    errors: [503],
  },
  getMercureInfo: {
    operationId: 'getMercureInfo',
    summary: 'The Mercure hub of real-time updates, and a JWT to subscribe with',
    description:
      'The hub (`GET /.well-known/mercure?topic=…`, Server-Sent Events) publishes each visit of your short URLs on `https://shlink.io/new-visit` and `https://shlink.io/new-visit/{shortCode}` (`{shortUrl, visit}`) and each orphan visit of the domains you see on `https://shlink.io/new-orphan-visit` (`{visit}`). The JWT (24 h) goes in `Authorization: Bearer`.',
    tags: ['Integrations'],
    scope: 'links:read',
    status: 200,
    response: mercureInfoSchema,
  },
} satisfies Record<string, ShlinkRouteSpec>;

/**
 * Shlink REST v3 (README, "Shlink REST v3"), for Shlink's clients: its official JS SDK, shlink-web-client,
 * and the tools that speak it. Each route maps onto our services with our keys, scopes, plan limits and audit log.
 */
@Controller('rest/v3')
@UseGuards(ShlinkKeyGuard)
@UseFilters(ShlinkProblemFilter)
export class ShlinkController {
  constructor(
    @Inject(ShlinkService) private readonly shlink: ShlinkService,
    @Inject(MercureTokens) private readonly tokens: MercureTokens,
  ) {}

  @Get('short-urls')
  @ShlinkRoute(SPECS.listShortUrls)
  list(@Req() req: AuthenticatedRequest, @Query() query: unknown) {
    return this.shlink.list(req.principal!, parsed(shortUrlsQuery, query));
  }

  @Post('short-urls')
  @HttpCode(200)
  @ShlinkRoute(SPECS.createShortUrl)
  create(@Req() req: AuthenticatedRequest, @Body() body: unknown) {
    return this.shlink.create(req.principal!, auditContextOf(req), parsed(shortUrlCreationSchema, body));
  }

  @Get('short-urls/:shortCode')
  @ShlinkRoute(SPECS.getShortUrl)
  get(@Req() req: AuthenticatedRequest, @Param('shortCode') code: string, @Query() query: unknown) {
    return this.shlink.get(req.principal!, code, parsed(domainQuery, query).domain);
  }

  @Patch('short-urls/:shortCode')
  @ShlinkRoute(SPECS.editShortUrl)
  edit(@Req() req: AuthenticatedRequest, @Param('shortCode') code: string, @Query() query: unknown, @Body() body: unknown) {
    const { domain } = parsed(domainQuery, query);
    return this.shlink.edit(req.principal!, auditContextOf(req), code, domain, parsed(shortUrlEditSchema, body));
  }

  @Delete('short-urls/:shortCode')
  @HttpCode(204)
  @ShlinkRoute(SPECS.deleteShortUrl)
  async remove(@Req() req: AuthenticatedRequest, @Param('shortCode') code: string, @Query() query: unknown): Promise<void> {
    await this.shlink.remove(req.principal!, auditContextOf(req), code, parsed(domainQuery, query).domain);
  }

  @Get('short-urls/:shortCode/visits')
  @ShlinkRoute(SPECS.getShortUrlVisits)
  shortUrlVisits(@Req() req: AuthenticatedRequest, @Param('shortCode') code: string, @Query() query: unknown) {
    const q = parsed(visitsQuery, query);
    return this.shlink.linkVisits(req.principal!, code, q.domain, q);
  }

  @Get('tags/stats')
  @ShlinkRoute(SPECS.getTagsStats)
  tagStats(@Req() req: AuthenticatedRequest) {
    return this.shlink.tagStats(req.principal!);
  }

  @Get('tags/:tag/visits')
  @ShlinkRoute(SPECS.getTagVisits)
  tagVisits(@Req() req: AuthenticatedRequest, @Param('tag') tag: string, @Query() query: unknown) {
    return this.shlink.tagVisits(req.principal!, tag, parsed(visitsQuery, query));
  }

  @Get('domains/:domain/visits')
  @ShlinkRoute(SPECS.getDomainVisits)
  domainVisits(@Req() req: AuthenticatedRequest, @Param('domain') domain: string, @Query() query: unknown) {
    return this.shlink.domainVisits(req.principal!, domain, parsed(visitsQuery, query));
  }

  @Get('visits/orphan')
  @ShlinkRoute(SPECS.getOrphanVisits)
  orphanVisits(@Req() req: AuthenticatedRequest, @Query() query: unknown) {
    return this.shlink.orphanVisits(req.principal!, parsed(orphanVisitsQuery, query));
  }

  @Get('visits/non-orphan')
  @ShlinkRoute(SPECS.getNonOrphanVisits)
  nonOrphanVisits(@Req() req: AuthenticatedRequest, @Query() query: unknown) {
    return this.shlink.nonOrphanVisits(req.principal!, parsed(visitsQuery, query));
  }

  @Get('visits')
  @ShlinkRoute(SPECS.getVisitsOverview)
  overview(@Req() req: AuthenticatedRequest) {
    return this.shlink.overview(req.principal!);
  }

  @Get('tags')
  @ShlinkRoute(SPECS.listTags)
  tags(@Req() req: AuthenticatedRequest) {
    return this.shlink.listTags(req.principal!);
  }

  @Put('tags')
  @HttpCode(204)
  @ShlinkRoute(SPECS.renameTag)
  async renameTag(@Req() req: AuthenticatedRequest, @Body() body: unknown): Promise<void> {
    const { oldName, newName } = parsed(tagRenamingSchema, body);
    await this.shlink.renameTag(req.principal!, auditContextOf(req), oldName, newName);
  }

  @Delete('tags')
  @HttpCode(204)
  @ShlinkRoute(SPECS.deleteTags)
  async deleteTags(@Req() req: AuthenticatedRequest, @Query() query: unknown): Promise<void> {
    const q = parsed(tagsDeletionQuery, query);
    await this.shlink.deleteTags(req.principal!, auditContextOf(req), [...(q['tags[]'] ?? []), ...(q.tags ?? [])]);
  }

  @Get('domains')
  @ShlinkRoute(SPECS.listDomains)
  domains(@Req() req: AuthenticatedRequest) {
    return this.shlink.listDomains(req.principal!);
  }

  @Patch('domains/redirects')
  @ShlinkRoute(SPECS.setDomainRedirects)
  redirects(@Req() req: AuthenticatedRequest, @Body() body: unknown) {
    return this.shlink.editRedirects(req.principal!, auditContextOf(req), parsed(domainRedirectsEditSchema, body));
  }

  @Get('health')
  @ShlinkRoute(SPECS.health)
  async health(@Res({ passthrough: true }) reply: FastifyReply) {
    const health = await this.shlink.health();
    reply
      .status(health.status === 'pass' ? 200 : 503)
      .header('content-type', 'application/health+json')
      .header('cache-control', 'no-store');
    return health;
  }

  @Get('short-urls/:shortCode/redirect-rules')
  @ShlinkRoute(SPECS.getShortUrlRedirectRules)
  getRedirectRules(@Req() req: AuthenticatedRequest, @Param('shortCode') code: string, @Query() query: unknown) {
    return this.shlink.redirectRules(req.principal!, code, parsed(domainQuery, query).domain);
  }

  @Post('short-urls/:shortCode/redirect-rules')
  @HttpCode(200)
  @ShlinkRoute(SPECS.setShortUrlRedirectRules)
  setRedirectRules(@Req() req: AuthenticatedRequest, @Param('shortCode') code: string, @Query() query: unknown, @Body() body: unknown) {
    const { domain } = parsed(domainQuery, query);
    return this.shlink.setRedirectRules(req.principal!, auditContextOf(req), code, domain, parsed(redirectRulesSetSchema, body));
  }

  @Delete('short-urls/:shortCode/visits')
  @ShlinkRoute(SPECS.deleteShortUrlVisits)
  deleteShortUrlVisits(@Req() req: AuthenticatedRequest, @Param('shortCode') code: string, @Query() query: unknown) {
    return this.shlink.deleteLinkVisits(req.principal!, auditContextOf(req), code, parsed(domainQuery, query).domain);
  }

  @Delete('visits/orphan')
  @ShlinkRoute(SPECS.deleteOrphanVisits)
  deleteOrphanVisits(@Req() req: AuthenticatedRequest) {
    return this.shlink.deleteOrphanVisits(req.principal!, auditContextOf(req));
  }

  @Get('mercure-info')
  @ShlinkRoute(SPECS.getMercureInfo)
  mercureInfo(@Req() req: AuthenticatedRequest) {
    return this.shlink.mercureInfo(req.principal!, `${publicOriginOf(req)}/.well-known/mercure`, this.tokens);
  }
}
