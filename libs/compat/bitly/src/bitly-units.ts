import type { Granularity } from '@shortlink/clicks-domain';

/** Bitly's time units for metrics. */
export const BITLY_UNITS = ['minute', 'hour', 'day', 'week', 'month'] as const;
export type BitlyUnit = (typeof BITLY_UNITS)[number];
/** Buckets a metrics answer has at most (units=-1 over a long-lived link): the newest ones. */
export const MAX_BUCKETS = 1000;

const SECONDS: Readonly<Record<'minute' | 'hour' | 'day' | 'week', number>> = { minute: 60, hour: 3600, day: 86_400, week: 7 * 86_400 };
/** 1970-01-05 was a Monday: weeks start on Monday, 00:00 UTC. */
const MONDAY = 4 * 86_400;

/** The window of a metrics request: its buckets (epoch seconds, newest first) and what to ask the store. */
export interface UnitWindow {
  readonly unit: BitlyUnit;
  readonly units: number;
  /** The `unit_reference` answered: the request's, or now. */
  readonly reference: number;
  readonly buckets: readonly number[];
  readonly from: number;
  readonly to: number;
  readonly granularity: Granularity;
}

/** A parameter Bitly would refuse: its name (INVALID_ARG_<NAME>). */
export class BitlyArgError extends Error {
  constructor(readonly field: string) {
    super(`invalid ${field}`);
  }
}

/** The bucket `t` falls in. */
export function bucketOf(unit: BitlyUnit, t: number): number {
  if (unit === 'month') {
    const d = new Date(t * 1000);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
  }
  if (unit === 'week') return Math.floor((t - MONDAY) / SECONDS.week) * SECONDS.week + MONDAY;
  return Math.floor(t / SECONDS[unit]) * SECONDS[unit];
}

function previous(unit: BitlyUnit, bucket: number): number {
  if (unit === 'month') {
    const d = new Date(bucket * 1000);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1) / 1000;
  }
  return bucket - SECONDS[unit];
}

function next(unit: BitlyUnit, bucket: number): number {
  if (unit === 'month') {
    const d = new Date(bucket * 1000);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
  }
  return bucket + SECONDS[unit];
}

/**
 * `unit` (default day), `units` (default -1: since the link was created; else that many, ending with
 * the bucket of the reference), `unit_reference` (ISO 8601, default now; Bitly's `+0000` form too).
 */
export function windowOf(query: { unit?: unknown; units?: unknown; unit_reference?: unknown }, createdAtMs: number, nowMs: number): UnitWindow {
  const unit = query.unit === undefined || query.unit === '' ? 'day' : query.unit;
  if (!(BITLY_UNITS as readonly unknown[]).includes(unit)) throw new BitlyArgError('unit');
  const rawUnits = query.units === undefined || query.units === '' ? '-1' : query.units;
  if (typeof rawUnits !== 'string' || !/^-?\d{1,6}$/.test(rawUnits)) throw new BitlyArgError('units');
  const units = Number(rawUnits);
  if (units === 0 || units < -1) throw new BitlyArgError('units');
  let reference = Math.floor(nowMs / 1000);
  if (query.unit_reference !== undefined && query.unit_reference !== '') {
    const parsed = typeof query.unit_reference === 'string' ? Date.parse(query.unit_reference.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')) : NaN;
    if (!Number.isFinite(parsed)) throw new BitlyArgError('unit_reference');
    reference = Math.floor(parsed / 1000);
  }
  const u = unit as BitlyUnit;
  const last = bucketOf(u, reference);
  const first = units === -1 ? bucketOf(u, Math.min(Math.floor(createdAtMs / 1000), reference)) : -Infinity;
  const buckets: number[] = [];
  for (let b = last; buckets.length < (units === -1 ? MAX_BUCKETS : Math.min(units, MAX_BUCKETS)) && b >= first; b = previous(u, b)) buckets.push(b);
  const granularity: Granularity = u === 'minute' ? 'minute' : u === 'hour' ? 'hour' : 'day';
  return { unit: u, units, reference, buckets, from: buckets[buckets.length - 1], to: next(u, last), granularity };
}

/** The store's points (time, clicks) summed into the window's buckets, newest first. */
export function bucketize(window: UnitWindow, points: ReadonlyArray<{ time: number; clicks: number }>): Array<{ date: number; clicks: number }> {
  const sums = new Map<number, number>(window.buckets.map((b) => [b, 0]));
  for (const p of points) {
    const b = bucketOf(window.unit, p.time);
    if (sums.has(b)) sums.set(b, sums.get(b)! + p.clicks);
  }
  return window.buckets.map((b) => ({ date: b, clicks: sums.get(b)! }));
}

/** Bitly's timestamps: `2026-12-05T18:30:00+0000`. */
export function bitlyTime(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().slice(0, 19) + '+0000';
}
