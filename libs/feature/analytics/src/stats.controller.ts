import { Controller, Get, Inject, Param, Query, Req, UseGuards } from '@nestjs/common';
import { AppConfig } from '@shortlink/config';
import { DomainError, ErrorCode } from '@shortlink/core';
import { CLICK_AGGREGATE_STORE, ClickAggregateStore, LinkStats, parseInstant } from '@shortlink/clicks-domain';
import { APP_CONFIG, ApiKeyGuard, AuthenticatedRequest, RequireScope } from '@shortlink/nest-platform';

const MAX_RANGE_SECONDS = 31 * 24 * 3600;

@Controller('api/v1/links')
@UseGuards(ApiKeyGuard)
@RequireScope('analytics:read')
export class StatsController {
  constructor(
    @Inject(CLICK_AGGREGATE_STORE) private readonly store: ClickAggregateStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get(':code/stats')
  async stats(@Req() req: AuthenticatedRequest, @Param('code') code: string, @Query('from') fromText?: string, @Query('to') toText?: string, @Query('domain') domainText?: string) {
    const now = Math.floor(Date.now() / 1000);
    const to = parseInstant('to', toText, Math.ceil((now + 1) / 60) * 60);
    const from = parseInstant('from', fromText, to - 3600);
    if (from >= to) throw new DomainError(ErrorCode.INVALID_TIME_RANGE, 'from must be before to', { from, to });
    if (to - from > MAX_RANGE_SECONDS) throw new DomainError(ErrorCode.INVALID_TIME_RANGE, 'the range may span at most 31 days', { from, to });
    const domain = (domainText ?? this.config.links.defaultDomain).toLowerCase();
    const stats: LinkStats = await this.store.stats({ tenantId: req.principal!.tenantId, domain, code, from, to });
    return {
      code,
      domain,
      from: new Date(from * 1000).toISOString(),
      to: new Date(to * 1000).toISOString(),
      granularity: 'minute',
      totals: stats.totals,
      series: stats.series.map((p) => ({ minute: new Date(p.minute * 1000).toISOString(), clicks: p.clicks, visitors: p.visitors })),
    };
  }
}
