import { ConsumerProgress, DIMENSION_ID, DimensionValue, NO_STRING, RollupRow, VisitColumns } from '@shortlink/clicks-domain';
import { LEDGER_TENANT, ROW_KIND } from './migrations';
import { OlapColumn } from './olap-executor';
import { RowBinaryWriter } from './row-binary';

/**
 * The consumer's writes as RowBinary (docs/design.md, "Analytics"): rollup rows into the Null table
 * `rollup_input` (migration 0005), raw visits straight into `visits`, each with the ledger rows of
 * the tables it reaches. Values are checked as they are encoded; a bad one throws before anything
 * is sent.
 */

const DAY = 86_400;
const UINT64_MAX = 0xffff_ffff_ffff_ffffn;

/** `rollup_input`'s columns, in the order each row is encoded. */
export const ROLLUP_COLUMNS: readonly OlapColumn[] = [
  { name: 'kind', type: 'UInt8' },
  { name: 'targets', type: 'UInt16' },
  { name: 'tenant_id', type: 'String' },
  { name: 'domain', type: 'String' },
  { name: 'code', type: 'String' },
  { name: 'minute', type: "DateTime('UTC')" },
  { name: 'bot', type: 'UInt8' },
  { name: 'dims', type: 'Array(UInt8)' },
  { name: 'dim_values', type: 'Array(String)' },
  { name: 'click_count', type: 'UInt64' },
  { name: 'visitor_ids', type: 'Array(UInt64)' },
  { name: 'last_offset', type: 'UInt64' },
];

/** `visits`' columns (migration 0004), in the order each row is encoded. */
export const VISIT_COLUMNS: readonly OlapColumn[] = [
  { name: 'tenant_id', type: 'String' },
  { name: 'domain', type: 'String' },
  { name: 'code', type: 'String' },
  { name: 't', type: "DateTime('UTC')" },
  { name: 'ms', type: 'UInt16' },
  { name: 'visit_id', type: 'UInt64' },
  { name: 'link_id', type: 'String' },
  { name: 'country', type: 'String' },
  { name: 'region', type: 'String' },
  { name: 'city', type: 'String' },
  { name: 'referer', type: 'String' },
  { name: 'device', type: 'String' },
  { name: 'browser', type: 'String' },
  { name: 'os', type: 'String' },
  { name: 'variant', type: 'String' },
  { name: 'visit_source', type: 'String' },
  { name: 'bot', type: 'UInt8' },
  { name: 'visitor', type: 'UInt64' },
  { name: 'producer', type: 'String' },
  { name: 'seq', type: 'UInt64' },
  { name: 'ledger_offset', type: 'UInt64' },
  // Migration 0007: a lead of the click takes its dimensions from here (docs/design.md, "Conversions").
  { name: 'click_id', type: 'String' },
];

/** Midnight (UTC) of the day of an instant, epoch seconds. */
export const dayStart = (epochSeconds: number): number => Math.floor(epochSeconds / DAY) * DAY;

/** The UTC days (epoch s) the rows of a write fall in: each table written keeps a ledger entry for each. */
export function daysOf(rollups: readonly RollupRow[], visits: VisitColumns | undefined): Set<number> {
  const days = new Set<number>();
  for (const r of rollups) days.add(dayStart(r.minute));
  if (visits) for (let k = 0; k < visits.length; k++) days.add(dayStart(Math.floor(visits.time[k] / 1000)));
  return days;
}

/**
 * Rollup rows for the tables of `targets` (bits), then a ledger row per day when `through` is given.
 * A list of visitors shared by several rows is checked and encoded once.
 */
export function encodeRollups(rows: readonly RollupRow[], targets: number, through: ConsumerProgress | undefined, days: Iterable<number>): Buffer {
  let size = 256;
  for (const r of rows) size += 64 + (Array.isArray(r.visitors) ? r.visitors.length * 8 : 0);
  const w = new RowBinaryWriter(size);
  const encodedVisitors = new Map<readonly number[], Buffer>();
  for (const r of rows) {
    assertUInt(r.minute, 'minute', 0xffff_ffff);
    assertUInt(r.clicks, 'clicks');
    for (const key of ['tenantId', 'domain', 'code'] as const) {
      if (typeof r[key] !== 'string') throw new TypeError(`RollupRow.${key} must be a string`);
    }
    if (!Array.isArray(r.visitors) || !Array.isArray(r.values)) throw new TypeError('RollupRow.visitors and values must be arrays');
    const values: readonly DimensionValue[] = r.values;
    w.u8(r.link ? ROW_KIND.aggregate : ROW_KIND.values);
    w.u16(targets);
    w.string(r.tenantId);
    w.string(r.domain);
    w.string(r.code);
    w.u32(r.minute);
    w.u8(r.bot ? 1 : 0);
    w.length128(values.length);
    for (const v of values) {
      const dim = DIMENSION_ID[v.dimension];
      if (dim === undefined) throw new TypeError(`unknown dimension ${String(v.dimension)}`);
      w.u8(dim);
    }
    w.length128(values.length);
    for (const v of values) {
      if (typeof v.value !== 'string') throw new TypeError('RollupRow.values: a value must be a string');
      w.string(v.value);
    }
    w.u64(r.clicks);
    let visitors = encodedVisitors.get(r.visitors);
    if (!visitors) {
      const list = new RowBinaryWriter(10 + r.visitors.length * 8);
      list.length128(r.visitors.length);
      for (const v of r.visitors) {
        assertUInt(v, 'visitor');
        list.u64(v);
      }
      visitors = list.bytes();
      encodedVisitors.set(r.visitors, visitors);
    }
    w.raw(visitors);
    w.u64(0);
  }
  if (through) {
    const ledger = ledgerOf(through);
    for (const day of days) {
      // In every table of `targets`, in the partition of `day`: (source, partition, day) -> last offset.
      w.u8(ROW_KIND.ledger);
      w.u16(targets);
      w.string(LEDGER_TENANT);
      w.string(ledger.source);
      w.string(ledger.partition);
      w.u32(day);
      w.u8(0); // bot
      w.length128(1); // dims: [0]
      w.u8(0);
      w.length128(1); // dim_values: ['']
      w.u8(0);
      w.u64(0); // click_count
      w.length128(0); // visitor_ids: []
      w.u64Big(ledger.lastOffset);
    }
  }
  return w.bytes();
}

