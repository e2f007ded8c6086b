import { createHmac } from 'crypto';
import { ClickEvent } from './click-event';
import { MinuteVisitorRow } from './ports';

/**
 * Visitor identity without storing the IP: a keyed hash of IP + user agent, cut to 52 bits so it
 * is an exact JS number and a ClickHouse UInt64. Without the secret the IP cannot be recovered
 * by enumerating the IPv4 space.
 */
export function visitorHash(secret: string, ip: string, userAgent: string): number {
  const digest = createHmac('sha256', secret).update(ip).update('\u0000').update(userAgent).digest();
  return digest.readUIntBE(0, 6) * 16 + (digest[6] >> 4);
}

/** Folds click events into per-minute, per-link, per-visitor click counts. */
export function aggregateBatch(events: Iterable<ClickEvent>, secret: string): MinuteVisitorRow[] {
  const rows = new Map<string, MinuteVisitorRow & { clicks: number }>();
  for (const event of events) {
    const minute = Math.floor(event.occurredAt / 60_000) * 60;
    const visitor = visitorHash(secret, event.ip, event.userAgent);
    const key = `${event.tenantId}\u0000${event.domain}\u0000${event.code}\u0000${minute}\u0000${visitor}`;
    const row = rows.get(key);
    if (row) row.clicks++;
    else rows.set(key, { tenantId: event.tenantId, domain: event.domain, code: event.code, minute, visitor, clicks: 1 });
  }
  return [...rows.values()];
}
