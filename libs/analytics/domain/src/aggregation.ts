import { UserAgentFacts } from '@shortlink/visitors-domain';
import { ClickEvent } from './click-event';

/** The breakdowns analysts ask for (docs/analytics.md, "Aggregates"). */
export const DIMENSIONS = ['countries', 'referers', 'devices', 'browsers', 'os', 'variants', 'sources', 'cities'] as const;
export type Dimension = (typeof DIMENSIONS)[number];
/**
 * Stable ids of the dimensions in storage: never renumber, only add. A new dimension is rows with a
 * new id in the dim_* tables, whose value column is a string: no schema change (docs/analytics.md).
 */
export const DIMENSION_ID: Readonly<Record<Dimension, number>> = {
  countries: 1,
  referers: 2,
  devices: 3,
  browsers: 4,
  os: 5,
  variants: 6,
  sources: 7,
  cities: 8,
};

/** A city as the `cities` breakdown keeps it: with its country and region, so that two Springfields are two rows. */
export interface CityValue {
  readonly country: string;
  readonly region: string | null;
  readonly city: string;
}

/** Separates the parts of a `cities` value in storage: no place name has a tab (cityValueOf turns one into a space). */
const CITY_SEPARATOR = '\t';

/** The stored value of a click's city (`country<TAB>region<TAB>city`); NONE when its city is unknown. */
export function cityValueOf(place: { readonly country: string | null; readonly region: string | null; readonly city: string | null }): string {
  if (place.country === null || place.city === null) return NONE;
  const part = (s: string | null) => (s ?? '').replace(/[\t\r\n]/g, ' ');
  return `${place.country}${CITY_SEPARATOR}${part(place.region)}${CITY_SEPARATOR}${part(place.city)}`;
}

/** The city of a stored `cities` value; null for NONE, OTHER or a value not of that shape. */
export function cityOfValue(value: string): CityValue | null {
  const parts = value.split(CITY_SEPARATOR);
  if (parts.length !== 3 || parts[0] === '' || parts[2] === '') return null;
  return { country: parts[0], region: parts[1] === '' ? null : parts[1], city: parts[2] };
}

/** Value of a dimension when the click has none (no referer, unknown country, no variant). */
export const NONE = '';
/** Where values beyond the per-minute cap of a dimension are counted. */
export const OTHER = '(other)';
/**
 * Distinct referer hosts kept per link and minute in one batch, the rest counted as OTHER: the
 * article's "top referers" bounded so a flood of forged referers cannot grow storage without end.
 * Codes of orphan visits (scanners probing random codes) are capped the same way per domain.
 */
export const MAX_VALUES_PER_MINUTE = 100;

export interface DimensionCount {
  readonly dimension: Dimension;
  readonly value: string;
  readonly clicks: number;
}

/**
 * One row per (tenant, link, minute, bot flag, visitor) of a batch: its clicks, and its clicks per
 * dimension value. Rows carry the visitor so that the store can fold it into mergeable HLL states
 * of unique visitors per minute, hour, day and dimension value.
 */
export interface VisitorMinuteRow {
  /** '' for orphan visits (requests for unknown codes), which belong to no tenant. */
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
  /** Start of the minute, epoch seconds (UTC). */
  readonly minute: number;
  readonly bot: boolean;
  /** Visitor id, a safe integer < 2^52. */
  readonly visitor: number;
  readonly clicks: number;
  readonly dims: readonly DimensionCount[];
}

/**
 * A click as the consumer counts it, every decision about it taken once: its time (the clock-ahead
 * rule applied), its user agent's facts, and the values the rollups keep for it (a capped referer, a
 * capped orphan code). Every table that receives it, in whichever write, receives these same values
 * (docs/analytics.md, "Exactly once").
 */
export interface CountedClick {
  /** Offset of the record that carried it (records carry several clicks). */
  readonly offset: bigint;
  /** The event, `occurredAt` as counted. */
  readonly event: ClickEvent;
  readonly facts: UserAgentFacts;
  /** The code the rollups count it under: an orphan's own, or OTHER beyond MAX_VALUES_PER_MINUTE per domain and minute. */
  readonly rolledCode: string;
  /** The referer host the rollups count it under: NONE, its own, or OTHER beyond MAX_VALUES_PER_MINUTE per link and minute. */
  readonly rolledReferer: string;
}