/** Raw visits, then a ledger row per day when `through` is given. */
export function encodeVisits(v: VisitColumns, through: ConsumerProgress | undefined, days: Iterable<number>): Buffer {
  const w = new RowBinaryWriter(256 + v.length * 128);
  // Each string of the batch encoded once, with its length, and copied into every row that names it.
  const text = new EncodedStrings(v.strings);
  const required = (id: number, field: string): Buffer => {
    if (id < 0) throw new TypeError(`VisitColumns.${field} must name a string`);
    return text.get(id);
  };
  const variants = new Map<number, Buffer>();
  for (let k = 0; k < v.length; k++) {
    const time = v.time[k];
    assertUInt(time, 'time', 0xffff_ffff * 1000 + 999, 'VisitColumns');
    assertUInt(v.visitor[k], 'visitor', Number.MAX_SAFE_INTEGER, 'VisitColumns');
    assertUInt(v.seq[k], 'seq', Number.MAX_SAFE_INTEGER, 'VisitColumns');
    const variant = v.variant[k];
    let variantText = EMPTY;
    if (variant !== -1) {
      assertUInt(variant, 'variant', 0xffff, 'VisitColumns');
      variantText = variants.get(variant) ?? prefixed(String(variant));
      variants.set(variant, variantText);
    }
    const second = Math.floor(time / 1000);
    w.raw(required(v.tenant[k], 'tenant'));
    w.raw(required(v.domain[k], 'domain'));
    w.raw(required(v.code[k], 'code'));
    w.u32(second);
    w.u16(time - second * 1000);
    w.u64Words(v.idHigh[k], v.idLow[k]);
    w.raw(required(v.linkId[k], 'linkId'));
    w.raw(text.get(v.country[k]));
    w.raw(text.get(v.region[k]));
    w.raw(text.get(v.city[k]));
    w.raw(text.get(v.referer[k]));
    w.raw(required(v.device[k], 'device'));
    w.raw(required(v.browser[k], 'browser'));
    w.raw(required(v.os[k], 'os'));
    w.raw(variantText);
    w.raw(v.qr[k] ? QR : LINK);
    w.u8(v.bot[k] ? 1 : 0);
    w.u64(v.visitor[k]);
    w.raw(required(v.producer[k], 'producer'));
    w.u64(v.seq[k]);
    w.u64(0);
    w.raw(text.get(v.clickId[k]));
  }
  if (through) {
    const ledger = ledgerOf(through);
    for (const day of days) {
      w.string(LEDGER_TENANT);
      w.string(ledger.source);
      w.string(ledger.partition);
      w.u32(day);
      w.u16(0); // ms
      w.u64(0); // visit_id
      for (let i = 0; i < 10; i++) w.u8(0); // link_id ... visit_source: ''
      w.u8(0); // bot
      w.u64(0); // visitor
      w.u8(0); // producer ''
      w.u64(0); // seq
      w.u64Big(ledger.lastOffset);
      w.u8(0); // click_id ''
    }
  }
  return w.bytes();
}

/** A string as RowBinary writes it: its length, then its UTF-8 bytes. */
function prefixed(s: string): Buffer {
  const w = new RowBinaryWriter(16 + s.length * 3);
  w.string(s);
  return Buffer.from(w.bytes());
}

const EMPTY = prefixed('');
const QR = prefixed('qr');
const LINK = prefixed('link');

/** The strings of one dictionary as RowBinary writes them (length and bytes), each encoded on first use; NO_STRING is ''. */
class EncodedStrings {
  private readonly cache: Array<Buffer | undefined> = [];

  constructor(private readonly strings: readonly string[]) {}

  get(id: number): Buffer {
    if (id === NO_STRING) return EMPTY;
    let bytes = this.cache[id];
    if (!bytes) {
      if (!(id >= 0 && id < this.strings.length)) throw new TypeError(`no string ${id} in the visits' dictionary`);
      this.cache[id] = bytes = prefixed(this.strings[id]);
    }
    return bytes;
  }
}

/** A progress as the ledger rows keep it: the source, the partition as their `code`, the offset checked. */
function ledgerOf(p: ConsumerProgress): { source: string; partition: string; lastOffset: bigint } {
  assertProgress(p);
  return { source: p.source, partition: String(p.partition), lastOffset: BigInt(p.lastOffset) };
}

export function assertProgress(p: ConsumerProgress): void {
  assertUInt(p.partition, 'partition', 0xffff_ffff, 'ConsumerProgress');
  if (typeof p.lastOffset !== 'string' || !/^[0-9]+$/.test(p.lastOffset) || BigInt(p.lastOffset) > UINT64_MAX) {
    throw new TypeError(`ConsumerProgress.lastOffset must be a non-negative decimal integer string, got ${JSON.stringify(p.lastOffset)}`);
  }
  if (typeof p.source !== 'string' || p.source === '') throw new TypeError('ConsumerProgress.source must be a non-empty string');
}

export function assertUInt(value: number, field: string, max = Number.MAX_SAFE_INTEGER, type = 'RollupRow'): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > max) {
    throw new TypeError(`${type}.${field} must be an integer in [0, ${max}], got ${String(value)}`);
  }
}
