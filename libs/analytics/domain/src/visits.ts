import { createHash } from 'crypto';
import type { CountedClicks } from './aggregation';
import { NO_STRING, ORPHAN_FLAG, QR_FLAG } from './click-columns';
import { ClickEvent, ClickSource } from './click-event';

/** How a visit reached the short URL: its QR code, or any other way (docs/design.md, "QR codes"). */
export type VisitSource = ClickSource;

/**
 * One click as the raw visits keep it (docs/analytics.md, "Raw visits"): what the rollups count,
 * one row per click, never the client address. Empty facts are null (no referer, unknown country,
 * no variant; region and city unknown or not looked up: GEO_DATABASE=country).
 */
export interface VisitRow {
  /** Stable id of the visit (decimal, 64 bits), derived from the event id (producer, seq). */
  readonly id: string;
  /** Epoch ms, as counted. */
  readonly time: number;
  /** '' for an orphan visit (a code that does not exist). */
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
  readonly linkId: string;
  readonly country: string | null;
  readonly region: string | null;
  readonly city: string | null;
  readonly refererHost: string | null;
  readonly device: string;
  readonly browser: string;
  readonly os: string;
  readonly variant: number | null;
  readonly source: VisitSource;
  readonly bot: boolean;
  /** The visitor id of the event (keyed hash, a new one every UTC day). */
  readonly visitor: number;
  readonly producer: string;
  readonly seq: number;
  /**
   * The click id the redirect passed to the target (a link with conversion tracking): kept so a lead
   * of that click takes its dimensions (docs/design.md, "Conversions"); not shown by the visits API.
   */
  readonly clickId?: string;
}

/** Where a visits listing goes on from: the last visit shown (newest first by time, then by id). */
export interface VisitPosition {
  /** Epoch ms. */
  readonly time: number;
  readonly id: string;
}

/**
 * Raw visits column by column (one entry per click), so a write of 50 000 clicks makes no object per
 * click: string columns hold ids into `strings` (NO_STRING: none), numbers sit in typed arrays.
 */
export interface VisitColumns {
  readonly length: number;
  readonly strings: readonly string[];
  /** Epoch ms, as counted. */
  readonly time: Float64Array;
  /** The visit id (64 bits) as two words. */
  readonly idHigh: Uint32Array;
  readonly idLow: Uint32Array;
  /** '' (an id of it) for an orphan visit. */
  readonly tenant: Int32Array;
  readonly domain: Int32Array;
  readonly code: Int32Array;
  readonly linkId: Int32Array;
  readonly country: Int32Array;
  readonly region: Int32Array;
  readonly city: Int32Array;
  readonly referer: Int32Array;
  readonly device: Int32Array;
  readonly browser: Int32Array;
  readonly os: Int32Array;
  /** -1: no variant. */
  readonly variant: Float64Array;
  /** 1: by the link's QR code. */
  readonly qr: Uint8Array;
  readonly bot: Uint8Array;
  readonly visitor: Float64Array;
  readonly producer: Int32Array;
  readonly seq: Float64Array;
  /** The click id of a click of a link with conversion tracking; NO_STRING: none. */
  readonly clickId: Int32Array;
}

const TWO_32 = 2 ** 32;
/** The 64-bit golden ratio, odd: multiplying by it is a bijection of 64-bit numbers. */
const STEP_HIGH = 0x9e3779b9;
const STEP_LOW = 0x7f4a7c15;

/**
 * A producer's part of its visits' ids: the first 8 bytes of SHA-256 of its name, as two words.
 * Computed once per producer and batch, not per click.
 */
export function producerKeyOf(producer: string): readonly [number, number] {
  const digest = createHash('sha256').update(producer).digest();
  return [digest.readUInt32BE(0), digest.readUInt32BE(4)];
}