/**
 * The caps of the rollups (MAX_VALUES_PER_MINUTE distinct referers per link and minute, orphan codes
 * per domain and minute), decided click by click in log order. The consumer feeds it every click of a
 * batch after its committed offset, counted or not, so a click's capped values depend only on the
 * log, never on how the batch was cut or which clicks an earlier attempt wrote.
 */
export class RollupCaps {
  /** link (or domain) + minute -> distinct values kept so far. */
  private readonly distinct = new Map<string, Set<string>>();

  /** The code and referer the rollups keep for `event`, counted in the minute starting at `minute` (epoch s). */
  decide(event: ClickEvent, minute: number): { rolledCode: string; rolledReferer: string } {
    if (event.kind === 'orphan') return { rolledCode: this.capped(`${event.domain}\u0000${minute}`, event.code), rolledReferer: NONE };
    const referer =
      event.refererHost === null ? NONE : this.capped(`${event.tenantId}\u0000${event.domain}\u0000${event.code}\u0000${minute}`, event.refererHost);
    return { rolledCode: event.code, rolledReferer: referer };
  }

  private capped(scope: string, value: string): string {
    let seen = this.distinct.get(scope);
    if (!seen) this.distinct.set(scope, (seen = new Set()));
    if (seen.has(value)) return value;
    if (seen.size >= MAX_VALUES_PER_MINUTE) return OTHER;
    seen.add(value);
    return value;
  }
}

/** Start of the minute of a click, epoch seconds. */
export const minuteOf = (occurredAt: number): number => Math.floor(occurredAt / 60_000) * 60;

interface Accumulating {
  tenantId: string;
  domain: string;
  code: string;
  minute: number;
  bot: boolean;
  visitor: number;
  clicks: number;
  dims: Map<string, number>;
}

/**
 * Folds counted clicks into per-minute visitor rows (the article's one-minute tumbling window,
 * finished in the store: rows of the same minute from later batches merge there).
 */
export function rollUp(clicks: Iterable<CountedClick>): VisitorMinuteRow[] {
  const rows = new Map<string, Accumulating>();
  for (const { event: e, facts, rolledCode, rolledReferer } of clicks) {
    const minute = minuteOf(e.occurredAt);
    const orphan = e.kind === 'orphan';
    const tenantId = orphan ? '' : e.tenantId;
    const key = `${tenantId}\u0000${e.domain}\u0000${rolledCode}\u0000${minute}\u0000${facts.bot ? 1 : 0}\u0000${e.visitor}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { tenantId, domain: e.domain, code: rolledCode, minute, bot: facts.bot, visitor: e.visitor, clicks: 0, dims: new Map() }));
    row.clicks++;
    if (orphan) continue;
    add(row.dims, 'countries', e.country ?? NONE);
    add(row.dims, 'referers', rolledReferer);
    add(row.dims, 'devices', facts.device);
    add(row.dims, 'browsers', facts.browser);
    add(row.dims, 'os', facts.os);
    add(row.dims, 'variants', e.variant === null ? NONE : String(e.variant));
    add(row.dims, 'sources', e.source);
    add(row.dims, 'cities', cityValueOf(e));
  }
  const out: VisitorMinuteRow[] = [];
  for (const r of rows.values()) {
    const dims: DimensionCount[] = [];
    for (const [k, clicks] of r.dims) {
      const at = k.indexOf('\u0000');
      dims.push({ dimension: k.slice(0, at) as Dimension, value: k.slice(at + 1), clicks });
    }
    out.push({ tenantId: r.tenantId, domain: r.domain, code: r.code, minute: r.minute, bot: r.bot, visitor: r.visitor, clicks: r.clicks, dims });
  }
  return out;
}

function add(dims: Map<string, number>, dimension: Dimension, value: string): void {
  const k = `${dimension}\u0000${value}`;
  dims.set(k, (dims.get(k) ?? 0) + 1);
}
