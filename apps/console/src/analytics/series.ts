/**
 * The analytics screen's arithmetic, apart from the page (unit-tested in series.spec.ts): the
 * range a choice names, the granularity asked of the API, the buckets the chart draws (sized to
 * the range, so a burst of one minute stands out over 24 hours: 15-minute bars, not 1440 points),
 * and how a breakdown's values read.
 */

export type Granularity = 'minute' | 'hour' | 'day';
export const GRANULARITY_SECONDS: Readonly<Record<Granularity, number>> = { minute: 60, hour: 3600, day: 86_400 };

/** The ranges offered; `custom` takes a from and a to. */
export const RANGES = [
  { id: '1h', label: 'Last hour', seconds: 3600 },
  { id: '24h', label: 'Last 24 hours', seconds: 86_400 },
  { id: '7d', label: 'Last 7 days', seconds: 7 * 86_400 },
  { id: '30d', label: 'Last 30 days', seconds: 30 * 86_400 },
  { id: 'custom', label: 'Custom', seconds: 0 },
] as const;
export type RangeId = (typeof RANGES)[number]['id'];

/** What the API is asked: epoch seconds or ISO instants, passed on as typed (the API says what is wrong with them). */
export interface RangeParams {
  from: string;
  to: string;
  granularity: Granularity;
}

/**
 * The API's range for a choice: a preset ends at the next whole minute; a custom range is sent as
 * typed (datetime-local, read in the browser's zone), an empty or unreadable field as it is, so
 * the API's INVALID_TIME_RANGE says what is wrong beside the fields.
 */
export function rangeParams(choice: RangeId, custom: { from: string; to: string }, nowMs: number): RangeParams {
  if (choice !== 'custom') {
    const seconds = RANGES.find((r) => r.id === choice)!.seconds;
    const to = Math.ceil(nowMs / 60_000) * 60;
    return { from: String(to - seconds), to: String(to), granularity: granularityFor(seconds) };
  }
  const from = localToIso(custom.from);
  const to = localToIso(custom.to);
  const span = (Date.parse(to) - Date.parse(from)) / 1000;
  return { from, to, granularity: granularityFor(Number.isFinite(span) ? span : 0) };
}

/** A datetime-local value (`2026-12-05T10:00`) as an ISO instant; anything else as it is. */
function localToIso(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return value;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? new Date(ms).toISOString() : value;
}

/** The finest granularity the API keeps for a span: minutes up to 2 days, hours up to 31, then days. */
export function granularityFor(spanSeconds: number): Granularity {
  if (spanSeconds <= 2 * 86_400) return 'minute';
  if (spanSeconds <= 31 * 86_400) return 'hour';
  return 'day';
}

/** Bucket sizes the chart may use, in seconds: whole minutes, hours and days that read well on an axis. */
export const BUCKET_LADDER = [60, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400, 172_800, 604_800] as const;

/** The chart's bucket for a range: the smallest of the ladder that gives at most `maxBuckets` bars and is a whole number of the API's buckets. */
export function bucketSeconds(spanSeconds: number, granularity: Granularity, maxBuckets = 120): number {
  const step = GRANULARITY_SECONDS[granularity];
  for (const size of BUCKET_LADDER) if (size >= step && size % step === 0 && spanSeconds / size <= maxBuckets) return size;
  return BUCKET_LADDER[BUCKET_LADDER.length - 1];
}

export interface SeriesPointIn {
  /** ISO instant of the API bucket's start. */
  time: string;
  clicks: number;
  botClicks: number;
}

export interface Bucket {
  /** Epoch seconds, inclusive. */
  start: number;
  /** Epoch seconds, exclusive. */
  end: number;
  clicks: number;
  botClicks: number;
}

/**
 * Every bucket of `size` seconds over [from, to) (aligned to whole multiples of the size, UTC), with
 * the API's points summed into them; a bucket without clicks is there with zero (the API lists
 * only buckets that have some). Clicks add up; unique visitors do not (the totals have them).
 */
export function rebucket(points: readonly SeriesPointIn[], fromIso: string, toIso: string, size: number): Bucket[] {
  const from = Math.floor(Date.parse(fromIso) / 1000);
  const to = Math.floor(Date.parse(toIso) / 1000);
  if (!Number.isFinite(from) || !Number.isFinite(to) || to <= from || size <= 0) return [];
  const first = Math.floor(from / size) * size;
  const buckets: Bucket[] = [];
  for (let start = first; start < to; start += size) buckets.push({ start, end: start + size, clicks: 0, botClicks: 0 });
  for (const p of points) {
    const t = Math.floor(Date.parse(p.time) / 1000);
    const i = Math.floor((t - first) / size);
    if (i < 0 || i >= buckets.length) continue;
    buckets[i].clicks += p.clicks;
    buckets[i].botClicks += p.botClicks;
  }
  return buckets;
}

/** The busiest bucket (the first of equals), or null when nothing was clicked. */
export function peakOf(buckets: readonly Bucket[]): Bucket | null {
  let peak: Bucket | null = null;
  for (const b of buckets) if (b.clicks > 0 && (!peak || b.clicks > peak.clicks)) peak = b;
  return peak;
}

/** A bucket size in words: `15 minutes`, `1 hour`, `2 days`. */
export function sizeInWords(seconds: number): string {
  const [n, unit] = seconds % 86_400 === 0 ? [seconds / 86_400, 'day'] : seconds % 3600 === 0 ? [seconds / 3600, 'hour'] : [seconds / 60, 'minute'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

export type Dimension = 'countries' | 'cities' | 'referers' | 'devices' | 'browsers' | 'os' | 'variants' | 'sources';

/** What a click without the value is called, per dimension. */
const NONE: Readonly<Record<Dimension, string>> = {
  countries: '(unknown)',
  cities: '(unknown)',
  referers: '(direct)',
  devices: '(none)',
  browsers: '(none)',
  os: '(none)',
  variants: '(no variant)',
  sources: '(none)',
};

/**
 * How a breakdown's value reads: an A/B variant by its URL (the API names it by its index in the
 * link's variants), a source as words, none as such.
 */
export function valueLabel(dimension: Dimension, value: string | null, variants: ReadonlyArray<{ url: string }> | null = null): string {
  if (value === null || value === '') return NONE[dimension];
  if (dimension === 'variants') {
    if (!/^\d+$/.test(value)) return value;
    const url = variants?.[Number(value)]?.url;
    return url ? `${url} (variant ${Number(value) + 1})` : `variant ${Number(value) + 1}`;
  }
  if (dimension === 'sources') return value === 'qr' ? 'QR code' : value === 'link' ? 'the link itself' : value;
  return value;
}
