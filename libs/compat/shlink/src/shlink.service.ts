import { Inject, Injectable, Optional } from '@nestjs/common';
import type { z } from 'zod';
import { AuditContext, auditEntry, AuditLog } from '@shortlink/audit-domain';
import { ClickAggregateStore, RangeQuery, VisitRow } from '@shortlink/clicks-domain';
import type { AppConfig } from '@shortlink/config';
import type { HealthProbe } from '@shortlink/core';
import { DomainError, ErrorCode } from '@shortlink/core';
import { Link, LINK_COMMANDS, LinkCommands, LinkService } from '@shortlink/links-domain';
import { APP_CONFIG, APP_LOGGER, HEALTH_PROBES, PinoNestLogger, Principal } from '@shortlink/nest-platform';
import { DomainSettingsService, TenantService } from '@shortlink/tenants-domain';
import {
  ClickCount,
  creationOf,
  editOf,
  linkKey,
  matchesCreation,
  NO_CLICKS,
  paginate,
  redirectsEditOf,
  redirectsOf,
  selectShortUrls,
  shortUrlOf,
  ShortUrlContext,
  summaryOf,
  visitOf,
} from './shlink-mapper';
import { ShlinkError, tagNotFound } from './shlink-problem';
import { redirectRulesInputOf, redirectRulesListOf } from './shlink-redirect-rules';
import type { MercureTokens } from './mercure/mercure-token';
import { redirectRulesSetSchema, shortUrlCreationSchema, shortUrlEditSchema, ShortUrlsQuery, VisitsQuery } from './shlink.schemas';

/** ClickAggregateStore | null: where the Shlink API reads raw visits and click counts (shlinkCompat's options, or CLICK_STATS_READER). */
export const SHLINK_VISITS = Symbol('SHLINK_VISITS');

/** Links a Shlink listing, tag or findIfExists looks through at most (README, "Shlink REST v3"). */
export const MAX_LINKS_SCANNED = 10_000;
/** Raw visits a Shlink visits listing pages through at most (newest first). */
export const MAX_VISITS_SCANNED = 5_000;
const PAGE = 100;
const DAY = 86_400;

type Creation = z.infer<typeof shortUrlCreationSchema>;
type Edit = z.infer<typeof shortUrlEditSchema>;
type RulesSet = z.infer<typeof redirectRulesSetSchema>;

/**
 * Shlink REST v3 over our services (README, "Shlink REST v3"): short URLs are the tenant's links
 * (LinkService, with the link API's audit entries and events), visits the raw visits of the OLAP
 * store read from this app (SHLINK_VISITS: non-critical, an outage answers 503 for visits and
 * zero counts in short URLs), tags the links' tags, domains the domain settings.
 */
@Injectable()
export class ShlinkService {
  private readonly ctx: ShortUrlContext;

  constructor(
    @Inject(LinkService) private readonly links: LinkService,
    @Inject(LINK_COMMANDS) private readonly commands: LinkCommands<AuditContext>,
    @Inject(DomainSettingsService) private readonly domains: DomainSettingsService,
    @Inject(TenantService) private readonly tenants: TenantService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: PinoNestLogger,
    @Inject(HEALTH_PROBES) private readonly probes: () => readonly HealthProbe[],
    @Inject(AuditLog) private readonly audit: AuditLog,
    @Optional() @Inject(SHLINK_VISITS) private readonly reader: ClickAggregateStore | null = null,
  ) {
    this.ctx = { defaultDomain: config.links.defaultDomain, shortUrl: (link) => this.shortUrlOf(link.domain, link.code) };
  }

  private shortUrlOf(domain: string, code: string): string {
    const base = domain === this.config.links.defaultDomain ? this.config.links.publicBaseUrl : `https://${domain}`;
    return `${base}/${code}`;
  }

  /** Shlink's `domain` parameter: none or `DEFAULT` is the default domain. */
  domainOf(domain: string | undefined | null): string {
    return !domain || domain === 'DEFAULT' ? this.config.links.defaultDomain : domain.toLowerCase();
  }

