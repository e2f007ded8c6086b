import { ClickColumns, NO_STRING, ORPHAN_FLAG, QR_FLAG } from './click-columns';
import { dayOf, PlannableClicks } from './write-plan';

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

/**
 * One row of the rollups, folded by the consumer before the insert (docs/design.md, "Analytics"):
 * the clicks of a link (or of one value of a dimension of that link) in one minute, bots apart, and
 * its distinct visitors, which the store folds into mergeable HLL states of unique visitors per
 * minute, hour, day and dimension value.
 */
export interface RollupRow {
  /** '' for orphan visits (requests for unknown codes), which belong to no tenant. */
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
  /** Start of the minute, epoch seconds (UTC). */
  readonly minute: number;
  readonly bot: boolean;
  /** null: the link's own row (all its clicks of the minute); else the row of one value of this dimension. */
  readonly dimension: Dimension | null;
  /** The dimension's value ('' on the link's own row, NONE when the click had none). */
  readonly value: string;
  readonly clicks: number;
  /** Visitor ids (safe integers < 2^52), each once. */
  readonly visitors: readonly number[];
}

/**
 * The clicks of a batch the consumer counts, column by column beside the batch's own columns, every
 * decision about each taken once: its time (the clock-ahead rule applied), its user agent's facts,
 * and the values the rollups keep for it (a capped referer, a capped orphan code), as string ids of
 * the batch. Every table that receives a click, in whichever write, receives these same values
 * (docs/analytics.md, "Exactly once").
 */
export class CountedClicks implements PlannableClicks {
  length = 0;
  /** Index of the click in the batch's columns. */
  click: Int32Array;
  /** Epoch ms, as counted. */
  time: Float64Array;
  /** The code the rollups count it under: an orphan's own, or OTHER beyond MAX_VALUES_PER_MINUTE per domain and minute. */
  code: Int32Array;
  /** The referer host the rollups count it under: NONE, its own, or OTHER beyond MAX_VALUES_PER_MINUTE per link and minute. */
  referer: Int32Array;
  device: Int32Array;
  browser: Int32Array;
  os: Int32Array;
  bot: Uint8Array;

  constructor(
    readonly columns: ClickColumns,
    capacity = columns.length,
  ) {
    const n = Math.max(1, capacity);
    this.click = new Int32Array(n);
    this.time = new Float64Array(n);
    this.code = new Int32Array(n);
    this.referer = new Int32Array(n);
    this.device = new Int32Array(n);
    this.browser = new Int32Array(n);
    this.os = new Int32Array(n);
    this.bot = new Uint8Array(n);
  }

  /** Counts click `click` of the columns; `facts` as `factsOf` gives them. */
  push(click: number, time: number, code: number, referer: number, facts: CountedFacts): void {
    const j = this.length++;
    this.click[j] = click;
    this.time[j] = time;
    this.code[j] = code;
    this.referer[j] = referer;
    this.device[j] = facts.device;
    this.browser[j] = facts.browser;
    this.os[j] = facts.os;
    this.bot[j] = facts.bot ? 1 : 0;
  }

  offsetAt(j: number): bigint {
    return this.columns.recordOffsetValues[this.columns.record[this.click[j]]];
  }

  dayAt(j: number): number {
    return dayOf(this.time[j]);
  }
}

/** A user agent's facts as string ids of a batch. */
export interface CountedFacts {
  readonly device: number;
  readonly browser: number;
  readonly os: number;
  readonly bot: boolean;
}

/**
 * The caps of the rollups (MAX_VALUES_PER_MINUTE distinct referers per link and minute, orphan codes
 * per domain and minute), decided click by click in log order. The consumer feeds it every click of a
 * batch after its committed offset, counted or not, so a click's capped values depend only on the
 * log, never on how the batch was cut or which clicks an earlier attempt wrote. Values are string
 * ids of one batch's columns: one RollupCaps per batch.
 */
export class RollupCaps {
  /** link (or domain) + minute -> distinct value ids kept so far. */
  private readonly distinct = new Map<string, Set<number>>();
  private readonly other: number;
  private readonly none: number;

