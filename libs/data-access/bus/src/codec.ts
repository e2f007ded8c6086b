import { CLICK_EVENT_VERSION, ClickColumns, ClickEvent, NO_STRING, ORPHAN_FLAG, QR_FLAG } from '@shortlink/clicks-domain';

/** Topic of the click events unless configured otherwise. */
export const DEFAULT_CLICK_TOPIC = 'shortlink.clicks';

/** The key a click is partitioned by: all clicks of one link land on one partition, in order. */
export function clickMessageKey(event: Pick<ClickEvent, 'domain' | 'code'>): string {
  return `${event.domain}/${event.code}`;
}

/**
 * The wire format (docs/analytics.md, "Events"): ONE record carries the clicks of one flush that
 * go to one partition, binary, strings interned per record. Per click that is a few bytes of
 * varints instead of a JSON object and a Kafka record of its own; the per-record cost (framing,
 * CRC, compression) is paid once per flush and partition, which is what brought the redirect's
 * Kafka setting close to the memory bus (docs/benchmarks.md).
 *
 *   u8 magic 0xC1, u8 version (4; 3 and 2 are read too)
 *   varint n; n strings (varint byte length, UTF-8)
 *   varint m; m events, each:
 *     u8 flags (1 orphan, 2 country, 4 referer, 8 variant, 16 qr, 32 region, 64 city, 128 click id; 16-64 since 3, 128 since 4)
 *     varint producer (string index), varint seq
 *     zigzag varint occurredAt - previous event's occurredAt (the first: - 0)
 *     varint tenant, link, domain, code (string indexes)
 *     varint visitor
 *     [varint country] [varint referer host] (string indexes), varint user agent (string index)
 *     [varint variant]
 *     [varint region] [varint city] (string indexes)
 *     [varint click id length, its bytes] (not interned: every click's is its own)
 *
 * Version 3 adds the source (a flag) and region and city after every field of 2, so a click of a
 * plain link without a city costs not one byte more. A version-2 record (a producer not yet
 * upgraded) reads as clicks by `link` without region or city; consumers are upgraded first.
 * Version 4 adds the click id of a link with conversion tracking (docs/analytics.md, "Conversions"),
 * last, so a click without one costs what it did in 3.

 */
const MAGIC = 0xc1;
const F_ORPHAN = 1;
const F_COUNTRY = 2;
const F_REFERER = 4;
const F_VARIANT = 8;
const F_QR = 16;
const F_REGION = 32;
const F_CITY = 64;
const F_CLICK_ID = 128;
/** The version-2 and -3 records this reader still decodes (docs/analytics.md, "Events"). */
const PREVIOUS_VERSIONS: readonly number[] = [2, 3];
const MAX_CLICK_ID_BYTES = 64;
/** Bounds a decoder accepts, so a corrupt length cannot make it allocate without end. */
const MAX_STRINGS = 1_000_000;
const MAX_EVENTS = 1_000_000;
/** The fewest bytes a click takes: flags, producer, seq, time, tenant, link, domain, code, visitor, user agent. */
const MIN_EVENT_BYTES = 10;

class Writer {
  buf: Buffer;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }
  /** Unsigned integer up to 2^53. */
  varint(v: number): void {
    this.ensure(8);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }
  string(s: string): void {
    const bytes = Buffer.byteLength(s);
    this.varint(bytes);
    this.ensure(bytes);
    this.pos += this.buf.write(s, this.pos, bytes, 'utf8');
  }
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/**
 * The record's string table. Each field remembers the last string it interned: a burst repeats
 * its producer, tenant, link, code and agent, and an identical string is then not looked up.
 */
class StringTable {
  readonly indexes = new Map<string, number>();
  private readonly lastString: Array<string | undefined> = [];
  private readonly lastIndex: number[] = [];

  /** The index of `s`, for the field numbered `field`. */
  at(field: number, s: string): number {
    if (this.lastString[field] === s) return this.lastIndex[field];
    let i = this.indexes.get(s);
    if (i === undefined) this.indexes.set(s, (i = this.indexes.size));
    this.lastString[field] = s;
    this.lastIndex[field] = i;
    return i;
  }
}

const PRODUCER = 0;
const TENANT = 1;
const LINK = 2;
const DOMAIN = 3;
const CODE = 4;
const COUNTRY = 5;
const REFERER = 6;
const AGENT = 7;
const REGION = 8;
const CITY = 9;

