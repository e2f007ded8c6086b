import { createHmac } from 'crypto';
import { ClickBatch } from './click-event';
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

/**
 * Folds one partition's batch into per-minute, per-link, per-visitor click counts, skipping
 * messages at or below the offset the store already holds (a replay after a crash).
 */
export function aggregateBatch(batch: ClickBatch, alreadyIngested: bigint | undefined, secret: string): MinuteVisitorRow[] {
  const rows = new Map<string, { row: Omit<MinuteVisitorRow, 'clicks' | 'sourceOffset'>; clicks: number; offset: bigint }>();
  for (const { offset, event } of batch.messages) {
    const off = BigInt(offset);
    if (alreadyIngested !== undefined && off <= alreadyIngested) continue;
    const minute = Math.floor(event.occurredAt / 60_000) * 60;
    const visitor = visitorHash(secret, event.ip, event.userAgent);
    const key = `${event.tenantId}\u0000${event.domain}\u0000${event.code}\u0000${minute}\u0000${visitor}`;
    const entry = rows.get(key);
    if (entry) {
      entry.clicks++;
      if (off > entry.offset) entry.offset = off;
    } else {
      rows.set(key, {
        row: { tenantId: event.tenantId, domain: event.domain, code: event.code, minute, visitor, sourcePartition: batch.partition },
        clicks: 1,
        offset: off,
      });
    }
  }
  return [...rows.values()].map(({ row, clicks, offset }) => ({ ...row, clicks, sourceOffset: offset.toString() }));
}
