import type { ClickAggregateStore } from '@shortlink/clicks-domain';
import type { Link } from '@shortlink/links-domain';

const DAY = 86_400;
/** What the answers say when the click counts are not reachable from the generation app. */
export const CLICKS_UNAVAILABLE = 'click counts are not available to this instance (analytics store unreachable); clicks are reported as 0';

/** Click counts of the analytics store as the YOURLS API reports them; zeros with a note when the store is not reachable. */
export class LinkClicks {
  constructor(private readonly store: ClickAggregateStore | null) {}

  /** Clicks of a link since it was created (bots excluded, as our stats count). */
  async total(link: Link, nowMs = Date.now()): Promise<{ clicks: number; note: string | null }> {
    if (!this.store) return { clicks: 0, note: CLICKS_UNAVAILABLE };
    try {
      const { totals } = await this.store.series({ tenantId: link.tenantId, domain: link.domain, code: link.code }, allTime(link.createdAt.getTime(), nowMs));
      return { clicks: totals.clicks, note: null };
    } catch {
      return { clicks: 0, note: CLICKS_UNAVAILABLE };
    }
  }

  /** Clicks per link of a tenant (the `limit` most clicked), keyed `domain/code`. */
  async byLink(tenantId: string, limit: number, nowMs = Date.now()): Promise<{ clicks: Map<string, number>; note: string | null }> {
    if (!this.store) return { clicks: new Map(), note: CLICKS_UNAVAILABLE };
    try {
      const rows = await this.store.topLinks(tenantId, null, allTime(0, nowMs), limit);
      return { clicks: new Map(rows.map((r) => [`${r.domain}/${r.code}`, r.clicks])), note: null };
    } catch {
      return { clicks: new Map(), note: CLICKS_UNAVAILABLE };
    }
  }
}

/** Whole days from the one `sinceMs` falls in through today. */
function allTime(sinceMs: number, nowMs: number) {
  return {
    from: Math.floor(sinceMs / 1000 / DAY) * DAY,
    to: (Math.floor(nowMs / 1000 / DAY) + 1) * DAY,
    granularity: 'day' as const,
    bots: 'exclude' as const,
  };
}
