import { DomainError, ErrorCode, parseIsoInstant } from '@shortlink/core';

/** Instants the aggregates can hold: ClickHouse DateTime is an unsigned 32-bit count of seconds. */
export const MIN_EPOCH_SECONDS = 0;
export const MAX_EPOCH_SECONDS = 0xffff_ffff;

/**
 * A query bound: epoch seconds (up to 10 digits) or a strict ISO 8601 date or date-time with a
 * zone. Anything else, or an instant outside 1970..2106, is INVALID_TIME_RANGE (400), never a 500.
 */
export function parseInstant(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const seconds = /^\d{1,10}$/.test(value) ? Number(value) : (parseIsoInstant(value) ?? NaN) / 1000;
  if (!Number.isFinite(seconds)) {
    throw new DomainError(ErrorCode.INVALID_TIME_RANGE, `${name} must be epoch seconds or an ISO 8601 date or date-time with a zone, e.g. 2026-12-03T10:00:00Z`, { parameter: name });
  }
  if (seconds < MIN_EPOCH_SECONDS || seconds > MAX_EPOCH_SECONDS) {
    throw new DomainError(ErrorCode.INVALID_TIME_RANGE, `${name} must lie between 1970-01-01 and 2106-02-07`, { parameter: name });
  }
  return Math.floor(seconds);
}
