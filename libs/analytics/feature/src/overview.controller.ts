import { Controller, Get, Inject, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { AppConfig } from '@shortlink/config';
import { BotFilter, CLICK_AGGREGATE_STORE, ClickAggregateStore, Granularity, RangeQuery, resolveRange, TopLinkRow } from '@shortlink/clicks-domain';
import { LINK_REPOSITORY, LinkRepository } from '@shortlink/links-domain';
import { APP_CONFIG, ApiKeyGuard, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { toCsv } from './csv';

const instant = z.string().max(40).meta({
  pattern: '^(\\d{1,10}|\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?)$',
  description: 'Epoch seconds or ISO 8601 with a zone; the range must be non-empty and not too long (INVALID_TIME_RANGE)',
});
const granularity = z.enum(['minute', 'hour', 'day']).meta({ description: 'Bucket size; default: the finest kept for the range' });
const bots = z.enum(['exclude', 'include', 'only']).meta({ description: 'Bot clicks (crawlers, link-preview fetchers): excluded by default' });
const domain = z
  .string()
  .max(253)
  .regex(/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:\d{1,5})?$/, 'must be a host name')
  .meta({ description: 'Only the links of this short domain; default: every domain' });

const topLink = z.object({
  domain: z.string(),
  code: z.string(),
  clicks: z.number().int(),
  visitors: z.number().int(),
  title: z.string().nullable().meta({ description: "The link's title; null: none, or the link is gone" }),
  url: z.string().nullable().meta({ description: "The link's target; null: the link is gone" }),
  status: z.enum(['active', 'disabled', 'expired']).nullable().meta({ description: 'null: the link is gone' }),
  deleted: z
    .boolean()
    .nullable()
    .meta({ description: 'true: the link was deleted since (its clicks are kept); null: the link store did not answer, so nothing is known of it' }),
});
export const overviewSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    granularity,
    bots,
    totals: z.object({
      clicks: z.number().int(),
      visitors: z.number().int().meta({ description: 'Unique visitors over every link and the whole range (one HLL union)' }),
    }),
    botClicks: z.number().int(),
    series: z.array(z.object({ time: z.string(), clicks: z.number().int(), visitors: z.number().int(), botClicks: z.number().int() })),
    links: z.array(topLink).meta({ description: 'The most clicked links of the range, with what the link store says of each now' }),
  })
  .meta({ id: 'TenantOverview' });

export type TopLinkView = z.infer<typeof topLink>;
type OverviewQuery = { from?: string; to?: string; granularity?: Granularity; bots?: BotFilter; domain?: string; limit?: number; format?: 'json' | 'csv' };
const iso = (s: number) => new Date(s * 1000).toISOString();

/**
 * The tenant-wide view (README, "Analytics"): the clicks of all the tenant's links together, as a
 * series with totals (unique visitors one union over every link), and the most clicked links with
 * their title, target and status as the link store has them now: a link deleted since is marked.
 */
@Controller('api/v1/stats')
@UseGuards(ApiKeyGuard)
export class OverviewController {
  constructor(
    @Inject(CLICK_AGGREGATE_STORE) private readonly store: ClickAggregateStore,
    @Inject(LINK_REPOSITORY) private readonly links: Pick<LinkRepository, 'findByCode'>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('overview')
  @Contract({
    summary: "All the tenant's links together: totals, a series and the top links with their titles",
    operationId: 'getTenantOverview',
    description:
      'Clicks and unique visitors of every link of the tenant (or of one domain) over the range, per bucket and in total, and the most ' +
      'clicked links with their title, target and status; a link deleted since is `deleted: true` (its clicks stay). ' +
      'CSV (?format=csv): the series.',
    tags: ['analytics'],
    scope: 'analytics:read',
    query: z.strictObject({
      from: instant.optional(),
      to: instant.optional(),
      granularity: granularity.optional(),
      domain: domain.optional(),
      bots: bots.optional(),
      limit: z.coerce.number().int().min(1).max(100).optional().meta({ description: 'Top links listed (default 10)' }),
      format: z.enum(['json', 'csv']).optional().meta({ description: 'csv: the series as text/csv' }),
    }),
    responses: {
      200: {
        description: 'Totals, series and top links',
        schema: overviewSchema,
        alternatives: { 'text/csv': z.string().meta({ description: 'The series as CSV with a header line' }) },
      },
    },
  })
  async overview(@Req() req: AuthenticatedRequest, @Query() q: OverviewQuery, @Res({ passthrough: true }) reply: FastifyReply) {
    const tenantId = req.principal!.tenantId;
    const now = Math.floor(Date.now() / 1000);
    const r: RangeQuery = {
      ...resolveRange({ from: q.from, to: q.to, granularity: q.granularity }, now, this.config.analytics.retention, 'hour'),
      bots: q.bots ?? 'exclude',
    };
    const onDomain = q.domain === undefined ? null : q.domain.toLowerCase();
    const [{ series, totals }, top] = await Promise.all([
      this.store.tenantSeries(tenantId, onDomain, r),
      this.store.topLinks(tenantId, onDomain, r, q.limit ?? 10),
    ]);
    const points = series.map((p) => ({ time: iso(p.time), clicks: p.clicks, visitors: p.visitors, botClicks: p.botClicks }));
    if (q.format === 'csv') {
      reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="overview.csv"');
      return toCsv(
        ['time', 'clicks', 'visitors', 'botClicks'],
        points.map((p) => [p.time, p.clicks, p.visitors, p.botClicks]),
      );
    }
    return {
      from: iso(r.from),
      to: iso(r.to),
      granularity: r.granularity,
      bots: r.bots,
      totals: { clicks: totals.clicks, visitors: totals.visitors },
      botClicks: totals.botClicks,
      series: points,
      links: await Promise.all(top.map((row) => describeTopLink(this.links, tenantId, row))),
    };
  }
}

/**
 * A top link with what the link store says of it now: its title, target and status; deleted when
 * the code is no longer a link of this tenant (gone, or made again by another tenant); unknown
 * (null) when the store does not answer.
 */
export async function describeTopLink(links: Pick<LinkRepository, 'findByCode'>, tenantId: string, row: TopLinkRow): Promise<TopLinkView> {
  const base = { domain: row.domain, code: row.code, clicks: row.clicks, visitors: row.visitors };
  try {
    const link = await links.findByCode({ domain: row.domain, code: row.code });
    if (!link || link.tenantId !== tenantId) return { ...base, title: null, url: null, status: null, deleted: true };
    return { ...base, title: link.title ?? null, url: link.targetUrl, status: link.status, deleted: false };
  } catch {
    return { ...base, title: null, url: null, status: null, deleted: null };
  }
}