  constructor(private readonly columns: ClickColumns) {
    this.other = columns.intern(OTHER);
    this.none = columns.intern(NONE);
  }

  /** The code the rollups keep for click `i`, counted in the minute starting at `minute` (epoch s). */
  code(i: number, minute: number): number {
    const c = this.columns;
    return c.flags[i] & ORPHAN_FLAG ? this.capped(`${c.domain[i]},${minute}`, c.code[i]) : c.code[i];
  }

  /** The referer host the rollups keep for click `i` (NONE for none, and for orphans). */
  referer(i: number, minute: number): number {
    const c = this.columns;
    if (c.flags[i] & ORPHAN_FLAG || c.referer[i] === NO_STRING) return this.none;
    return this.capped(`${c.tenant[i]},${c.domain[i]},${c.code[i]},${minute}`, c.referer[i]);
  }

  private capped(scope: string, value: number): number {
    let seen = this.distinct.get(scope);
    if (!seen) this.distinct.set(scope, (seen = new Set()));
    if (seen.has(value)) return value;
    if (seen.size >= MAX_VALUES_PER_MINUTE) return this.other;
    seen.add(value);
    return value;
  }
}

/** Start of the minute of a click, epoch seconds. */
export const minuteOf = (occurredAt: number): number => Math.floor(occurredAt / 60_000) * 60;

/** Room for a string id beside a dimension id in one small integer key. */
const VALUE_IDS = 0x100_0000;
const DIMENSION_OF_ID = new Map(DIMENSIONS.map((d) => [DIMENSION_ID[d], d]));

interface Accumulating {
  clicks: number;
  visitors: number[];
}

interface Group extends Accumulating {
  tenant: number;
  domain: number;
  code: number;
  minute: number;
  bot: boolean;
  /** DIMENSION_ID * VALUE_IDS + value id -> the value's clicks and visitors. */
  dims: Map<number, Accumulating>;
}

/**
 * Folds counted clicks (all, or those at `positions`) into rollup rows per link, minute and bot flag,
 * and per dimension value of those (the article's one-minute tumbling window, finished in the store:
 * rows of the same minute from later writes merge there). No object per click: one per row.
 */
export function rollupsOf(counted: CountedClicks, positions: Int32Array | null = null): RollupRow[] {
  const c = counted.columns;
  const none = c.intern(NONE);
  const qr = c.intern('qr');
  const link = c.intern('link');
  const variants = new Map<number, number>();
  const cities = new Map<string, number>();
  const groups = new Map<string, Group>();
  const n = positions ? positions.length : counted.length;
  for (let k = 0; k < n; k++) {
    const j = positions ? positions[k] : k;
    const i = counted.click[j];
    const orphan = (c.flags[i] & ORPHAN_FLAG) !== 0;
    const tenant = orphan ? none : c.tenant[i];
    const minute = minuteOf(counted.time[j]);
    const bot = counted.bot[j];
    const key = `${tenant},${c.domain[i]},${counted.code[j]},${minute},${bot}`;
    let g = groups.get(key);
    if (!g) {
      g = { tenant, domain: c.domain[i], code: counted.code[j], minute, bot: bot === 1, clicks: 0, visitors: [], dims: new Map() };
      groups.set(key, g);
    }
    const visitor = c.visitor[i];
    g.clicks++;
    g.visitors.push(visitor);
    if (orphan) continue;
    const country = c.country[i];
    addValue(g.dims, DIMENSION_ID.countries, country === NO_STRING ? none : country, visitor);
    addValue(g.dims, DIMENSION_ID.referers, counted.referer[j], visitor);
    addValue(g.dims, DIMENSION_ID.devices, counted.device[j], visitor);
    addValue(g.dims, DIMENSION_ID.browsers, counted.browser[j], visitor);
    addValue(g.dims, DIMENSION_ID.os, counted.os[j], visitor);
    const variant = c.variant[i];
    let variantId = none;
    if (variant >= 0) {
      variantId = variants.get(variant) ?? c.intern(String(variant));
      variants.set(variant, variantId);
    }
    addValue(g.dims, DIMENSION_ID.variants, variantId, visitor);
    addValue(g.dims, DIMENSION_ID.sources, c.flags[i] & QR_FLAG ? qr : link, visitor);
    let city = none;
    if (country !== NO_STRING && c.city[i] !== NO_STRING) {
      const place = `${country},${c.region[i]},${c.city[i]}`;
      city = cities.get(place) ?? c.intern(cityValueOf({ country: c.strings[country], region: c.stringOrNull(c.region[i]), city: c.strings[c.city[i]] }));
      cities.set(place, city);
    }
    addValue(g.dims, DIMENSION_ID.cities, city, visitor);
  }
  const s = c.strings;
  const out: RollupRow[] = [];
  for (const g of groups.values()) {
    const base = { tenantId: s[g.tenant], domain: s[g.domain], code: s[g.code], minute: g.minute, bot: g.bot };
    out.push({ ...base, dimension: null, value: NONE, clicks: g.clicks, visitors: distinct(g.visitors) });
    for (const [key, acc] of g.dims) {
      const dimension = DIMENSION_OF_ID.get(Math.floor(key / VALUE_IDS))!;
      out.push({ ...base, dimension, value: s[key % VALUE_IDS], clicks: acc.clicks, visitors: distinct(acc.visitors) });
    }
  }
  return out;
}

