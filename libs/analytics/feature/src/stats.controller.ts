import { Controller, Get, Inject, Param, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { AppConfig } from '@shortlink/config';
import {
  BotFilter,
  CLICK_AGGREGATE_STORE,
  ClickAggregateStore,
  cityOfValue,
  ConversionScope,
  Dimension,
  DIMENSIONS,
  Granularity,
  parseInstant,
  RangeQuery,
  resolveRange,
  VisitPosition,
  VisitRow,
} from '@shortlink/clicks-domain';
import { DomainError, ErrorCode } from '@shortlink/core';
import { APP_CONFIG, ApiKeyGuard, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { Principal, TenantService } from '@shortlink/tenants-domain';
import { toCsv } from './csv';

const TAGS = ['analytics'];
const granularity = z.enum(['minute', 'hour', 'day']).meta({ description: 'Bucket size; bounds are aligned outward to it' });
// The pattern is published (clients and fuzzers generate valid instants) but checked by the
// domain's parser, so every malformed or out-of-range instant is one code: INVALID_TIME_RANGE.
const instant = z.string().max(40).meta({
  pattern: '^(\\d{1,10}|\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?)$',
  description: 'Epoch seconds or ISO 8601 with a zone, e.g. 2026-12-03T10:00:00Z; the range must be non-empty and not too long (INVALID_TIME_RANGE)',
});
const domain = z
  .string()
  .max(253)
  .regex(/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:\d{1,5})?$/, 'must be a host name')
  .meta({ description: 'Short domain of the link; default: the default domain' });
const bots = z.enum(['exclude', 'include', 'only']).meta({ description: 'Bot clicks (crawlers, link-preview fetchers): excluded by default' });
const format = z.enum(['json', 'csv']).meta({ description: 'csv: the same rows as text/csv' });
const limit = z.coerce.number().int().min(1).max(1000);
const code = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 of A-Za-z0-9_-');
const range = { from: instant.optional(), to: instant.optional() };
/** At most this many links in `links` (a page of a list). */
const MAX_AMONG = 100;
const among = z
  .string()
  .max(MAX_AMONG * 320)
  .meta({
    description: `Only these links: up to ${MAX_AMONG} \`domain/code\`, comma-separated (a page of a list with its counts; a link without clicks is absent)`,
    example: 'sho.rt/abc1234,go.acme.example/spring',
  });

const totals = z.object({ clicks: z.number().int(), visitors: z.number().int().meta({ description: 'Unique visitors over the whole range (HLL union)' }) });
/** The stats answer's totals: clicks and visitors, and the link's conversions (docs/analytics.md, "Conversions"). */
const statsTotals = totals.extend({
  leads: z.number().int().meta({ description: 'Leads reported with a click id of this link (POST /api/v1/track/lead), each customer once' }),
  sales: z.number().int().meta({ description: 'Sales of the customers whose first lead came by this link, refunds included, each invoice once' }),
  revenue: z
    .record(z.string(), z.number().int())
    .meta({ description: "Sum of the sales' amounts per ISO 4217 currency, in minor units (refunds subtracted)", example: { EUR: 4900 } }),
});
const point = z.object({ time: z.string(), clicks: z.number().int(), visitors: z.number().int(), botClicks: z.number().int() });
const window = { from: z.string(), to: z.string(), granularity, bots };
const statsSchema = z
  .object({ code: z.string(), domain: z.string(), ...window, totals: statsTotals, botClicks: z.number().int(), series: z.array(point) })
  .meta({ id: 'LinkStats' });
const breakdownSchema = z
  .object({
    code: z.string(),
    domain: z.string(),
    dimension: z.enum(DIMENSIONS),
    ...window,
    totals,
    items: z.array(
      z.object({
        value: z.string().nullable().meta({ description: 'null: none (direct, unknown country or city, no variant); sources: qr or link; cities: the city' }),
        country: z.string().optional().meta({ description: 'cities: the country of the city (ISO 3166-1 alpha-2)' }),
        region: z.string().nullable().optional().meta({ description: 'cities: its region (state, province); null: unknown' }),
        clicks: z.number().int(),
        visitors: z.number().int(),
        share: z.number(),
      }),
    ),
  })
  .meta({ id: 'Breakdown' });
const topLinksSchema = z
  .object({ ...window, links: z.array(z.object({ domain: z.string(), code: z.string(), clicks: z.number().int(), visitors: z.number().int() })) })
  .meta({ id: 'TopLinks' });
const revenue = z
  .record(z.string(), z.number().int())
  .meta({ description: "Sum of the sales' amounts per ISO 4217 currency, in minor units (refunds subtracted)", example: { EUR: 4900 } });
const rate = z.number().nullable().meta({ description: 'A share between 0 and 1 (4 decimals); null when the step before counted nothing' });
const funnelRow = z.object({
  domain: z.string(),
  code: z.string(),
  clicks: z.number().int().meta({ description: 'Human clicks over the range (bots excluded)' }),
  leads: z.number().int(),
  sales: z.number().int(),
  revenue,
  leadRate: rate.meta({ description: 'leads / clicks; null without clicks' }),
  saleRate: rate.meta({ description: 'sales / leads; null without leads' }),
});
const funnelSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    granularity,
    totals: z.object({ clicks: z.number().int(), leads: z.number().int(), sales: z.number().int(), revenue, leadRate: rate, saleRate: rate }),
    links: z.array(funnelRow),
  })
  .meta({ id: 'ConversionFunnel' });
