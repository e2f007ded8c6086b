import { CountedClicks, minuteOf, RollupCaps } from '../aggregation';
import { ClickColumns } from '../click-columns';
import { ClickEvent } from '../click-event';

/** What the specs give every counted click: a desktop Chrome on Linux, not a bot. */
export const DESKTOP_CHROME = { device: 'desktop', browser: 'Chrome', os: 'Linux', bot: false } as const;

/**
 * The events of one record (at `offset`), every one counted at the time it was sent, with the caps
 * of the rollups decided in order, as the consumer counts a batch without duplicates or late clicks.
 */
export function countedOf(events: readonly ClickEvent[], facts: Facts | ((event: ClickEvent) => Facts) = DESKTOP_CHROME, offset = '0'): CountedClicks {
  const columns = new ClickColumns();
  columns.beginRecord(offset, events[0]?.occurredAt ?? 0);
  for (const e of events) columns.add(e);
  const counted = new CountedClicks(columns);
  const caps = new RollupCaps(columns);
  events.forEach((e, i) => {
    const f = typeof facts === 'function' ? facts(e) : facts;
    const ids = { device: columns.intern(f.device), browser: columns.intern(f.browser), os: columns.intern(f.os), bot: f.bot };
    const minute = minuteOf(columns.occurredAt[i]);
    counted.push(i, columns.occurredAt[i], caps.code(i, minute), caps.referer(i, minute), ids);
  });
  return counted;
}

/** A user agent's facts as the classifier gives them. */
export interface Facts {
  readonly device: string;
  readonly browser: string;
  readonly os: string;
  readonly bot: boolean;
}