/** Encodes the events (any number, any links) as one record. */
export function encodeClickRecord(events: readonly ClickEvent[]): Buffer {
  const strings = new StringTable();
  const body = new Writer(64 + events.length * 24);
  body.varint(events.length);
  let previous = 0;
  for (const e of events) {
    const flags =
      (e.kind === 'orphan' ? F_ORPHAN : 0) |
      (e.country !== null ? F_COUNTRY : 0) |
      (e.refererHost !== null ? F_REFERER : 0) |
      (e.variant !== null ? F_VARIANT : 0) |
      (e.source === 'qr' ? F_QR : 0) |
      (e.region !== null ? F_REGION : 0) |
      (e.city !== null ? F_CITY : 0) |
      (e.clickId !== undefined ? F_CLICK_ID : 0);
    body.u8(flags);
    body.varint(strings.at(PRODUCER, e.producer));
    body.varint(e.seq);
    const delta = e.occurredAt - previous;
    body.varint(delta >= 0 ? delta * 2 : -delta * 2 - 1);
    previous = e.occurredAt;
    body.varint(strings.at(TENANT, e.tenantId));
    body.varint(strings.at(LINK, e.linkId));
    body.varint(strings.at(DOMAIN, e.domain));
    body.varint(strings.at(CODE, e.code));
    body.varint(e.visitor);
    if (e.country !== null) body.varint(strings.at(COUNTRY, e.country));
    if (e.refererHost !== null) body.varint(strings.at(REFERER, e.refererHost));
    body.varint(strings.at(AGENT, e.userAgent));
    if (e.variant !== null) body.varint(e.variant);
    if (e.region !== null) body.varint(strings.at(REGION, e.region));
    if (e.city !== null) body.varint(strings.at(CITY, e.city));
    if (e.clickId !== undefined) body.string(e.clickId);
  }
  const head = new Writer(64 + strings.indexes.size * 24);
  head.u8(MAGIC);
  head.u8(CLICK_EVENT_VERSION);
  head.varint(strings.indexes.size);
  for (const s of strings.indexes.keys()) head.string(s);
  return Buffer.concat([head.bytes(), body.bytes()]);
}

/**
 * Clicks a batch of records of these sizes (bytes) probably holds: a click takes a few bytes once
 * its strings are interned (about 14 for a burst on one link, docs/analytics.md "Events").
 */
export function clicksIn(recordBytes: number): number {
  return recordBytes / 12;
}

/** Why a record was not decoded, for the skip counter and its log line. */
export type DecodeFailure = 'malformed' | 'unknown-version';

/**
 * Decodes one record into `columns` as a record of its own (offset, time in the log): its strings
 * join the batch's dictionary once each, its clicks become entries of the typed columns, and no
 * object is made per click (docs/design.md, "Clicks and analytics"). Returns the clicks added, or
 * why nothing was (malformed bytes, a JSON message of the first format, a version this reader does
 * not know); a record found malformed halfway is taken back whole.
 */
export function readClickRecord(value: Buffer | string | null | undefined, columns: ClickColumns, offset: string, recordedAt: number): number | DecodeFailure {
  if (value === null || value === undefined || typeof value === 'string' || value.length < 2 || value[0] !== MAGIC) return 'malformed';
  if (value[1] !== CLICK_EVENT_VERSION && !PREVIOUS_VERSIONS.includes(value[1])) return 'unknown-version';
  columns.beginRecord(offset, recordedAt);
  const added = readEvents(value, columns);
  if (added < 0) {
    columns.abortRecord();
    return 'malformed';
  }
  return added;
}