/** Conversions per value of a dimension of their clicks, beside the clicks of that value. */
const conversionItem = z.object({
  value: z.string().nullable().meta({ description: 'null: none or unknown (direct, unknown country, no variant, a click whose visit was not found)' }),
  country: z.string().optional().meta({ description: 'cities: the country of the city' }),
  region: z.string().nullable().optional().meta({ description: 'cities: its region; null: unknown' }),
  clicks: z.number().int().meta({ description: 'Human clicks with this value over the range (bots excluded)' }),
  leads: z.number().int(),
  sales: z.number().int(),
  revenue,
  leadRate: rate.meta({ description: 'leads / clicks; null without clicks' }),
  saleRate: rate.meta({ description: 'sales / leads; null without leads' }),
});
const funnelTotals = z.object({ clicks: z.number().int(), leads: z.number().int(), sales: z.number().int(), revenue, leadRate: rate, saleRate: rate });
const conversionScope = {
  code: code.optional().meta({ description: 'One link (with `domain`, default: the default domain); without it, all the links of `domain`, or of the tenant' }),
  domain: domain.optional(),
};
const conversionBreakdownSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    granularity,
    dimension: z.enum(DIMENSIONS),
    domain: z.string().nullable(),
    code: z.string().nullable(),
    totals: funnelTotals,
    items: z.array(conversionItem),
  })
  .meta({ id: 'ConversionBreakdown' });
const conversionSeriesSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    granularity,
    domain: z.string().nullable(),
    code: z.string().nullable(),
    totals: funnelTotals,
    series: z.array(
      z.object({
        time: z.string(),
        clicks: z.number().int().meta({ description: 'Human clicks (bots excluded)' }),
        leads: z.number().int(),
        sales: z.number().int(),
        revenue,
      }),
    ),
  })
  .meta({ id: 'ConversionSeries' });
/** Revenue as one CSV cell: `EUR 2500 USD 1500`. */
const revenueCell = (revenue: Readonly<Record<string, number>>) =>
  Object.entries(revenue)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([c, n]) => `${c} ${n}`)
    .join(' ');
const rateOf = (n: number, of: number) => (of > 0 ? Math.round((n / of) * 10_000) / 10_000 : null);
const sumRevenue = (into: Record<string, number>, add: Readonly<Record<string, number>>) => {
  for (const [c, n] of Object.entries(add)) into[c] = (into[c] ?? 0) + n;
  return into;
};
const orphansSchema = z
  .object({
    ...window,
    totals: z.object({ visits: z.number().int(), visitors: z.number().int() }),
    series: z.array(z.object({ time: z.string(), domain: z.string(), visits: z.number().int(), visitors: z.number().int() })),
    codes: z.array(z.object({ domain: z.string(), code: z.string(), visits: z.number().int() })),
  })
  .meta({ id: 'OrphanVisits' });
