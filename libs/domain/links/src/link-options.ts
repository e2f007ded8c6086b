import { DomainError, ErrorCode, parseIsoInstant } from '@shortlink/core';
import { RedirectType } from './link';

/** Latest accepted expiry: far enough for any real campaign, inside every store's date range. */
const MAX_EXPIRY_MS = Date.UTC(9999, 11, 31);
/** An expiry must leave at least this long, or the link would be dead on arrival (clock skew). */
const MIN_LIFETIME_MS = 1000;
/** 302 unless asked for 301 (a 301 is cached by browsers, so later clicks never reach us). */
export function checkRedirectType(value: unknown): RedirectType {
  if (value === undefined || value === null) return 302;
  if (value === 301 || value === 302) return value;
  throw new DomainError(ErrorCode.VALIDATION_FAILED, 'redirectType must be 301 or 302', { field: 'redirectType' });
}

/**
 * An ISO 8601 instant with an explicit zone (`2027-01-31T12:00:00Z`), in the future; null for none.
 * Stored to the millisecond; the redirect answers 410 LINK_EXPIRED from that instant on.
 */
export function checkExpiresAt(value: unknown, nowMs: number): Date | null {
  if (value === undefined || value === null) return null;
  const invalid = (why: string) => new DomainError(ErrorCode.VALIDATION_FAILED, `expiresAt ${why}`, { field: 'expiresAt' });
  if (typeof value !== 'string' || !/T/.test(value)) throw invalid('must be an ISO 8601 date-time with a zone, e.g. "2027-01-31T12:00:00Z"');
  const ms = parseIsoInstant(value);
  if (ms === null) throw invalid(/(Z|[+-]\d{2}:\d{2})$/.test(value) ? 'is not a valid date-time before the year 10000' : 'must be an ISO 8601 date-time with a zone, e.g. "2027-01-31T12:00:00Z"');
  if (ms > MAX_EXPIRY_MS) throw invalid('is not a valid date-time before the year 10000');
  if (ms < nowMs + MIN_LIFETIME_MS) throw invalid('must be in the future');
  return new Date(ms);
}
