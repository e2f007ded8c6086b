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

/** One value of one dimension. */
export interface DimensionValue {
  readonly dimension: Dimension;
  readonly value: string;
}

/**
 * One row of the rollups, folded by the consumer before the insert (docs/design.md, "Analytics"):
 * clicks of a link in one minute, bots apart, and their distinct visitors, which the store folds
 * into mergeable HLL states of unique visitors per minute, hour, day and dimension value.
 *
 * A link's own row (`link`) has all its clicks of the minute, and names the dimension values that
 * every one of those clicks has (one country, one browser, ...): those values' clicks and visitors
 * are the link's, and the store derives them from this row (one set of visitors for all of them).
 * Any other value (a dimension with several values in the minute) is a row of its own, with its
 * clicks and visitors.
 */
export interface RollupRow {
  /** '' for orphan visits (requests for unknown codes), which belong to no tenant. */
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
  /** Start of the minute, epoch seconds (UTC). */
  readonly minute: number;
  readonly bot: boolean;
  /** The link's own row (counted in the link tables); else a row of dimension values only. */
  readonly link: boolean;
  /** The dimension values these clicks and visitors stand for (NONE when the clicks had none). */
  readonly values: readonly DimensionValue[];
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

/** Room for a string id beside a dimension id in one small integer key (and a domain id beside a code id). */
const VALUE_IDS = 0x100_0000;
const DIMENSION_OF_ID = new Map(DIMENSIONS.map((d) => [DIMENSION_ID[d], d]));

interface ValueAccumulator {
  readonly value: number;
  clicks: number;
  /** null while the value is that of every click of its group so far: its visitors are the group's. */
  visitors: number[] | null;
}

interface Group {
  readonly tenant: number;
  readonly domain: number;
  readonly code: number;
  readonly minute: number;
  readonly bot: number;
  clicks: number;
  visitors: number[];
  /** Per DIMENSION_ID: the values seen in the group. */
  readonly dims: ValueAccumulator[][];
}

/**
 * Folds counted clicks (all, or those at `positions`) into rollup rows per link, minute and bot flag
 * (the article's one-minute tumbling window, finished in the store: rows of the same minute from
 * later writes merge there), with a row of its own for each value of a dimension that has several
 * in the minute. One object per row, none per click; a dimension with one value in a link's minute
 * (the common case: one country, one browser) costs a counter, not a list of visitors.
 */
export function rollupsOf(counted: CountedClicks, positions: Int32Array | null = null): RollupRow[] {
  const c = counted.columns;
  if (c.strings.length + 3 * counted.length + 4 >= VALUE_IDS) throw new RangeError(`more than ${VALUE_IDS} distinct strings in one batch`);
  const none = c.intern(NONE);
  const qr = c.intern('qr');
  const link = c.intern('link');
  const variants = new Map<number, number>();
  const cities = new Map<string, number>();
  /** domain and code -> the groups of that link (usually one: its minute, not a bot). */
  const links = new Map<number, Group[]>();
  const n = positions ? positions.length : counted.length;
  for (let k = 0; k < n; k++) {
    const j = positions ? positions[k] : k;
    const i = counted.click[j];
    const orphan = (c.flags[i] & ORPHAN_FLAG) !== 0;
    const tenant = orphan ? none : c.tenant[i];
    const minute = minuteOf(counted.time[j]);
    const bot = counted.bot[j];
    const code = counted.code[j];
    const linkKey = c.domain[i] * VALUE_IDS + code;
    let list = links.get(linkKey);
    if (!list) links.set(linkKey, (list = []));
    let g: Group | undefined;
    for (const candidate of list) {
      if (candidate.minute === minute && candidate.bot === bot && candidate.tenant === tenant) {
        g = candidate;
        break;
      }
    }
    if (!g) {
      g = { tenant, domain: c.domain[i], code, minute, bot, clicks: 0, visitors: [], dims: DIMENSION_SLOTS.map(() => []) };
      list.push(g);
    }
    const visitor = c.visitor[i];
    g.clicks++;
    g.visitors.push(visitor);
    if (orphan) continue;
    const country = c.country[i];
    addValue(g, DIMENSION_ID.countries, country === NO_STRING ? none : country, visitor);
    addValue(g, DIMENSION_ID.referers, counted.referer[j], visitor);
    addValue(g, DIMENSION_ID.devices, counted.device[j], visitor);
    addValue(g, DIMENSION_ID.browsers, counted.browser[j], visitor);
    addValue(g, DIMENSION_ID.os, counted.os[j], visitor);
    const variant = c.variant[i];
    let variantId = none;
    if (variant >= 0) {
      variantId = variants.get(variant) ?? c.intern(String(variant));
      variants.set(variant, variantId);
    }
    addValue(g, DIMENSION_ID.variants, variantId, visitor);
    addValue(g, DIMENSION_ID.sources, c.flags[i] & QR_FLAG ? qr : link, visitor);
    let city = none;
    if (country !== NO_STRING && c.city[i] !== NO_STRING) {
      const place = `${country},${c.region[i]},${c.city[i]}`;
      city = cities.get(place) ?? c.intern(cityValueOf({ country: c.strings[country], region: c.stringOrNull(c.region[i]), city: c.strings[c.city[i]] }));
      cities.set(place, city);
    }
    addValue(g, DIMENSION_ID.cities, city, visitor);
  }
  const s = c.strings;
  const out: RollupRow[] = [];
  for (const list of links.values()) {
    for (const g of list) {
      const base = { tenantId: s[g.tenant], domain: s[g.domain], code: s[g.code], minute: g.minute, bot: g.bot === 1 };
      const shared: DimensionValue[] = [];
      const own: RollupRow[] = [];
      for (let d = 1; d < g.dims.length; d++) {
        const values = g.dims[d];
        const dimension = DIMENSION_OF_ID.get(d)!;
        if (values.length === 1 && values[0].visitors === null) shared.push({ dimension, value: s[values[0].value] });
        else {
          for (const v of values) {
            own.push({ ...base, link: false, values: [{ dimension, value: s[v.value] }], clicks: v.clicks, visitors: distinct(v.visitors ?? g.visitors) });
          }
        }
      }
      out.push({ ...base, link: true, values: shared, clicks: g.clicks, visitors: distinct(g.visitors) }, ...own);
    }
  }
  return out;
}

/** Index = DIMENSION_ID (from 1). */
const DIMENSION_SLOTS = [0, ...DIMENSIONS.map((d) => DIMENSION_ID[d])];

function addValue(g: Group, dimension: number, value: number, visitor: number): void {
  const values = g.dims[dimension];
  for (let k = 0; k < values.length; k++) {
    const v = values[k];
    if (v.value === value) {
      v.clicks++;
      if (v.visitors) v.visitors.push(visitor);
      return;
    }
  }
  // A further value of this dimension in the group: the first one no longer has every click.
  if (values.length === 1 && values[0].visitors === null) values[0].visitors = g.visitors.slice(0, g.visitors.length - 1);
  values.push({ value, clicks: 1, visitors: values.length === 0 ? null : [visitor] });
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
    const key = JSON.stringify([row.tenantId, row.domain, row.code, row.minute, row.bot, row.link, row.values]);
    let acc = out.get(key);
    if (!acc) out.set(key, (acc = { row, clicks: 0, visitors: [] }));
    acc.clicks += clicks;
    acc.visitors.push(visitor);
  };
  for (const r of rows) {
    const base = { tenantId: r.tenantId, domain: r.domain, code: r.code, minute: r.minute, bot: r.bot };
    add({ ...base, link: true, values: [] }, r.clicks, r.visitor);
    for (const d of r.dims) add({ ...base, link: false, values: [{ dimension: d.dimension, value: d.value }] }, d.clicks, r.visitor);
  }
  return [...out.values()].map(({ row, clicks, visitors }) => ({ ...row, clicks, visitors: [...new Set(visitors)] }));
}