  // ---- short URLs

  async list(principal: Principal, query: ShortUrlsQuery) {
    const tags = [...(query['tags[]'] ?? []), ...(query.tags ?? [])];
    const links = await this.allLinks(principal.tenantId, {
      q: query.searchTerm || undefined,
      tag: tags.length === 1 ? tags[0] : undefined,
      domain: query.domain ? this.domainOf(query.domain) : undefined,
    });
    const clicks = await this.clickCounts(principal.tenantId);
    const page = selectShortUrls(links, query, clicks);
    return { shortUrls: { data: page.data.map((l) => shortUrlOf(l, this.ctx, clicks(l))), pagination: page.pagination } };
  }

  async create(principal: Principal, audit: AuditContext, body: Creation) {
    const input = creationOf(body, principal.tenantId);
    if (body.findIfExists) {
      const domain = this.domainOf(body.domain);
      const found = body.customSlug
        ? await this.links.get(principal.tenantId, { domain, code: body.customSlug }).catch(() => null)
        : (await this.allLinks(principal.tenantId, { q: body.longUrl, domain })).find((l) => matchesCreation(l, body, domain));
      if (found && matchesCreation(found, body, domain)) return this.view(principal.tenantId, found);
    }
    const link = await this.commands.create(audit, input);
    return shortUrlOf(link, this.ctx);
  }

  async get(principal: Principal, code: string, domain: string | undefined) {
    return this.view(principal.tenantId, await this.links.get(principal.tenantId, { domain: this.domainOf(domain), code }));
  }

  async edit(principal: Principal, audit: AuditContext, code: string, domain: string | undefined, body: Edit) {
    const id = { domain: this.domainOf(domain), code };
    const current = await this.links.get(principal.tenantId, id);
    const change = await this.commands.edit(audit, principal.tenantId, id, editOf(body, current), null);
    return this.view(principal.tenantId, change.after);
  }

  async remove(principal: Principal, audit: AuditContext, code: string, domain: string | undefined): Promise<void> {
    const id = { domain: this.domainOf(domain), code };
    await this.commands.remove(audit, principal.tenantId, id, null);
  }

  // ---- redirect rules (docs/design.md, "Redirect rules"): the link's own, in Shlink's words

  async redirectRules(principal: Principal, code: string, domain: string | undefined) {
    return redirectRulesListOf(await this.links.get(principal.tenantId, { domain: this.domainOf(domain), code }));
  }

  /** Replaces the rules, as an edit of the link's `redirectRules` (checked, audited and announced like any). */
  async setRedirectRules(principal: Principal, audit: AuditContext, code: string, domain: string | undefined, body: RulesSet) {
    const id = { domain: this.domainOf(domain), code };
    const change = await this.commands.edit(audit, principal.tenantId, id, { redirectRules: redirectRulesInputOf(body) }, null);
    return redirectRulesListOf(change.after);
  }

  private async view(tenantId: string, link: Link) {
    return shortUrlOf(link, this.ctx, (await this.clickCounts(tenantId))(link));
  }

  // ---- tags

  async listTags(principal: Principal) {
    return { tags: { data: [...this.tagsOf(await this.allLinks(principal.tenantId, {})).keys()].sort() } };
  }

  async tagStats(principal: Principal, page?: number, itemsPerPage?: number) {
    const byTag = this.tagsOf(await this.allLinks(principal.tenantId, {}));
    const clicks = await this.clickCounts(principal.tenantId);
    const stats = [...byTag.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([tag, links]) => {
        const sum = links.reduce((s, l) => ({ total: s.total + clicks(l).total, bots: s.bots + clicks(l).bots }), NO_CLICKS);
        return { tag, shortUrlsCount: links.length, visitsSummary: summaryOf(sum) };
      });
    return { tags: paginate(stats, page ?? 1, itemsPerPage ?? -1) };
  }