function addValue(dims: Map<number, Accumulating>, dimension: number, value: number, visitor: number): void {
  if (value >= VALUE_IDS) throw new RangeError(`more than ${VALUE_IDS} distinct strings in one batch`);
  const key = dimension * VALUE_IDS + value;
  let acc = dims.get(key);
  if (!acc) dims.set(key, (acc = { clicks: 0, visitors: [] }));
  acc.clicks++;
  acc.visitors.push(visitor);
}

/** The values, each once. */
function distinct(values: number[]): number[] {
  if (values.length < 2) return values;
  const sorted = Float64Array.from(values).sort();
  const out = [sorted[0]];
  for (let i = 1; i < sorted.length; i++) if (sorted[i] !== sorted[i - 1]) out.push(sorted[i]);
  return out;
}

/** A dimension value's clicks within a VisitorMinuteRow. */
export interface DimensionCount {
  readonly dimension: Dimension;
  readonly value: string;
  readonly clicks: number;
}

/** One visitor's clicks on a link in one minute, with their breakdown: how a writer that knows clicks per visitor (tests, tools) states them. */
export interface VisitorMinuteRow {
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
  /** Start of the minute, epoch seconds (UTC). */
  readonly minute: number;
  readonly bot: boolean;
  readonly visitor: number;
  readonly clicks: number;
  readonly dims: readonly DimensionCount[];
}

/** Rollup rows of clicks given per visitor: summed per link, minute and bot flag (and dimension value), each visitor once. */
export function rollupsOfVisitorRows(rows: readonly VisitorMinuteRow[]): RollupRow[] {
  const out = new Map<string, { row: Omit<RollupRow, 'clicks' | 'visitors'>; clicks: number; visitors: number[] }>();
  const add = (row: Omit<RollupRow, 'clicks' | 'visitors'>, clicks: number, visitor: number) => {
    const key = JSON.stringify([row.tenantId, row.domain, row.code, row.minute, row.bot, row.dimension, row.value]);
    let acc = out.get(key);
    if (!acc) out.set(key, (acc = { row, clicks: 0, visitors: [] }));
    acc.clicks += clicks;
    acc.visitors.push(visitor);
  };
  for (const r of rows) {
    const base = { tenantId: r.tenantId, domain: r.domain, code: r.code, minute: r.minute, bot: r.bot };
    add({ ...base, dimension: null, value: NONE }, r.clicks, r.visitor);
    for (const d of r.dims) add({ ...base, dimension: d.dimension, value: d.value }, d.clicks, r.visitor);
  }
  return [...out.values()].map(({ row, clicks, visitors }) => ({ ...row, clicks, visitors: [...new Set(visitors)] }));
}
