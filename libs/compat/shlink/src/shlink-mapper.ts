import { z } from 'zod';
import type { VisitRow } from '@shortlink/clicks-domain';
import { deviceTargetsOf, Link, LinkEdit } from '@shortlink/links-domain';
import { invalidArgument } from './shlink-problem';
import { representativeUserAgent } from './shlink-user-agent';
import { OrderField, ShortUrlsQuery, shortUrlCreationSchema, shortUrlEditSchema, shortUrlSchema, visitSchema, visitsSummarySchema } from './shlink.schemas';

/**
 * Pure mappings between Shlink's REST v3 shapes and our links, visits and domain settings
 * (README, "Shlink REST v3"). No I/O: the service feeds them.
 */

export type ShlinkShortUrl = z.infer<typeof shortUrlSchema>;
export type ShlinkVisit = z.infer<typeof visitSchema>;
export type VisitsSummary = z.infer<typeof visitsSummarySchema>;

/** How a link's short URL and domain read: the default domain is Shlink's `domain: null`. */
export interface ShortUrlContext {
  readonly defaultDomain: string;
  shortUrl(link: Link): string;
}

/** Clicks of a link: every click, and those of bots. */
export interface ClickCount {
  readonly total: number;
  readonly bots: number;
}

export const NO_CLICKS: ClickCount = { total: 0, bots: 0 };
export const linkKey = (domain: string, code: string) => `${domain}/${code}`;
export const summaryOf = (c: ClickCount): VisitsSummary => ({ total: c.total, nonBots: c.total - c.bots, bots: c.bots });

/** Shlink's date format (ATOM, `+00:00`), as its own answers carry it. */
export const atom = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, '+00:00');

export function shortUrlOf(link: Link, ctx: ShortUrlContext, clicks: ClickCount = NO_CLICKS): ShlinkShortUrl {
  const devices = deviceTargetsOf(link.redirectRules) ?? {};
  return {
    shortCode: link.code,
    shortUrl: ctx.shortUrl(link),
    longUrl: link.targetUrl,
    deviceLongUrls: { android: devices.android ?? null, ios: devices.ios ?? null, desktop: devices.desktop ?? null },
    dateCreated: atom(link.createdAt),
    visitsSummary: summaryOf(clicks),
    tags: [...link.tags],
    meta: { validSince: null, validUntil: link.expiresAt ? atom(link.expiresAt) : null, maxVisits: link.maxClicks },
    domain: link.domain === ctx.defaultDomain ? null : link.domain,
    title: link.title,
    crawlable: link.crawlable,
    forwardQuery: link.forwardQuery,
    hasRedirectRules: (link.redirectRules?.length ?? 0) > 0,
  };
}

/** A Shlink date (ATOM or ISO 8601) as a Date; INVALID_ARGUMENT naming the field otherwise. */
export function dateOf(value: string, field: string): Date {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw invalidArgument([field], `${field} is not a valid date`);
  return d;
}

/** Shlink has validSince; we have no start date: only a start that has already come is accepted (it changes nothing). */
function checkValidSince(value: string | null | undefined, now: number): void {
  if (value === undefined || value === null) return;
  if (dateOf(value, 'validSince').getTime() > now)
    throw invalidArgument(['validSince'], 'validSince in the future is not supported: links are active from their creation');
}

type DeviceLongUrls = z.infer<typeof shortUrlCreationSchema>['deviceLongUrls'];
function deviceLongUrlsOf(devices: DeviceLongUrls, current: Readonly<Record<string, string>> | null = null): Record<string, string> | null {
  if (!devices) return current ? { ...current } : null;
  const merged: Record<string, string | null | undefined> = { ...(current ?? {}) };
  for (const key of ['android', 'ios', 'desktop'] as const) if (key in devices) merged[key] = devices[key];
  const kept = Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return Object.keys(kept).length ? kept : null;
}

/** Our generated codes are 7 characters; Shlink lets a create ask for another length, which we cannot give. */
export const CODE_LENGTH = 7;