  async renameTag(principal: Principal, audit: AuditContext, oldName: string, newName: string): Promise<void> {
    const byTag = this.tagsOf(await this.allLinks(principal.tenantId, {}));
    const tagged = byTag.get(oldName);
    if (!tagged) throw tagNotFound(oldName);
    if (oldName === newName) return;
    if (byTag.has(newName))
      throw new ShlinkError('TAG_CONFLICT', 409, 'Tag conflict', `You cannot rename tag ${oldName} to ${newName}, because it already exists`, {
        oldName,
        newName,
      });
    for (const link of tagged)
      await this.retag(
        principal,
        audit,
        link,
        link.tags.map((t) => (t === oldName ? newName : t)),
      );
  }

  async deleteTags(principal: Principal, audit: AuditContext, tags: readonly string[]): Promise<void> {
    if (!tags.length) return;
    const gone = new Set(tags);
    for (const link of await this.allLinks(principal.tenantId, {})) {
      if (link.tags.some((t) => gone.has(t)))
        await this.retag(
          principal,
          audit,
          link,
          link.tags.filter((t) => !gone.has(t)),
        );
    }
  }

  private async retag(principal: Principal, audit: AuditContext, link: Link, tags: readonly string[]): Promise<void> {
    await this.commands.edit(audit, principal.tenantId, { domain: link.domain, code: link.code }, { tags: [...new Set(tags)] }, null);
  }

  private tagsOf(links: readonly Link[]): Map<string, Link[]> {
    const byTag = new Map<string, Link[]>();
    for (const link of links) for (const tag of link.tags) byTag.set(tag, [...(byTag.get(tag) ?? []), link]);
    return byTag;
  }

  // ---- visits

  async linkVisits(principal: Principal, code: string, domain: string | undefined, query: VisitsQuery) {
    const id = { domain: this.domainOf(domain), code };
    await this.links.get(principal.tenantId, id); // 404 for a code that is not the tenant's
    return this.visitsPage(query, (from, to, bots) => this.readVisits({ tenantId: principal.tenantId, domain: id.domain, code, from, to, bots }));
  }

  async tagVisits(principal: Principal, tag: string, query: VisitsQuery) {
    const tagged = this.tagsOf(await this.allLinks(principal.tenantId, {})).get(tag);
    if (!tagged) throw tagNotFound(tag);
    const links = tagged.map((l) => ({ domain: l.domain, code: l.code }));
    return this.visitsPage(query, (from, to, bots) => this.readVisits({ tenantId: principal.tenantId, links, from, to, bots }));
  }

  async domainVisits(principal: Principal, rawDomain: string, query: VisitsQuery) {
    const domain = this.domainOf(rawDomain);
    if (!(await this.visibleDomains(principal)).includes(domain))
      throw new DomainError(ErrorCode.DOMAIN_NOT_FOUND, `no domain ${domain}`, { domain: rawDomain });
    return this.visitsPage(query, (from, to, bots) => this.readVisits({ tenantId: principal.tenantId, domain, from, to, bots }));
  }

  async nonOrphanVisits(principal: Principal, query: VisitsQuery) {
    const domain = query.domain ? this.domainOf(query.domain) : undefined;
    return this.visitsPage(query, (from, to, bots) => this.readVisits({ tenantId: principal.tenantId, domain, from, to, bots }));
  }

  async orphanVisits(principal: Principal, query: VisitsQuery & { type?: string }) {
    const domains = (await this.orphanDomainsOf(principal)).filter((d) => !query.domain || d === this.domainOf(query.domain));
    // Our orphan visits are the visits of short codes that do not exist (Shlink's invalid_short_url).
    if (query.type !== undefined && query.type !== 'invalid_short_url') return { visits: paginate([], query.page, query.itemsPerPage) };
    return this.visitsPage(
      query,
      async (from, to, bots) => {
        const rows = (await Promise.all(domains.map((domain) => this.readVisits({ tenantId: '', domain, from, to, bots })))).flat();
        return rows.sort((a, b) => b.time - a.time || (BigInt(b.id) > BigInt(a.id) ? 1 : -1)).slice(0, MAX_VISITS_SCANNED);
      },
      true,
    );
  }