const visitSchema = z.object({
  id: z.string().meta({ description: 'Stable id of the visit' }),
  time: z.string().meta({ description: 'ISO 8601, milliseconds' }),
  country: z.string().nullable(),
  region: z.string().nullable(),
  city: z.string().nullable(),
  referer: z.string().nullable().meta({ description: 'Referer host; null: direct' }),
  device: z.string(),
  browser: z.string(),
  os: z.string(),
  variant: z.number().int().nullable().meta({ description: 'A/B variant index; null: none' }),
  source: z.enum(['qr', 'link']).meta({ description: "qr: by the URL of the link's QR code (`/{code}/~`); link: any other way" }),
  bot: z.boolean(),
  visitor: z.string().meta({ description: 'Visitor id: a keyed hash, a new one every UTC day; never the IP address' }),
});
const visitsSchema = z
  .object({
    code: z.string(),
    domain: z.string(),
    bots,
    visits: z.array(visitSchema),
    next: z.string().nullable().meta({ description: 'Cursor of the next (older) page; null: the last page' }),
  })
  .meta({ id: 'Visits' });
const cursor = z.string().max(200).meta({ description: 'The `next` of the previous page (INVALID_CURSOR otherwise)' });
const VISIT_COLUMNS = ['id', 'time', 'country', 'region', 'city', 'referer', 'device', 'browser', 'os', 'variant', 'source', 'bot', 'visitor'] as const;
const csv = z.string().meta({ description: 'The rows as CSV with a header line' });
const ok = (description: string, schema: z.ZodType) => ({ 200: { description, schema, alternatives: { 'text/csv': csv } } });

type RangeParams = { from?: string; to?: string; granularity?: Granularity; bots?: BotFilter; format?: 'json' | 'csv' };
const iso = (s: number) => new Date(s * 1000).toISOString();
/** Values read per side (clicks, conversions) by a conversion breakdown before they are merged and cut to `limit`. */
const VALUES_READ = 1000;

/**
 * The tenant-scoped query API (docs/analytics.md, "Reading"): series, totals with unique visitors
 * over any range, breakdowns, top links and orphan visits, each as JSON or CSV. Ranges are parsed
 * strictly and aligned to the granularity; every error is problem+json.
 */
@Controller('api/v1')
@UseGuards(ApiKeyGuard)
export class StatsController {
  constructor(
    @Inject(CLICK_AGGREGATE_STORE) private readonly store: ClickAggregateStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(TenantService) private readonly tenants: TenantService,
  ) {}

  @Get('links/:code/stats')
  @Contract({
    summary: 'Clicks and unique visitors of a link per minute, hour or day; its leads, sales and revenue in the totals',
    operationId: 'getLinkStats',
    tags: TAGS,
    scope: 'analytics:read',
    params: z.strictObject({ code }),
    query: z.strictObject({ ...range, granularity: granularity.optional(), domain: domain.optional(), bots: bots.optional(), format: format.optional() }),
    responses: ok('Series and totals', statsSchema),
  })
  async stats(
    @Req() req: AuthenticatedRequest,
    @Param('code') linkCode: string,
    @Query() q: RangeParams & { domain?: string },
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const r = this.range(q, 'exclude', q.granularity ?? 'minute');
    const d = this.domainOf(q.domain);
    const scope = { tenantId: req.principal!.tenantId, domain: d, code: linkCode };
    const [{ series, totals: t }, c] = await Promise.all([this.store.series(scope, r), this.store.conversionTotals(scope, r)]);
    const points = series.map((p) => ({ time: iso(p.time), clicks: p.clicks, visitors: p.visitors, botClicks: p.botClicks }));
    if (q.format === 'csv')
      return this.csv(
        reply,
        `${linkCode}-stats`,
        ['time', 'clicks', 'visitors', 'botClicks'],
        points.map((p) => [p.time, p.clicks, p.visitors, p.botClicks]),
      );
    const totals = { clicks: t.clicks, visitors: t.visitors, leads: c.leads, sales: c.sales, revenue: c.revenue };
    return { code: linkCode, domain: d, ...this.window(r), totals, botClicks: t.botClicks, series: points };
  }

