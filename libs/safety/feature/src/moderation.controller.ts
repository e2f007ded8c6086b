import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import type { AppConfig } from '@shortlink/config';
import type { AbuseReport } from '@shortlink/safety-domain';
import { APP_CONFIG, ApiKeyGuard, auditContextOf, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { ModerationDesk, ModerationItemView } from './moderation-desk';
import { healthData } from './safety-notices';
import {
  moderationActionBody,
  moderationCodeParams,
  moderationDomainQuery,
  moderationItemSchema,
  moderationQueueSchema,
  queueQuery,
  reportListSchema,
} from './safety.schemas';

const TAGS = ['admin'];

/**
 * The operators' moderation (docs/design.md, "Trust and safety"): the queue of reported links and
 * feed hits with their health, a link's reports, and the actions (clear, flag, ban, suspend the
 * tenant), each audited and reaching every redirect within the edit bound. The `admin` scope.
 */
@Controller('api/v1/admin/moderation')
@UseGuards(ApiKeyGuard)
export class ModerationController {
  constructor(
    @Inject(ModerationDesk) private readonly desk: ModerationDesk,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('queue')
  @Contract({
    summary: 'The moderation queue: links visitors reported or a threat feed hit, most recently changed first',
    operationId: 'moderationQueue',
    tags: TAGS,
    scope: 'admin',
    query: queueQuery,
    responses: { 200: { description: 'A page of the queue', schema: moderationQueueSchema } },
  })
  async queue(@Query() query: z.infer<typeof queueQuery>) {
    const page = await this.desk.queue(query.state, query.limit, query.cursor ?? null);
    return { items: page.items.map(itemView), nextCursor: page.nextCursor };
  }

  @Get('links/:code/reports')
  @Contract({
    summary: 'A link’s reports from visitors, newest first',
    operationId: 'moderationReports',
    tags: TAGS,
    scope: 'admin',
    params: moderationCodeParams,
    query: moderationDomainQuery,
    responses: { 200: { description: 'The reports (the last 100)', schema: reportListSchema } },
    errors: [404],
  })
  async reports(@Param('code') code: string, @Query() query: z.infer<typeof moderationDomainQuery>) {
    return { reports: (await this.desk.reports(this.id(code, query.domain))).map(reportView) };
  }

  @Post('links/:code/actions')
  @HttpCode(200)
  @Contract({
    summary: 'Act on a link: clear, flag, ban, or suspend its tenant',
    operationId: 'moderateLinkAction',
    description:
      'Recorded in the operators’ audit log and resolving the link’s queue item. Every redirect instance serves the change within 100 ms of this answer; a flag or a ban is told to the tenant (webhook `link.flagged`).',
    tags: TAGS,
    scope: 'admin',
    params: moderationCodeParams,
    query: moderationDomainQuery,
    body: moderationActionBody,
    responses: { 200: { description: 'The link’s queue item afterwards', schema: moderationItemSchema } },
    errors: [404],
  })
  async act(
    @Req() req: AuthenticatedRequest,
    @Param('code') code: string,
    @Query() query: z.infer<typeof moderationDomainQuery>,
    @Body() body: z.infer<typeof moderationActionBody>,
  ) {
    const reason = body.reason?.trim() || null;
    return itemView(await this.desk.act(this.id(code, query.domain), body.action, reason, auditContextOf(req)));
  }

  private id(code: string, domain: string | undefined) {
    return { domain: (domain ?? this.config.links.defaultDomain).toLowerCase(), code };
  }
}

const reportView = (r: AbuseReport) => ({ id: r.id, reason: r.reason, details: r.details, at: r.createdAt.toISOString() });

function itemView({ item, link, reports, tenantSuspended }: ModerationItemView): z.infer<typeof moderationItemSchema> {
  return {
    code: item.code,
    domain: item.domain,
    tenantId: item.tenantId,
    state: item.state,
    openedAt: item.openedAt.toISOString(),
    updatedAt: item.updatedAt.toISOString(),
    reports: { count: item.reports, lastAt: item.lastReportAt?.toISOString() ?? null, latest: reports.map(reportView) },
    hit: item.hit ? { state: item.hit.state, reason: item.hit.reason, source: item.hit.source, at: item.hit.at.toISOString() } : null,
    link: link
      ? {
          url: link.targetUrl,
          status: link.status,
          moderation: { state: link.moderation, reason: link.moderationReason, source: link.moderationSource ?? null },
          health: healthData(link.health),
          tenantSuspended,
        }
      : null,
    resolution: item.resolution ? { ...item.resolution, at: item.resolution.at.toISOString() } : null,
  };
}