/** The clicks of one record, or -1 when its bytes are not a well-formed record. */
function readEvents(buf: Buffer, c: ClickColumns): number {
  const end = buf.length;
  let pos = 2;
  const varint = (): number => {
    let v = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (pos >= end) throw new RangeError('truncated');
      const b = buf[pos++];
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 0x80;
    }
    throw new RangeError('varint too long');
  };
  try {
    const n = varint();
    // Each string takes a byte at least, each click MIN_EVENT_BYTES: a corrupt count allocates nothing.
    if (n > MAX_STRINGS || n > end - pos) return -1;
    // The record's string table, as ids of the batch's dictionary.
    const ids = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      const length = varint();
      if (pos + length > end) return -1;
      ids[k] = c.intern(buf.toString('utf8', pos, pos + length));
      pos += length;
    }
    const str = (): number => {
      const k = varint();
      if (k >= n) throw new RangeError('string index');
      return ids[k];
    };
    const m = varint();
    if (m > MAX_EVENTS || m * MIN_EVENT_BYTES > end - pos) return -1;
    const first = c.reserve(m);
    const record = c.recordCount - 1;
    let previous = 0;
    for (let i = first; i < first + m; i++) {
      if (pos >= end) return -1;
      const flags = buf[pos++];
      c.record[i] = record;
      // Version 2 has no flags beyond 8: its clicks came by link, without region or city.
      c.flags[i] = (flags & F_ORPHAN ? ORPHAN_FLAG : 0) | (flags & F_QR ? QR_FLAG : 0);
      c.producer[i] = str();
      c.seq[i] = varint();
      const z = varint();
      previous += z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      c.occurredAt[i] = previous;
      c.tenant[i] = str();
      c.link[i] = str();
      c.domain[i] = str();
      c.code[i] = str();
      c.visitor[i] = varint();
      c.country[i] = flags & F_COUNTRY ? str() : NO_STRING;
      c.referer[i] = flags & F_REFERER ? str() : NO_STRING;
      c.userAgent[i] = str();
      c.variant[i] = flags & F_VARIANT ? varint() : -1;
      c.region[i] = flags & F_REGION ? str() : NO_STRING;
      c.city[i] = flags & F_CITY ? str() : NO_STRING;
      if (flags & F_CLICK_ID) {
        const length = varint();
        if (length > MAX_CLICK_ID_BYTES || pos + length > end) return -1;
        c.clickId[i] = c.intern(buf.toString('latin1', pos, pos + length));
        pos += length;
      } else c.clickId[i] = NO_STRING;
    }
    if (pos !== end) return -1;
    c.length = first + m;
    return m;
  } catch {
    return -1;
  }
}

/**
 * The events of one record as objects (tools and tests; consumers read columns); a failure reason
 * for anything else. The caller skips and counts those.
 */
export function decodeClickRecord(value: Buffer | string | null | undefined): ClickEvent[] | DecodeFailure {
  const columns = new ClickColumns();
  const read = readClickRecord(value, columns, '0', 0);
  if (typeof read === 'string') return read;
  return Array.from({ length: columns.length }, (_, i) => columns.eventAt(i));
}

/**
 * Kafka's default partitioner (murmur2 of the key, as the Java client and kafkajs compute it,
 * made positive): other tools agree on where a link's clicks are.
 */
export function kafkaPartitionOf(key: string, partitions: number): number {
  return (murmur2(Buffer.from(key)) & 0x7fffffff) % partitions;
}

function murmur2(data: Buffer): number {
  const m = 0x5bd1e995;
  const length = data.length;
  let h = (0x9747b28c ^ length) | 0;
  const len4 = length & ~3;
  for (let i = 0; i < len4; i += 4) {
    let k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const tail = length & 3;
  if (tail === 3) h ^= data[len4 + 2] << 16;
  if (tail >= 2) h ^= data[len4 + 1] << 8;
  if (tail >= 1) {
    h ^= data[len4];
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h;
}

/** Groups events by partition, keeping their order within each partition. */
export function byPartition(events: readonly ClickEvent[], partitionOf: (key: string) => number): Map<number, ClickEvent[]> {
  const groups = new Map<number, ClickEvent[]>();
  // Partitions by domain and code, without building the key of a link seen before in this batch.
  const known = new Map<string, Map<string, ClickEvent[]>>();
  let lastDomain: string | null = null;
  let lastCode = '';
  let group: ClickEvent[] = [];
  for (const e of events) {
    // Bursts on one link are the common case: nothing is looked up when the link repeats.
    if (e.domain !== lastDomain || e.code !== lastCode) {
      let codes = known.get(e.domain);
      if (codes === undefined) known.set(e.domain, (codes = new Map()));
      let g = codes.get(e.code);
      if (g === undefined) {
        const p = partitionOf(clickMessageKey(e));
        g = groups.get(p);
        if (g === undefined) groups.set(p, (g = []));
        codes.set(e.code, g);
      }
      group = g;
      lastDomain = e.domain;
      lastCode = e.code;
    }
    group.push(e);
  }
  return groups;
}