  @Get('links/:code/breakdown/:dimension')
  @Contract({
    summary: 'Clicks of a link by country, city, referer, device, browser, OS, A/B variant or source (QR code or link)',
    operationId: 'getLinkBreakdown',
    tags: TAGS,
    scope: 'analytics:read',
    params: z.strictObject({ code, dimension: z.enum(DIMENSIONS) }),
    query: z.strictObject({
      ...range,
      granularity: granularity.optional(),
      limit: limit.optional(),
      domain: domain.optional(),
      bots: bots.optional(),
      format: format.optional(),
    }),
    responses: ok('The values with the most clicks first', breakdownSchema),
  })
  async breakdown(
    @Req() req: AuthenticatedRequest,
    @Param('code') linkCode: string,
    @Param('dimension') dimension: Dimension,
    @Query() q: RangeParams & { domain?: string; limit?: number },
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const r = this.range(q, 'exclude');
    const scope = { tenantId: req.principal!.tenantId, domain: this.domainOf(q.domain), code: linkCode };
    const [rows, { totals: t }] = await Promise.all([this.store.breakdown(scope, r, dimension, q.limit ?? 10), this.store.series(scope, r)]);
    const items = rows.map((row) => ({
      ...valueOf(dimension, row.value),
      clicks: row.clicks,
      visitors: row.visitors,
      share: t.clicks > 0 ? Math.round((row.clicks / t.clicks) * 10_000) / 10_000 : 0,
    }));
    if (q.format === 'csv') {
      const name = `${linkCode}-${dimension}`;
      if (dimension === 'cities') {
        const columns = ['value', 'country', 'region', 'clicks', 'visitors', 'share'];
        return this.csv(
          reply,
          name,
          columns,
          items.map((i) => [i.value, i.country ?? null, i.region ?? null, i.clicks, i.visitors, i.share]),
        );
      }
      return this.csv(
        reply,
        name,
        ['value', 'clicks', 'visitors', 'share'],
        items.map((i) => [i.value, i.clicks, i.visitors, i.share]),
      );
    }
    return { code: linkCode, domain: scope.domain, dimension, ...this.window(r), totals: { clicks: t.clicks, visitors: t.visitors }, items };
  }

  @Get('stats/top-links')
  @Contract({
    summary: "The tenant's links with the most clicks",
    operationId: 'getTopLinks',
    tags: TAGS,
    scope: 'analytics:read',
    query: z.strictObject({
      ...range,
      granularity: granularity.optional(),
      limit: limit.optional(),
      domain: domain.optional(),
      links: among.optional(),
      bots: bots.optional(),
      format: format.optional(),
    }),
    responses: ok('Links, most clicked first', topLinksSchema),
  })
  async topLinks(
    @Req() req: AuthenticatedRequest,
    @Query() q: RangeParams & { domain?: string; limit?: number; links?: string },
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const r = this.range(q, 'exclude');
    const only = q.links === undefined ? undefined : amongOf(q.links);
    const links = await this.store.topLinks(req.principal!.tenantId, q.domain === undefined ? null : q.domain.toLowerCase(), r, q.limit ?? 10, only);
    if (q.format === 'csv')
      return this.csv(
        reply,
        'top-links',
        ['domain', 'code', 'clicks', 'visitors'],
        links.map((l) => [l.domain, l.code, l.clicks, l.visitors]),
      );
    return { ...this.window(r), links };
  }

  @Get('stats/conversions')
  @Contract({
    summary: "The conversion funnel of the tenant's links: clicks → leads → sales, revenue per currency, conversion rates",
    operationId: 'getConversionFunnel',
    description:
      'The links with leads or sales over the range, most sales first, each with its clicks (bots excluded), leads, sales, revenue per currency and the rates leads/clicks and sales/leads; `totals` over those links (docs/analytics.md, "Conversions").',
    tags: TAGS,
    scope: 'analytics:read',
    query: z.strictObject({ ...range, granularity: granularity.optional(), limit: limit.optional(), domain: domain.optional(), format: format.optional() }),
    responses: ok('Links with conversions, most sales first', funnelSchema),
  })
  async funnel(
    @Req() req: AuthenticatedRequest,
    @Query() q: RangeParams & { domain?: string; limit?: number },
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const r = this.range(q, 'exclude', q.granularity ?? 'day');
    const tenantId = req.principal!.tenantId;
    const d = q.domain === undefined ? null : q.domain.toLowerCase();
    const converted = await this.store.conversionsByLink(tenantId, d, r, q.limit ?? 100);
    const clicks = converted.length
      ? await this.store.topLinks(
          tenantId,
          d,
          r,
          converted.length,
          converted.map((l) => ({ domain: l.domain, code: l.code })),
        )
      : [];
    const clicksOf = new Map(clicks.map((l) => [`${l.domain}/${l.code}`, l.clicks]));
    const links = converted.map((l) => {
      const c = clicksOf.get(`${l.domain}/${l.code}`) ?? 0;
      return {
        domain: l.domain,
        code: l.code,
        clicks: c,
        leads: l.leads,
        sales: l.sales,
        revenue: l.revenue,
        leadRate: rateOf(l.leads, c),
        saleRate: rateOf(l.sales, l.leads),
      };
    });
    if (q.format === 'csv')
      return this.csv(
        reply,
        'conversions',
        ['domain', 'code', 'clicks', 'leads', 'sales', 'revenue', 'leadRate', 'saleRate'],
        links.map((l) => [l.domain, l.code, l.clicks, l.leads, l.sales, revenueCell(l.revenue), l.leadRate, l.saleRate]),
      );
    const t = links.reduce(
      (a, l) => ({ clicks: a.clicks + l.clicks, leads: a.leads + l.leads, sales: a.sales + l.sales, revenue: sumRevenue(a.revenue, l.revenue) }),
      { clicks: 0, leads: 0, sales: 0, revenue: {} as Record<string, number> },
    );
    const w = this.window(r);
    return {
      from: w.from,
      to: w.to,
      granularity: w.granularity,
      totals: { ...t, leadRate: rateOf(t.leads, t.clicks), saleRate: rateOf(t.sales, t.leads) },
      links,
    };
  }

