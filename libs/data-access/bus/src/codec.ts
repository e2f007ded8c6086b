import { ClickEvent, isClickEvent } from '@shortlink/clicks-domain';

/** Topic of the click events unless configured otherwise. */
export const DEFAULT_CLICK_TOPIC = 'shortlink.clicks';

/** Message key of a click: all clicks of one link land on one partition, in order. */
export function clickMessageKey(event: Pick<ClickEvent, 'domain' | 'code'>): string {
  return `${event.domain}/${event.code}`;
}

/** The wire format: the event as one JSON object (UTF-8). */
export function encodeClickEvent(event: ClickEvent): string {
  return JSON.stringify({
    eventId: event.eventId,
    occurredAt: event.occurredAt,
    linkId: event.linkId,
    tenantId: event.tenantId,
    domain: event.domain,
    code: event.code,
    ip: event.ip,
    userAgent: event.userAgent,
    referer: event.referer,
  });
}

/** Parses a message value; null for anything that is not a JSON ClickEvent (the caller skips it). */
export function decodeClickEvent(value: Buffer | string | null | undefined): ClickEvent | null {
  if (value === null || value === undefined) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof value === 'string' ? value : value.toString('utf8'));
  } catch {
    return null;
  }
  return isClickEvent(parsed) ? parsed : null;
}