  // ---- real-time updates (Mercure)

  /** Shlink's `mercure-info`: the hub's URL and a JWT for the caller's visits (its tenant's; orphans of the domains it sees). */
  async mercureInfo(principal: Principal, hubUrl: string, tokens: MercureTokens) {
    const orphanDomains = await this.orphanDomainsOf(principal);
    return { mercureHubUrl: hubUrl, token: tokens.issue({ tenantId: principal.tenantId, orphanDomains }, MERCURE_TOKEN_SECONDS) };
  }

  /** The visited links of a tenant in Shlink's shape with their counts (one read of the counts for them all), keyed `domain/code`. */
  async mercureShortUrls(tenantId: string, ids: ReadonlyArray<{ domain: string; code: string }>): Promise<Map<string, unknown>> {
    const links = (await Promise.all(ids.map((id) => this.links.get(tenantId, id).catch(() => null)))).filter((l): l is Link => l !== null);
    const counts = new Map<string, ClickCount>();
    if (this.reader && links.length) {
      const among = links.map((l) => ({ domain: l.domain, code: l.code }));
      try {
        const [all, bots] = await Promise.all(
          (['include', 'only'] as const).map((b) => this.reader!.topLinks(tenantId, null, { ...this.allTime(), bots: b }, among.length, among)),
        );
        for (const r of all) counts.set(linkKey(r.domain, r.code), { total: r.clicks, bots: 0 });
        for (const r of bots) counts.set(linkKey(r.domain, r.code), { total: counts.get(linkKey(r.domain, r.code))?.total ?? r.clicks, bots: r.clicks });
      } catch (error) {
        this.logger.warn(`Shlink API: click counts of Mercure updates unavailable: ${(error as Error).message}`, 'ShlinkService');
      }
    }
    return new Map(links.map((l) => [linkKey(l.domain, l.code), shortUrlOf(l, this.ctx, counts.get(linkKey(l.domain, l.code)) ?? NO_CLICKS)]));
  }

  /** A visit in Shlink's shape, as the visit listings give it. */
  visitView(row: VisitRow, orphan: boolean) {
    return visitOf(row, { defaultDomain: this.config.links.defaultDomain, shortUrlOf: (d, c) => this.shortUrlOf(d, c) }, orphan);
  }

  // ---- deleting visits (docs/analytics.md, "Deleting visits")

  /** Deletes a link's visits everywhere the analytics store holds them; audited as `link.visits_deleted`. */
  async deleteLinkVisits(principal: Principal, audit: AuditContext, code: string, domain: string | undefined) {
    const id = { domain: this.domainOf(domain), code };
    await this.links.get(principal.tenantId, id); // 404 for a code that is not the tenant's
    const store = this.store();
    const deletedVisits = await this.unavailableOnFailure(() => store.deleteVisits({ kind: 'link', tenantId: principal.tenantId, ...id }));
    await this.audit.record(
      auditEntry(
        audit,
        { log: principal.tenantId, action: 'link.visits_deleted', target: { type: 'link', id: code, domain: id.domain }, details: { deletedVisits } },
        new Date(),
      ),
    );
    return { deletedVisits };
  }

  /** Deletes the orphan visits the caller sees (of its own domains; an operator's also the service's); audited as `orphan_visits.deleted`. */
  async deleteOrphanVisits(principal: Principal, audit: AuditContext) {
    const domains = await this.orphanDomainsOf(principal);
    const store = this.store();
    const deletedVisits = domains.length ? await this.unavailableOnFailure(() => store.deleteVisits({ kind: 'orphans', domains })) : 0;
    await this.audit.record(
      auditEntry(
        audit,
        { log: principal.tenantId, action: 'orphan_visits.deleted', target: { type: 'domain', id: null, domain: null }, details: { domains, deletedVisits } },
        new Date(),
      ),
    );
    return { deletedVisits };
  }