  @Get('stats/conversions/breakdown/:dimension')
  @Contract({
    summary:
      'Conversions by the dimensions of their clicks: clicks → leads → sales, revenue per currency and rates per country, city, referer, device, browser, OS, A/B variant or source',
    operationId: 'getConversionBreakdown',
    description:
      "Each lead and sale counts under the value its click had (copied from the click's visit when it was counted; null when the visit was not found), beside the clicks of that value: which variant converts, not only which one gets clicks. " +
      'Of one link (`code`), one domain or all the tenant\'s links; most sales first, then leads, then clicks (docs/analytics.md, "Conversions").',
    tags: TAGS,
    scope: 'analytics:read',
    params: z.strictObject({ dimension: z.enum(DIMENSIONS) }),
    query: z.strictObject({ ...range, granularity: granularity.optional(), limit: limit.optional(), ...conversionScope, format: format.optional() }),
    responses: ok('Values with their clicks and conversions, most sales first', conversionBreakdownSchema),
  })
  async conversionBreakdown(
    @Req() req: AuthenticatedRequest,
    @Param('dimension') dimension: Dimension,
    @Query() q: RangeParams & { domain?: string; code?: string; limit?: number },
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const r = this.range(q, 'exclude');
    const scope = this.conversionScopeOf(req, q);
    // Every value of the range (up to a bound far above a useful table), then merged, ordered and cut.
    const [clicks, converted, series] = await Promise.all([
      this.store.scopeBreakdown(scope, r, dimension, VALUES_READ),
      this.store.conversionBreakdown(scope, r, dimension, VALUES_READ),
      this.clickSeriesOf(scope, r),
    ]);
    const byValue = new Map<string, { value: string; clicks: number; leads: number; sales: number; revenue: Record<string, number> }>();
    const entry = (value: string) => {
      let e = byValue.get(value);
      if (!e) byValue.set(value, (e = { value, clicks: 0, leads: 0, sales: 0, revenue: {} }));
      return e;
    };
    for (const row of clicks) entry(row.value).clicks += row.clicks;
    for (const row of converted) Object.assign(entry(row.value), { leads: row.leads, sales: row.sales, revenue: { ...row.revenue } });
    const items = [...byValue.values()]
      .sort((a, b) => b.sales - a.sales || b.leads - a.leads || b.clicks - a.clicks || a.value.localeCompare(b.value))
      .slice(0, q.limit ?? 20)
      .map((e) => ({
        ...valueOf(dimension, e.value),
        clicks: e.clicks,
        leads: e.leads,
        sales: e.sales,
        revenue: e.revenue,
        leadRate: rateOf(e.leads, e.clicks),
        saleRate: rateOf(e.sales, e.leads),
      }));
    if (q.format === 'csv') {
      const cities = dimension === 'cities';
      return this.csv(
        reply,
        `conversions-${dimension}`,
        ['value', ...(cities ? ['country', 'region'] : []), 'clicks', 'leads', 'sales', 'revenue', 'leadRate', 'saleRate'],
        items.map((i) => [
          i.value,
          ...(cities ? [i.country ?? null, i.region ?? null] : []),
          i.clicks,
          i.leads,
          i.sales,
          revenueCell(i.revenue),
          i.leadRate,
          i.saleRate,
        ]),
      );
    }
    const t = converted.reduce((a, c) => ({ leads: a.leads + c.leads, sales: a.sales + c.sales, revenue: sumRevenue(a.revenue, c.revenue) }), {
      leads: 0,
      sales: 0,
      revenue: {} as Record<string, number>,
    });
    const clickTotal = series.totals.clicks;
    return {
      from: iso(r.from),
      to: iso(r.to),
      granularity: r.granularity,
      dimension,
      domain: scope.domain,
      code: scope.code ?? null,
      totals: { clicks: clickTotal, ...t, leadRate: rateOf(t.leads, clickTotal), saleRate: rateOf(t.sales, t.leads) },
      items,
    };
  }