/** A Shlink create as our link creation (the tenant's). */
export function creationOf(body: z.infer<typeof shortUrlCreationSchema>, tenantId: string, now = Date.now()) {
  checkValidSince(body.validSince, now);
  if (body.shortCodeLength !== undefined && body.shortCodeLength !== CODE_LENGTH)
    throw invalidArgument(['shortCodeLength'], `generated short codes are ${CODE_LENGTH} characters; use customSlug for another`);
  const devices = deviceLongUrlsOf(body.deviceLongUrls);
  return {
    tenantId,
    url: body.longUrl,
    ...(body.customSlug !== undefined ? { alias: body.customSlug } : {}),
    ...(body.domain !== undefined ? { domain: body.domain } : {}),
    ...(body.tags !== undefined ? { tags: body.tags } : {}),
    ...(body.title !== undefined && body.title !== null ? { title: body.title } : {}),
    ...(body.validUntil ? { expiresAt: dateOf(body.validUntil, 'validUntil').toISOString() } : {}),
    ...(body.maxVisits !== undefined && body.maxVisits !== null ? { maxClicks: body.maxVisits } : {}),
    ...(body.crawlable !== undefined ? { crawlable: body.crawlable } : {}),
    ...(body.forwardQuery !== undefined ? { forwardQuery: body.forwardQuery } : {}),
    ...(devices ? { deviceTargets: devices } : {}),
  };
}

/** A Shlink edit as our link edit: absent stays, null clears. */
export function editOf(body: z.infer<typeof shortUrlEditSchema>, current: Link, now = Date.now()): LinkEdit {
  checkValidSince(body.validSince, now);
  const edit: Record<string, unknown> = {};
  if (body.longUrl !== undefined) edit.url = body.longUrl;
  if (body.title !== undefined) edit.title = body.title;
  if (body.tags !== undefined) edit.tags = body.tags;
  if (body.validUntil !== undefined) edit.expiresAt = body.validUntil === null ? null : dateOf(body.validUntil, 'validUntil').toISOString();
  if (body.maxVisits !== undefined) edit.maxClicks = body.maxVisits;
  if (body.crawlable !== undefined) edit.crawlable = body.crawlable;
  if (body.forwardQuery !== undefined) edit.forwardQuery = body.forwardQuery;
  if (body.deviceLongUrls !== undefined) edit.deviceTargets = deviceLongUrlsOf(body.deviceLongUrls, deviceTargetsOf(current.redirectRules));
  return edit;
}

/** Whether an existing link is what a `findIfExists` create asks for (Shlink: every given field matches). */
export function matchesCreation(link: Link, body: z.infer<typeof shortUrlCreationSchema>, domain: string): boolean {
  if (link.targetUrl !== body.longUrl && link.targetUrl !== safeHref(body.longUrl)) return false;
  if (link.domain !== domain) return false;
  if (body.customSlug !== undefined && link.code !== body.customSlug) return false;
  if (body.tags !== undefined && [...link.tags].sort().join('\n') !== [...new Set(body.tags)].sort().join('\n')) return false;
  if (body.title !== undefined && body.title !== null && link.title !== body.title) return false;
  if (body.maxVisits !== undefined && body.maxVisits !== null && link.maxClicks !== body.maxVisits) return false;
  if (body.validUntil && (!link.expiresAt || link.expiresAt.getTime() !== new Date(body.validUntil).getTime())) return false;
  return link.status === 'active';
}

