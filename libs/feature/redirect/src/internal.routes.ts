import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { RedirectPipeline } from '@shortlink/read-path';
import { AdminRoutes } from '@shortlink/nest-platform';
import { LinkChangeListener } from './link-changes';

/** The redirect app's operator endpoints on its admin listener (`/internal/*`). */
@Injectable()
export class InternalRoutes implements OnModuleInit {
  constructor(
    @Inject(AdminRoutes) private readonly admin: AdminRoutes,
    @Inject(RedirectPipeline) private readonly pipeline: RedirectPipeline,
    @Inject(LinkChangeListener) private readonly changes: LinkChangeListener,
  ) {}

  onModuleInit(): void {
    this.admin.add('/internal/hot-links', this.hotLinks());
    this.admin.add('/internal/link-changes', this.changes.route());
  }

  /**
   * `GET /internal/hot-links?limit=` on the admin listener: the keys the sliding-window detector
   * marks hot on this instance (docs/design.md, "Redirect read path"), hottest first, with their
   * targets. Operators only: it lists links of every tenant.
   */
  private hotLinks() {
    return (query: URLSearchParams) => {
      const n = Math.min(Math.max(Number(query.get('limit')) || 100, 1), 5000);
      const links = this.pipeline.hotLinks(n).map((h) => ({ key: h.key, readsInWindow: h.reads, targetUrl: h.link?.targetUrl ?? null, pinnedInL1: !!h.link }));
      return { body: { breaker: this.pipeline.redisBreakerState, links } };
    };
  }
}