  @Get('stats/conversions/series')
  @Contract({
    summary: "Clicks, leads, sales and revenue per currency per minute, hour or day, of a link, a domain or all the tenant's links",
    operationId: 'getConversionSeries',
    description: 'Buckets without clicks or conversions are absent; clicks exclude bots (docs/analytics.md, "Conversions").',
    tags: TAGS,
    scope: 'analytics:read',
    query: z.strictObject({ ...range, granularity: granularity.optional(), ...conversionScope, format: format.optional() }),
    responses: ok('The series and its totals', conversionSeriesSchema),
  })
  async conversionSeries(
    @Req() req: AuthenticatedRequest,
    @Query() q: RangeParams & { domain?: string; code?: string },
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const r = this.range(q, 'exclude', q.granularity ?? 'hour');
    const scope = this.conversionScopeOf(req, q);
    const [clicks, converted] = await Promise.all([this.clickSeriesOf(scope, r), this.store.conversionSeries(scope, r)]);
    const points = new Map<number, { clicks: number; leads: number; sales: number; revenue: Record<string, number> }>();
    for (const p of clicks.series) if (p.clicks > 0) points.set(p.time, { clicks: p.clicks, leads: 0, sales: 0, revenue: {} });
    for (const c of converted) {
      const p = points.get(c.time) ?? { clicks: 0, leads: 0, sales: 0, revenue: {} };
      points.set(c.time, { ...p, leads: c.leads, sales: c.sales, revenue: { ...c.revenue } });
    }
    const series = [...points].sort((a, b) => a[0] - b[0]).map(([time, p]) => ({ time: iso(time), ...p }));
    if (q.format === 'csv')
      return this.csv(
        reply,
        'conversions-series',
        ['time', 'clicks', 'leads', 'sales', 'revenue'],
        series.map((p) => [p.time, p.clicks, p.leads, p.sales, revenueCell(p.revenue)]),
      );
    const t = converted.reduce((a, c) => ({ leads: a.leads + c.leads, sales: a.sales + c.sales, revenue: sumRevenue(a.revenue, c.revenue) }), {
      leads: 0,
      sales: 0,
      revenue: {} as Record<string, number>,
    });
    const clickTotal = clicks.totals.clicks;
    return {
      from: iso(r.from),
      to: iso(r.to),
      granularity: r.granularity,
      domain: scope.domain,
      code: scope.code ?? null,
      totals: { clicks: clickTotal, ...t, leadRate: rateOf(t.leads, clickTotal), saleRate: rateOf(t.sales, t.leads) },
      series,
    };
  }