  async overview(principal: Principal) {
    const store = this.store();
    const range = (bots: RangeQuery['bots']): RangeQuery => ({ ...this.allTime(), bots });
    const [all, bots, orphanDomains] = await Promise.all([
      this.unavailableOnFailure(() => store.topLinks(principal.tenantId, null, range('include'), 1_000_000)),
      this.unavailableOnFailure(() => store.topLinks(principal.tenantId, null, range('only'), 1_000_000)),
      this.orphanDomainsOf(principal),
    ]);
    const [orphanAll, orphanBots] = await Promise.all(
      (['include', 'only'] as const).map((b) => this.unavailableOnFailure(() => store.orphans({ ...range(b), domains: orphanDomains, limit: 1 }))),
    );
    const nonOrphan = summaryOf({ total: sum(all.map((r) => r.clicks)), bots: sum(bots.map((r) => r.clicks)) });
    const orphan = summaryOf({ total: orphanAll.totals.visits, bots: orphanBots.totals.visits });
    return { visits: { nonOrphanVisits: nonOrphan, orphanVisits: orphan, visitsCount: nonOrphan.total, orphanVisitsCount: orphan.total } };
  }

  private async visitsPage(query: VisitsQuery, read: (from: number, to: number, bots: 'include' | 'exclude') => Promise<VisitRow[]>, orphan = false) {
    const now = Math.floor(Date.now() / 1000);
    const keepDays = this.config.analytics.retention.visitDays;
    const from = query.startDate ? Math.floor(new Date(query.startDate).getTime() / 1000) : keepDays > 0 ? now - keepDays * DAY : 0;
    const to = query.endDate ? Math.floor(new Date(query.endDate).getTime() / 1000) + 1 : now + 1;
    if (Number.isNaN(from) || Number.isNaN(to) || from >= to)
      throw new ShlinkError('INVALID_ARGUMENT', 400, 'Invalid data', 'startDate must be before endDate', { invalidElements: ['startDate', 'endDate'] });
    const rows = to > from ? await read(Math.max(0, from), to, query.excludeBots ? 'exclude' : 'include') : [];
    const visits = rows.map((r) => visitOf(r, { defaultDomain: this.config.links.defaultDomain, shortUrlOf: (d, c) => this.shortUrlOf(d, c) }, orphan));
    return { visits: paginate(visits, query.page ?? 1, query.itemsPerPage ?? 10) };
  }

  private readVisits(q: {
    tenantId: string;
    domain?: string;
    code?: string;
    links?: Array<{ domain: string; code: string }>;
    from: number;
    to: number;
    bots: 'include' | 'exclude';
  }) {
    const store = this.store();
    return this.unavailableOnFailure(() => store.visits({ ...q, after: null, limit: MAX_VISITS_SCANNED }));
  }

  // ---- domains

  async listDomains(principal: Principal) {
    const settings = await this.domains.list(principal);
    const byDomain = new Map(settings.map((s) => [s.domain, s]));
    const defaultDomain = this.config.links.defaultDomain;
    const names = [defaultDomain, ...settings.map((s) => s.domain).filter((d) => d !== defaultDomain)];
    return {
      domains: {
        data: names.map((domain) => ({ domain, isDefault: domain === defaultDomain, redirects: redirectsOf(byDomain.get(domain) ?? null) })),
        defaultRedirects: redirectsOf(byDomain.get(defaultDomain) ?? null),
      },
    };
  }

  async editRedirects(
    principal: Principal,
    audit: AuditContext,
    body: { domain: string; baseUrlRedirect?: string | null; regular404Redirect?: string | null; invalidShortUrlRedirect?: string | null },
  ) {
    const settings = await this.domains.update(principal, body.domain, redirectsEditOf(body), null, audit);
    return redirectsOf(settings);
  }

  // ---- health

