import type { AdminHandler } from '@shortlink/nest-platform';
import { RedirectPipeline } from './redirect-pipeline';

/**
 * `GET /internal/hot-links?limit=` on the redirect's admin listener: the keys the sliding-window
 * detector marks hot on this instance (docs/design.md, "Redirect read path"), hottest first, with
 * their targets, and the Redis breaker's state. Operators only: it lists links of every tenant.
 */
export function hotLinksRoute(pipeline: RedirectPipeline): AdminHandler {
  return (query) => {
    const n = Math.min(Math.max(Number(query.get('limit')) || 100, 1), 5000);
    const links = pipeline.hotLinks(n).map((h) => ({ key: h.key, readsInWindow: h.reads, targetUrl: h.link?.targetUrl ?? null, pinnedInL1: !!h.link }));
    return { body: { breaker: pipeline.redisBreakerState, links } };
  };
}