function safeHref(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

/** Shlink's pagination of a list that is all in hand: `itemsPerPage` -1 (or none given with `all`) is one page of everything. */
export function paginate<T>(items: readonly T[], page = 1, itemsPerPage = 10) {
  const all = itemsPerPage <= 0;
  const size = all ? Math.max(items.length, 1) : itemsPerPage;
  const pagesCount = all ? 1 : Math.max(1, Math.ceil(items.length / size));
  const current = all ? 1 : page;
  const data = items.slice((current - 1) * size, current * size);
  return {
    data,
    pagination: { currentPage: current, pagesCount, itemsPerPage: all ? -1 : size, itemsInCurrentPage: data.length, totalItems: items.length },
  };
}

const compareBy: Record<OrderField, (a: Link, b: Link, clicks: (l: Link) => ClickCount) => number> = {
  dateCreated: (a, b) => a.createdAt.getTime() - b.createdAt.getTime(),
  shortCode: (a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0),
  longUrl: (a, b) => a.targetUrl.localeCompare(b.targetUrl),
  title: (a, b) => (a.title ?? '').localeCompare(b.title ?? ''),
  visits: (a, b, c) => c(a).total - c(b).total,
  nonBotVisits: (a, b, c) => c(a).total - c(a).bots - (c(b).total - c(b).bots),
};

/**
 * Shlink's short URL listing over the tenant's links (already narrowed by search term, one tag and
 * domain where the store does it): tags in `any`/`all` mode, creation between startDate and endDate,
 * exclusions, order (newest first by default) and the page.
 */
export function selectShortUrls(links: readonly Link[], query: ShortUrlsQuery, clicks: (link: Link) => ClickCount, now = Date.now()) {
  const tags = [...(query['tags[]'] ?? []), ...(query.tags ?? [])];
  const excluded = [...(query['excludeTags[]'] ?? []), ...(query.excludeTags ?? [])];
  const start = query.startDate ? dateOf(query.startDate, 'startDate').getTime() : null;
  const end = query.endDate ? dateOf(query.endDate, 'endDate').getTime() : null;
  const kept = links.filter((l) => {
    if (tags.length && !(query.tagsMode === 'all' ? tags.every((t) => l.tags.includes(t)) : tags.some((t) => l.tags.includes(t)))) return false;
    if (excluded.length && (query.excludeTagsMode === 'all' ? excluded.every((t) => l.tags.includes(t)) : excluded.some((t) => l.tags.includes(t))))
      return false;
    if (start !== null && l.createdAt.getTime() < start) return false;
    if (end !== null && l.createdAt.getTime() > end) return false;
    if (query.excludeMaxVisitsReached && l.maxClicks !== null && clicks(l).total >= l.maxClicks) return false;
    if (query.excludePastValidUntil && l.expiresAt !== null && l.expiresAt.getTime() <= now) return false;
    return true;
  });
  const [field, dir] = (query.orderBy ?? 'dateCreated-DESC').split('-') as [OrderField, 'ASC' | 'DESC'];
  const sign = dir === 'ASC' ? 1 : -1;
  const sorted = [...kept].sort((a, b) => sign * compareBy[field](a, b, clicks) || sign * compareBy.dateCreated(a, b, clicks));
  return paginate(sorted, query.page, query.itemsPerPage);
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
function countryNameOf(code: string | null): string | null {
  if (!code) return null;
  try {
    return regionNames.of(code.toUpperCase()) ?? null;
  } catch {
    return null;
  }
}

/**
 * One raw visit in Shlink's shape. We never keep the client address, the full referer or the user
 * agent: `referer` is the referring host, `userAgent` a representative one of the browser and OS we
 * parsed from it (representativeUserAgent: Shlink's clients read both back from it),
 * and the location has no coordinates or time zone.
 */
export function visitOf(row: VisitRow, ctx: { readonly defaultDomain: string; shortUrlOf(domain: string, code: string): string }, orphan = false): ShlinkVisit {
  const hasPlace = row.country !== null;
  return {
    referer: row.refererHost ?? '',
    date: atom(new Date(row.time)),
    userAgent: representativeUserAgent(row.browser, row.os),
    visitLocation: hasPlace
      ? {
          countryCode: row.country,
          countryName: countryNameOf(row.country),
          regionName: row.region,
          cityName: row.city,
          latitude: null,
          longitude: null,
          timezone: null,
          isEmpty: false,
        }
      : null,
    potentialBot: row.bot,
    visitedUrl: ctx.shortUrlOf(row.domain, row.code),
    redirectUrl: null,
    ...(orphan ? { type: 'invalid_short_url' as const } : { shortCode: row.code, domain: row.domain === ctx.defaultDomain ? null : row.domain }),
  };
}

/** Shlink's three domain redirects over our domain settings: the root, an unknown short code, any other path. */
export interface RedirectSettings {
  readonly rootRedirect: string | null;
  readonly notFoundRedirect: string | null;
  readonly pathNotFoundRedirect: string | null;
}

/** `invalidShortUrlRedirect` is our not-found redirect (an unknown or disabled code), `regular404Redirect` our path-not-found one. */
export const redirectsOf = (s: RedirectSettings | null) => ({
  baseUrlRedirect: s?.rootRedirect ?? null,
  regular404Redirect: s?.pathNotFoundRedirect ?? null,
  invalidShortUrlRedirect: s?.notFoundRedirect ?? null,
});

/** A Shlink redirects edit as our settings edit: absent stays, null clears. */
export function redirectsEditOf(body: { baseUrlRedirect?: string | null; regular404Redirect?: string | null; invalidShortUrlRedirect?: string | null }) {
  const edit: Record<string, string | null> = {};
  if (body.baseUrlRedirect !== undefined) edit.rootRedirect = body.baseUrlRedirect;
  if (body.invalidShortUrlRedirect !== undefined) edit.notFoundRedirect = body.invalidShortUrlRedirect;
  if (body.regular404Redirect !== undefined) edit.pathNotFoundRedirect = body.regular404Redirect;
  return edit;
}