  async health(): Promise<{ status: 'pass' | 'fail'; version: string; links: { about: string; project: string } }> {
    const results = await Promise.all(
      this.probes().map(
        async (p) =>
          p.critical === false ||
          (await Promise.race([
            p.check().then(
              () => true,
              () => false,
            ),
            timeout(2000),
          ])),
      ),
    );
    return {
      status: results.every(Boolean) ? 'pass' : 'fail',
      version: SHLINK_VERSION,
      links: { about: '/docs/shlink/openapi.json', project: 'https://shlink.io' },
    };
  }

  // ---- helpers

  /** Every link of the tenant the store finds for these filters, newest first, at most MAX_LINKS_SCANNED. */
  private async allLinks(tenantId: string, filters: { q?: string; tag?: string; domain?: string }): Promise<Link[]> {
    const out: Link[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.links.list(tenantId, { limit: PAGE, cursor, ...filters });
      out.push(...page.links);
      cursor = page.nextCursor;
    } while (cursor && out.length < MAX_LINKS_SCANNED);
    return out.slice(0, MAX_LINKS_SCANNED);
  }

  /** Clicks of each of the tenant's links (all time, bots counted apart); zeros while the OLAP store cannot be read. */
  private async clickCounts(tenantId: string): Promise<(link: Link) => ClickCount> {
    if (!this.reader) return () => NO_CLICKS;
    try {
      const [all, bots] = await Promise.all(
        (['include', 'only'] as const).map((b) => this.reader!.topLinks(tenantId, null, { ...this.allTime(), bots: b }, 1_000_000)),
      );
      const counts = new Map<string, { total: number; bots: number }>();
      for (const r of all) counts.set(linkKey(r.domain, r.code), { total: r.clicks, bots: 0 });
      for (const r of bots) {
        const c = counts.get(linkKey(r.domain, r.code)) ?? { total: r.clicks, bots: 0 };
        counts.set(linkKey(r.domain, r.code), { ...c, bots: r.clicks });
      }
      return (link) => counts.get(linkKey(link.domain, link.code)) ?? NO_CLICKS;
    } catch (error) {
      this.logger.warn(`Shlink API: click counts unavailable, answered as zero: ${(error as Error).message}`, 'ShlinkService');
      return () => NO_CLICKS;
    }
  }

  private allTime() {
    const end = (Math.floor(Date.now() / 1000 / DAY) + 2) * DAY;
    return { from: 0, to: end, granularity: 'day' as const };
  }

  private store(): ClickAggregateStore {
    if (!this.reader)
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'visits are not readable from this instance (no OLAP store)', { retryAfterSeconds: 5 });
    return this.reader;
  }

  private async unavailableOnFailure<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the visits store is unavailable; retry shortly', { retryAfterSeconds: 5 }, { cause: error });
    }
  }

  /** The domains whose visits a tenant sees: the default and shared ones, and its own. */
  private async visibleDomains(principal: Principal): Promise<string[]> {
    return [...new Set([this.config.links.defaultDomain, ...this.config.links.domains, ...(await this.tenants.domainsOf(principal.tenantId))])];
  }

  /** Orphan visits belong to no tenant: a tenant sees those of its own domains, an operator also the service's. */
  private async orphanDomainsOf(principal: Principal): Promise<string[]> {
    const own = await this.tenants.domainsOf(principal.tenantId);
    return principal.scopes.includes('admin') ? [...new Set([...this.config.links.domains, ...own])] : own;
  }
}

/**
 * The Shlink release whose API this one answers, as Shlink's own health does: Shlink's clients turn
 * screens on by the server's semantic version (the web component: IP, geolocation, query and date
 * redirect conditions, excluded tags, the domain filters, up to 5.0.0), and read anything else as 1.0.0.
 */
export const SHLINK_VERSION = '5.0.0';
/** How long a Mercure JWT of `mercure-info` is good for: Shlink's clients ask again when it is refused. */
export const MERCURE_TOKEN_SECONDS = 86_400;
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const timeout = (ms: number) => new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref());