/** High 32 bits of the 64-bit product of two 32-bit words. */
function mulHigh(a: number, b: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const middle = ((a0 * b0) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  return (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (middle >>> 16)) >>> 0;
}

/**
 * Writes the visit id of (producer, seq) at `at`: key(producer) + seq × 0x9E3779B97F4A7C15 mod
 * 2^64. Two clicks of one producer never share an id (the step is odd), the same click always has
 * the same id, and producers' keys are random 64-bit numbers: unique in practice, a few integer
 * operations per click instead of a SHA-256.
 */
export function writeVisitId(key: readonly [number, number], seq: number, high: Uint32Array, low: Uint32Array, at: number): void {
  const seqLow = seq >>> 0;
  const seqHigh = Math.floor(seq / TWO_32) >>> 0;
  const productLow = Math.imul(seqLow, STEP_LOW) >>> 0;
  const productHigh = (mulHigh(seqLow, STEP_LOW) + Math.imul(seqHigh, STEP_LOW) + Math.imul(seqLow, STEP_HIGH)) >>> 0;
  const sumLow = productLow + key[1];
  low[at] = sumLow >>> 0;
  high[at] = (productHigh + key[0] + (sumLow >= TWO_32 ? 1 : 0)) >>> 0;
}

/** A 64-bit id from the event id (decimal): unique in practice, the same on every write of the click. */
export function visitIdOf(event: Pick<ClickEvent, 'producer' | 'seq'>): string {
  const high = new Uint32Array(1);
  const low = new Uint32Array(1);
  writeVisitId(producerKeyOf(event.producer), event.seq, high, low, 0);
  return ((BigInt(high[0]) << 32n) | BigInt(low[0])).toString();
}

/**
 * The raw visits of counted clicks (all, or those at `positions`): what the rollups count, one row
 * per click, copied column by column.
 */
export function visitsOf(counted: CountedClicks, positions: Int32Array | null = null): VisitColumns {
  const c = counted.columns;
  const n = positions ? positions.length : counted.length;
  const none = c.intern('');
  const keys = new Map<number, readonly [number, number]>();
  const v = emptyVisitColumns(c.strings, n);
  for (let k = 0; k < n; k++) {
    const j = positions ? positions[k] : k;
    const i = counted.click[j];
    const producer = c.producer[i];
    let key = keys.get(producer);
    if (!key) keys.set(producer, (key = producerKeyOf(c.strings[producer])));
    writeVisitId(key, c.seq[i], v.idHigh, v.idLow, k);
    v.time[k] = counted.time[j];
    v.tenant[k] = c.flags[i] & ORPHAN_FLAG ? none : c.tenant[i];
    v.domain[k] = c.domain[i];
    v.code[k] = c.code[i];
    v.linkId[k] = c.link[i];
    v.country[k] = c.country[i];
    v.region[k] = c.region[i];
    v.city[k] = c.city[i];
    v.referer[k] = c.referer[i];
    v.device[k] = counted.device[j];
    v.browser[k] = counted.browser[j];
    v.os[k] = counted.os[j];
    v.variant[k] = c.variant[i];
    v.qr[k] = c.flags[i] & QR_FLAG ? 1 : 0;
    v.bot[k] = counted.bot[j];
    v.visitor[k] = c.visitor[i];
    v.producer[k] = producer;
    v.seq[k] = c.seq[i];
    v.clickId[k] = c.clickId[i];
  }
  return v;
}

/** The columns of visits given as objects (tests, and any writer of a few visits). */
export function visitColumnsOf(rows: readonly VisitRow[]): VisitColumns {
  const strings: string[] = [];
  const ids = new Map<string, number>();
  const id = (s: string) => ids.get(s) ?? (ids.set(s, strings.length), strings.push(s) - 1);
  const idOrNone = (s: string | null) => (s === null ? NO_STRING : id(s));
  const v = emptyVisitColumns(strings, rows.length);
  rows.forEach((r, k) => {
    const visitId = BigInt(r.id);
    v.idHigh[k] = Number(visitId >> 32n);
    v.idLow[k] = Number(visitId & 0xffff_ffffn);
    v.time[k] = r.time;
    v.tenant[k] = id(r.tenantId);
    v.domain[k] = id(r.domain);
    v.code[k] = id(r.code);
    v.linkId[k] = id(r.linkId);
    v.country[k] = idOrNone(r.country);
    v.region[k] = idOrNone(r.region);
    v.city[k] = idOrNone(r.city);
    v.referer[k] = idOrNone(r.refererHost);
    v.device[k] = id(r.device);
    v.browser[k] = id(r.browser);
    v.os[k] = id(r.os);
    v.variant[k] = r.variant ?? -1;
    v.qr[k] = r.source === 'qr' ? 1 : 0;
    v.bot[k] = r.bot ? 1 : 0;
    v.visitor[k] = r.visitor;
    v.producer[k] = id(r.producer);
    v.seq[k] = r.seq;
    v.clickId[k] = idOrNone(r.clickId ?? null);
  });
  return v;
}

/** Row `k` of visit columns as an object. */
export function visitRowAt(v: VisitColumns, k: number): VisitRow {
  const s = (id: number) => (id === NO_STRING ? null : v.strings[id]);
  return {
    id: ((BigInt(v.idHigh[k]) << 32n) | BigInt(v.idLow[k])).toString(),
    time: v.time[k],
    tenantId: v.strings[v.tenant[k]],
    domain: v.strings[v.domain[k]],
    code: v.strings[v.code[k]],
    linkId: v.strings[v.linkId[k]],
    country: s(v.country[k]),
    region: s(v.region[k]),
    city: s(v.city[k]),
    refererHost: s(v.referer[k]),
    device: v.strings[v.device[k]],
    browser: v.strings[v.browser[k]],
    os: v.strings[v.os[k]],
    variant: v.variant[k] < 0 ? null : v.variant[k],
    source: v.qr[k] ? 'qr' : 'link',
    bot: v.bot[k] === 1,
    visitor: v.visitor[k],
    producer: v.strings[v.producer[k]],
    seq: v.seq[k],
  };
}

function emptyVisitColumns(strings: readonly string[], n: number) {
  return {
    length: n,
    strings,
    time: new Float64Array(n),
    idHigh: new Uint32Array(n),
    idLow: new Uint32Array(n),
    tenant: new Int32Array(n),
    domain: new Int32Array(n),
    code: new Int32Array(n),
    linkId: new Int32Array(n),
    country: new Int32Array(n),
    region: new Int32Array(n),
    city: new Int32Array(n),
    referer: new Int32Array(n),
    device: new Int32Array(n),
    browser: new Int32Array(n),
    os: new Int32Array(n),
    variant: new Float64Array(n),
    qr: new Uint8Array(n),
    bot: new Uint8Array(n),
    visitor: new Float64Array(n),
    producer: new Int32Array(n),
    seq: new Float64Array(n),
    clickId: new Int32Array(n).fill(NO_STRING),
  };
}
