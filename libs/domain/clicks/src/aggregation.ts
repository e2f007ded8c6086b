import { UserAgentFacts } from '@shortlink/visitors-domain';
import { ClickEvent } from './click-event';

/** The breakdowns analysts ask for (docs/analytics.md, "Aggregates"). */
export const DIMENSIONS = ['countries', 'referers', 'devices', 'browsers', 'os', 'variants'] as const;
export type Dimension = (typeof DIMENSIONS)[number];
/** Stable ids of the dimensions in storage: never renumber, only add. */
export const DIMENSION_ID: Readonly<Record<Dimension, number>> = { countries: 1, referers: 2, devices: 3, browsers: 4, os: 5, variants: 6 };

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
 * Folds click events into per-minute visitor rows (the article's one-minute tumbling window,
 * finished in the store: rows of the same minute from later batches merge there). `classify`
 * gives the user agent's device, browser, OS and bot flag (a cached parser).
 */
export function aggregateClicks(events: Iterable<ClickEvent>, classify: (userAgent: string) => UserAgentFacts): VisitorMinuteRow[] {
  const rows = new Map<string, Accumulating>();
  /** link + minute -> distinct referers (or orphan codes) kept so far. */
  const distinct = new Map<string, Set<string>>();
  const capped = (scope: string, value: string): string => {
    let seen = distinct.get(scope);
    if (!seen) distinct.set(scope, (seen = new Set()));
    if (seen.has(value)) return value;
    if (seen.size >= MAX_VALUES_PER_MINUTE) return OTHER;
    seen.add(value);
    return value;
  };
  for (const e of events) {
    const minute = Math.floor(e.occurredAt / 60_000) * 60;
    const facts = classify(e.userAgent);
    const orphan = e.kind === 'orphan';
    const code = orphan ? capped(`${e.domain}\u0000${minute}`, e.code) : e.code;
    const tenantId = orphan ? '' : e.tenantId;
    const key = `${tenantId}\u0000${e.domain}\u0000${code}\u0000${minute}\u0000${facts.bot ? 1 : 0}\u0000${e.visitor}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { tenantId, domain: e.domain, code, minute, bot: facts.bot, visitor: e.visitor, clicks: 0, dims: new Map() }));
    row.clicks++;
    if (orphan) continue;
    const referer = e.refererHost === null ? NONE : capped(`${tenantId}\u0000${e.domain}\u0000${code}\u0000${minute}`, e.refererHost);
    add(row.dims, 'countries', e.country ?? NONE);
    add(row.dims, 'referers', referer);
    add(row.dims, 'devices', facts.device);
    add(row.dims, 'browsers', facts.browser);
    add(row.dims, 'os', facts.os);
    add(row.dims, 'variants', e.variant === null ? NONE : String(e.variant));
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
