import { DomainError, ErrorCode, parseIsoInstant } from '@shortlink/core';
import { Granularity, GRANULARITY_SECONDS, Retention } from './ports';

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
    throw new DomainError(
      ErrorCode.INVALID_TIME_RANGE,
      `${name} must be epoch seconds or an ISO 8601 date or date-time with a zone, e.g. 2026-12-03T10:00:00Z`,
      { parameter: name },
    );
  }
  if (seconds < MIN_EPOCH_SECONDS || seconds > MAX_EPOCH_SECONDS) {
    throw new DomainError(ErrorCode.INVALID_TIME_RANGE, `${name} must lie between 1970-01-01 and 2106-02-07`, { parameter: name });
  }
  return Math.floor(seconds);
}

/** Longest range per granularity: beyond it the series has too many points to be read. */
export const MAX_RANGE_SECONDS: Readonly<Record<Granularity, number>> = { minute: 31 * 86_400, hour: 366 * 86_400, day: 3660 * 86_400 };
/** Range when `from` is not given: the last hour of minutes, week of hours, 30 days of days. */
export const DEFAULT_SPAN_SECONDS: Readonly<Record<Granularity, number>> = { minute: 3600, hour: 7 * 86_400, day: 30 * 86_400 };

export interface RangeRequest {
  readonly from?: string;
  readonly to?: string;
  /** Absent: chosen from the range and the retention (the finest granularity still kept for it). */
  readonly granularity?: Granularity;
}

export interface ResolvedRange {
  /** Epoch seconds, aligned down to the granularity. */
  readonly from: number;
  /** Epoch seconds, aligned up to the granularity. */
  readonly to: number;
  readonly granularity: Granularity;
}

/**
 * A query's range (docs/analytics.md, "Reading"): bounds parsed strictly, aligned outward to the
 * granularity (so series, totals and breakdowns read whole buckets and agree with each other),
 * refused with INVALID_TIME_RANGE when empty, reversed or too long. Without a granularity the
 * finest one whose retention still covers `from` is taken (minute up to 7 days, hour up to 366).
 */
export function resolveRange(request: RangeRequest, nowSeconds: number, retention: Retention, fallbackGranularity: Granularity = 'minute'): ResolvedRange {
  const g0 = request.granularity ?? fallbackGranularity;
  const rawTo = parseInstant('to', request.to, nowSeconds + 1);
  const rawFrom = parseInstant('from', request.from, rawTo - DEFAULT_SPAN_SECONDS[g0]);
  if (rawFrom >= rawTo) throw new DomainError(ErrorCode.INVALID_TIME_RANGE, 'from must be before to', { from: rawFrom, to: rawTo });
  const granularity = request.granularity ?? autoGranularity(rawFrom, rawTo, nowSeconds, retention);
  const step = GRANULARITY_SECONDS[granularity];
  const from = Math.floor(rawFrom / step) * step;
  const to = Math.min(Math.ceil(rawTo / step) * step, MAX_EPOCH_SECONDS + 1 - step);
  if (to - from > MAX_RANGE_SECONDS[granularity]) {
    throw new DomainError(
      ErrorCode.INVALID_TIME_RANGE,
      `the range may span at most ${MAX_RANGE_SECONDS[granularity] / 86_400} days at ${granularity} granularity`,
      { from: rawFrom, to: rawTo, granularity },
    );
  }
  if (from >= to) throw new DomainError(ErrorCode.INVALID_TIME_RANGE, 'the range is empty', { from: rawFrom, to: rawTo });
  return { from, to, granularity };
}

function autoGranularity(from: number, to: number, now: number, retention: Retention): Granularity {
  const kept = (days: number) => days === 0 || from >= now - days * 86_400;
  if (to - from <= 7 * 86_400 && kept(retention.minuteDays)) return 'minute';
  if (to - from <= MAX_RANGE_SECONDS.hour && kept(retention.hourDays)) return 'hour';
  return 'day';
}
