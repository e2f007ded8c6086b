import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { RedirectPipeline } from '@shortlink/read-path';
import { AdminRoutes, FrontDoor } from '@shortlink/nest-platform';
import { LinkChangeListener } from './link-changes';
import { RedirectHttpHandler } from './redirect-http.handler';

/** The redirect app's routes outside Nest's router: the hot route in front of Fastify, and its operator endpoints. */
@Injectable()
export class RedirectRoutes implements OnModuleInit {
  constructor(
    @Inject(FrontDoor) private readonly frontDoor: FrontDoor,
    @Inject(RedirectHttpHandler) private readonly handler: RedirectHttpHandler,
    @Inject(AdminRoutes) private readonly admin: AdminRoutes,
    @Inject(RedirectPipeline) private readonly pipeline: RedirectPipeline,
    @Inject(LinkChangeListener) private readonly changes: LinkChangeListener,
  ) {}

  onModuleInit(): void {
    // Redirects are answered at the node:http level, before Fastify sees them; the rest goes on.
    this.frontDoor.use(this.handler.tryHandle);
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
      const links = this.pipeline.hotLinks(n).map((h) => ({ key: h.key, readsInWindow: h.reads, targetUrl: h.link?.targetUrl ?? null, pinnedInL1: h.link !== null }));
      return { body: { breaker: this.pipeline.redisBreakerState, links } };
    };
  }
}