  @Get('stats/orphans')
  @Contract({
    summary: 'Visits to codes that do not exist (scanners, typos), per domain',
    operationId: 'getOrphanVisits',
    description:
      "Orphan visits belong to no tenant: a tenant sees those of its own domains, a key with the admin scope those of the service's shared domains too. " +
      'Bots are included by default: most orphan visits are scanners.',
    tags: TAGS,
    scope: 'analytics:read',
    query: z.strictObject({
      ...range,
      granularity: granularity.optional(),
      limit: limit.optional(),
      domain: domain.optional(),
      bots: bots.optional(),
      format: format.optional(),
    }),
    responses: ok('Series per domain and the most visited unknown codes', orphansSchema),
  })
  async orphans(
    @Req() req: AuthenticatedRequest,
    @Query() q: RangeParams & { domain?: string; limit?: number },
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const r = this.range(q, 'include');
    const visible = await this.orphanDomainsOf(req.principal!);
    const domains = q.domain === undefined ? visible : visible.filter((d) => d === q.domain!.toLowerCase());
    const result = await this.store.orphans({ ...r, domains, limit: q.limit ?? 20 });
    const series = result.series.map((p) => ({ time: iso(p.time), domain: p.domain, visits: p.visits, visitors: p.visitors }));
    if (q.format === 'csv')
      return this.csv(
        reply,
        'orphans',
        ['time', 'domain', 'visits', 'visitors'],
        series.map((p) => [p.time, p.domain, p.visits, p.visitors]),
      );
    return { ...this.window(r), totals: result.totals, series, codes: result.codes };
  }

  @Get('links/:code/visits')
  @Contract({
    summary: 'The raw visits of a link, newest first, page by page',
    operationId: 'listLinkVisits',
    description:
      'One row per click (kept ANALYTICS_VISIT_RETENTION_DAYS days): time, country, region and city where known, referer host, device, browser, OS, ' +
      'A/B variant, source, bot flag and the daily visitor id; never the IP address. JSON, or CSV with Accept: text/csv or ?format=csv.',
    tags: TAGS,
    scope: 'analytics:read',
    params: z.strictObject({ code }),
    query: z.strictObject({
      ...range,
      cursor: cursor.optional(),
      limit: limit.optional(),
      domain: domain.optional(),
      bots: bots.optional(),
      format: format.optional(),
    }),
    responses: ok('A page of visits and the cursor of the next', visitsSchema),
  })
  async visits(
    @Req() req: AuthenticatedRequest,
    @Param('code') linkCode: string,
    @Query() q: { from?: string; to?: string; cursor?: string; limit?: number; domain?: string; bots?: BotFilter; format?: 'json' | 'csv' },
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const now = Math.floor(Date.now() / 1000);
    const to = parseInstant('to', q.to, now + 1);
    // Older visits are gone (retention): without a bound, a page of a quiet link would search back to 1970.
    const from = parseInstant('from', q.from, now - this.config.analytics.retention.visitDays * 86_400);
    if (from >= to) throw new DomainError(ErrorCode.INVALID_TIME_RANGE, 'from must be before to', { from, to });
    const pageSize = q.limit ?? 100;
    const d = this.domainOf(q.domain);
    const bots = q.bots ?? 'exclude';
    const rows = await this.store.visits({
      tenantId: req.principal!.tenantId,
      domain: d,
      code: linkCode,
      from,
      to,
      bots,
      after: q.cursor === undefined ? null : decodeCursor(q.cursor),
      limit: pageSize + 1,
    });
    const page = rows.slice(0, pageSize).map(visitView);
    const next = rows.length > pageSize ? encodeCursor(rows[pageSize - 1]) : null;
    if (next !== null) reply.header('link', `<?cursor=${next}>; rel="next"`);
    if (q.format === 'csv' || (q.format === undefined && wantsCsv(req.headers.accept))) {
      return this.csv(
        reply,
        `${linkCode}-visits`,
        [...VISIT_COLUMNS],
        page.map((v) => VISIT_COLUMNS.map((c) => (typeof v[c] === 'boolean' ? String(v[c]) : v[c]))),
      );
    }
    return { code: linkCode, domain: d, bots, visits: page, next };
  }

  /**
   * Whose orphan visits a caller may see (docs/design.md, "Security model"): a visit to a code that
   * does not exist on a tenant's own domain is that tenant's; on a shared domain it is the operator's
   * (an `admin` key), since the code may be one another tenant deleted.
   */
  private async orphanDomainsOf(principal: Principal): Promise<string[]> {
    let own: string[];
    try {
      own = await this.tenants.domainsOf(principal.tenantId);
    } catch (error) {
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the tenant database is unavailable; retry shortly', { retryAfterSeconds: 1 }, { cause: error });
    }
    return principal.scopes.includes('admin') ? [...new Set([...this.config.links.domains, ...own])] : own;
  }

