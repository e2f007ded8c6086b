import { Controller, Get, Inject, Query } from '@nestjs/common';
import { RedirectPipeline } from '@shortlink/links-domain';

@Controller('internal')
export class InternalController {
  constructor(@Inject(RedirectPipeline) private readonly pipeline: RedirectPipeline) {}

  /** Keys the sliding-window detector marks hot on this instance (seed 004), hottest first. */
  @Get('hot-links')
  hotLinks(@Query('limit') limit?: string) {
    const n = Math.min(Math.max(Number(limit) || 100, 1), 5000);
    return {
      breaker: this.pipeline.breakerState,
      links: this.pipeline.hotLinks(n).map((h) => ({ key: h.key, readsInWindow: h.reads, targetUrl: h.link?.targetUrl ?? null, pinnedInL1: h.link !== null })),
    };
  }
}
