import { CountedClicks, minuteOf, RollupCaps } from '../aggregation';
import { ClickColumns } from '../click-columns';
import { ClickEvent } from '../click-event';

/** What the specs give every counted click: a desktop Chrome on Linux, not a bot. */
export const DESKTOP_CHROME = { device: 'desktop', browser: 'Chrome', os: 'Linux', bot: false } as const;

/**
 * The events of one record (at `offset`), every one counted at the time it was sent, with the caps
 * of the rollups decided in order, as the consumer counts a batch without duplicates or late clicks.
 */
export function countedOf(events: readonly ClickEvent[], facts: { device: string; browser: string; os: string; bot: boolean } = DESKTOP_CHROME, offset = '0'): CountedClicks {
  const columns = new ClickColumns();
  columns.beginRecord(offset, events[0]?.occurredAt ?? 0);
  for (const e of events) columns.add(e);
  const counted = new CountedClicks(columns);
  const ids = { device: columns.intern(facts.device), browser: columns.intern(facts.browser), os: columns.intern(facts.os), bot: facts.bot };
  const caps = new RollupCaps(columns);
  for (let i = 0; i < columns.length; i++) {
    const minute = minuteOf(columns.occurredAt[i]);
    counted.push(i, columns.occurredAt[i], caps.code(i, minute), caps.referer(i, minute), ids);
  }
  return counted;
}