  /** One link (`code` on `domain`, default the default domain), one domain, or the whole tenant. */
  private conversionScopeOf(req: AuthenticatedRequest, q: { domain?: string; code?: string }): ConversionScope {
    const tenantId = req.principal!.tenantId;
    if (q.code !== undefined) return { tenantId, domain: this.domainOf(q.domain), code: q.code };
    return { tenantId, domain: q.domain === undefined ? null : q.domain.toLowerCase() };
  }

  /** The human clicks of a conversion scope, series and totals. */
  private clickSeriesOf(scope: ConversionScope, r: RangeQuery) {
    return scope.code !== undefined
      ? this.store.series({ tenantId: scope.tenantId, domain: scope.domain!, code: scope.code }, r)
      : this.store.tenantSeries(scope.tenantId, scope.domain, r);
  }

  private range(q: RangeParams, defaultBots: BotFilter, granularityWhenAbsent?: Granularity): RangeQuery {
    const now = Math.floor(Date.now() / 1000);
    const r = resolveRange({ from: q.from, to: q.to, granularity: q.granularity ?? granularityWhenAbsent }, now, this.config.analytics.retention, 'hour');
    return { ...r, bots: q.bots ?? defaultBots };
  }

  private window(r: RangeQuery) {
    return { from: iso(r.from), to: iso(r.to), granularity: r.granularity, bots: r.bots };
  }

  private domainOf(given: string | undefined): string {
    return (given ?? this.config.links.defaultDomain).toLowerCase();
  }

  private csv(reply: FastifyReply, name: string, header: string[], rows: Array<Array<string | number | null>>): string {
    reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name.replace(/[^A-Za-z0-9_-]/g, '_')}.csv"`);
    return toCsv(header, rows);
  }
}

/**
 * A breakdown value as the API shows it: null for none; a city with its country and region (two
 * Springfields are two rows), as the store keeps it (cityValueOf).
 */
function valueOf(dimension: Dimension, value: string): { value: string | null; country?: string; region?: string | null } {
  if (value === '') return { value: null };
  if (dimension !== 'cities') return { value };
  const city = cityOfValue(value);
  return city === null ? { value } : { value: city.city, country: city.country, region: city.region };
}

/** A visit as the API shows it. */
function visitView(v: VisitRow) {
  return {
    id: v.id,
    time: new Date(v.time).toISOString(),
    country: v.country,
    region: v.region,
    city: v.city,
    referer: v.refererHost,
    device: v.device,
    browser: v.browser,
    os: v.os,
    variant: v.variant,
    source: v.source,
    bot: v.bot,
    visitor: String(v.visitor),
  };
}

/** CSV when the client asks for it before (or instead of) JSON. */
function wantsCsv(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((t) => t.split(';')[0].trim().toLowerCase());
  const csvAt = types.indexOf('text/csv');
  const jsonAt = types.indexOf('application/json');
  return csvAt >= 0 && (jsonAt < 0 || csvAt < jsonAt);
}

/** The position after the last visit of a page, opaque to clients: `<epoch ms>.<id>` in base64url. */
function encodeCursor(v: VisitPosition): string {
  return Buffer.from(`${v.time}.${v.id}`).toString('base64url');
}

function decodeCursor(cursor: string): VisitPosition {
  const m = /^(\d{1,16})\.(\d{1,20})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m || BigInt(m[2]) > 0xffff_ffff_ffff_ffffn || Number(m[1]) > 0xffff_ffff * 1000 + 999) {
    throw new DomainError(ErrorCode.INVALID_CURSOR, 'cursor must be the next of a previous page');
  }
  return { time: Number(m[1]), id: m[2] };
}

/** `domain/code,domain/code` as links (the domain is before the first "/": a code may have more); anything else is VALIDATION_FAILED. */
function amongOf(text: string): Array<{ domain: string; code: string }> {
  const items = text.split(',').filter(Boolean);
  const links = items.map((item) => {
    const slash = item.indexOf('/');
    return { domain: item.slice(0, slash).toLowerCase(), code: item.slice(slash + 1) };
  });
  const host = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;
  const legacyCode = /^[A-Za-z0-9_-]{1,64}(\/[A-Za-z0-9_-]{1,64})*$/;
  if (items.length > MAX_AMONG || links.some((l) => !host.test(l.domain) || l.code.length > 64 || !legacyCode.test(l.code)))
    throw new DomainError(ErrorCode.VALIDATION_FAILED, `links must be up to ${MAX_AMONG} domain/code, comma-separated`, { field: 'links' });
  return links;
}
