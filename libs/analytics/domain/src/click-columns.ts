import type { ClickBatch, ClickEvent, DeliveredClick } from './click-event';

/** A string column's value when the click has none (no country, no referer, ...). */
export const NO_STRING = -1;
/** A click's flag bits in `ClickColumns.flags`. */
export const ORPHAN_FLAG = 1;
export const QR_FLAG = 2;

const DEFAULT_CAPACITY = 1024;

/**
 * The clicks of one batch, column by column (docs/design.md, "Clicks and analytics"): a typed array
 * per field, strings as ids into one dictionary per batch, and the records that carried them. The
 * consumer reads a batch of 50 000 clicks without making an object per click; `eventAt` makes one
 * for the readers that want objects (webhooks, the live stream, tests).
 *
 * Filled record by record (`beginRecord`, `add`, `endRecord`); a record found malformed halfway is
 * taken back whole (`abortRecord`).
 */
export class ClickColumns {
  /** Clicks held. */
  length = 0;
  /** Every string a click names, each once; the string columns hold indexes into it. */
  readonly strings: string[] = [];
  private readonly ids = new Map<string, number>();

  /** Per record: its offset (decimal and as a bigint), when it entered the log (epoch ms), its first click. */
  readonly recordOffsets: string[] = [];
  readonly recordOffsetValues: bigint[] = [];
  recordedAt = new Float64Array(16);
  recordStart = new Int32Array(16);

  /** Per click. `record` indexes the record columns; string columns hold NO_STRING for none. */
  record: Int32Array;
  flags: Uint8Array;
  producer: Int32Array;
  seq: Float64Array;
  occurredAt: Float64Array;
  tenant: Int32Array;
  link: Int32Array;
  domain: Int32Array;
  code: Int32Array;
  visitor: Float64Array;
  country: Int32Array;
  region: Int32Array;
  city: Int32Array;
  /** The click id of a link with conversion tracking (docs/analytics.md, "Conversions"); NO_STRING: none. */
  clickId: Int32Array;
  referer: Int32Array;
  userAgent: Int32Array;
  /** -1: no variant. */
  variant: Float64Array;

  /** `capacity`: the clicks expected (more make room as they come; a good guess spares the copies). */
  constructor(capacity = DEFAULT_CAPACITY) {
    const n = Math.max(16, Math.ceil(capacity));
    this.record = new Int32Array(n);
    this.flags = new Uint8Array(n);
    this.producer = new Int32Array(n);
    this.seq = new Float64Array(n);
    this.occurredAt = new Float64Array(n);
    this.tenant = new Int32Array(n);
    this.link = new Int32Array(n);
    this.domain = new Int32Array(n);
    this.code = new Int32Array(n);
    this.visitor = new Float64Array(n);
    this.country = new Int32Array(n);
    this.region = new Int32Array(n);
    this.city = new Int32Array(n);
    this.clickId = new Int32Array(n);
    this.referer = new Int32Array(n);
    this.userAgent = new Int32Array(n);
    this.variant = new Float64Array(n);
  }

  /** Records held. */
  get recordCount(): number {
    return this.recordOffsets.length;
  }

  /** The id of `s` in `strings`, added if new. */
  intern(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.strings.length;
      this.strings.push(s);
      this.ids.set(s, id);
    }
    return id;
  }

  /** `strings[id]`, or null for NO_STRING. */
  stringOrNull(id: number): string | null {
    return id === NO_STRING ? null : this.strings[id];
  }

  /** Starts a record; the clicks added until `endRecord` are its. */
  beginRecord(offset: string, recordedAt: number): void {
    const r = this.recordOffsets.length;
    if (r === this.recordedAt.length) {
      this.recordedAt = grow(this.recordedAt, r * 2);
      this.recordStart = grow(this.recordStart, r * 2);
    }
    this.recordOffsets.push(offset);
    this.recordOffsetValues.push(BigInt(offset));
    this.recordedAt[r] = recordedAt;
    this.recordStart[r] = this.length;
  }

  /** Makes room for `n` more clicks; returns the index of the first. */
  reserve(n: number): number {
    const need = this.length + n;
    if (need > this.record.length) {
      const size = Math.max(need, this.record.length * 2);
      this.record = grow(this.record, size);
      this.flags = grow(this.flags, size);
      this.producer = grow(this.producer, size);
      this.seq = grow(this.seq, size);
      this.occurredAt = grow(this.occurredAt, size);
      this.tenant = grow(this.tenant, size);
      this.link = grow(this.link, size);
      this.domain = grow(this.domain, size);
      this.code = grow(this.code, size);
      this.visitor = grow(this.visitor, size);
      this.country = grow(this.country, size);
      this.region = grow(this.region, size);
      this.city = grow(this.city, size);
      this.clickId = grow(this.clickId, size);
      this.referer = grow(this.referer, size);
      this.userAgent = grow(this.userAgent, size);
      this.variant = grow(this.variant, size);
    }
    return this.length;
  }

  /** Takes the record begun last back, with its clicks (its bytes turned out malformed). */
  abortRecord(): void {
    const r = this.recordOffsets.length - 1;
    if (r < 0) return;
    this.length = this.recordStart[r];
    this.recordOffsets.pop();
    this.recordOffsetValues.pop();
  }

  /** Index of the first click of record `r`, or the length after the last record. */
  recordBegin(r: number): number {
    return r < this.recordOffsets.length ? this.recordStart[r] : this.length;
  }

  /** Appends one click (slow path: tests, the memory of objects). Inside a record. */
  add(event: ClickEvent): void {
    const i = this.reserve(1);
    this.record[i] = this.recordOffsets.length - 1;
    this.flags[i] = (event.kind === 'orphan' ? ORPHAN_FLAG : 0) | (event.source === 'qr' ? QR_FLAG : 0);
    this.producer[i] = this.intern(event.producer);
    this.seq[i] = event.seq;
    this.occurredAt[i] = event.occurredAt;
    this.tenant[i] = this.intern(event.tenantId);
    this.link[i] = this.intern(event.linkId);
    this.domain[i] = this.intern(event.domain);
    this.code[i] = this.intern(event.code);
    this.visitor[i] = event.visitor;
    this.country[i] = this.internOrNone(event.country);
    this.region[i] = this.internOrNone(event.region);
    this.city[i] = this.internOrNone(event.city);
    this.clickId[i] = this.internOrNone(event.clickId ?? null);
    this.referer[i] = this.internOrNone(event.refererHost);
    this.userAgent[i] = this.intern(event.userAgent);
    this.variant[i] = event.variant ?? -1;
    this.length = i + 1;
  }

  /** The click at `i` as an object. */
  eventAt(i: number): ClickEvent {
    const variant = this.variant[i];
    const clickId = this.clickId[i];
    const event: ClickEvent = {
      producer: this.strings[this.producer[i]],
      seq: this.seq[i],
      kind: this.flags[i] & ORPHAN_FLAG ? 'orphan' : 'click',
      occurredAt: this.occurredAt[i],
      tenantId: this.strings[this.tenant[i]],
      linkId: this.strings[this.link[i]],
      domain: this.strings[this.domain[i]],
      code: this.strings[this.code[i]],
      visitor: this.visitor[i],
      country: this.stringOrNull(this.country[i]),
      region: this.stringOrNull(this.region[i]),
      city: this.stringOrNull(this.city[i]),
      source: this.flags[i] & QR_FLAG ? 'qr' : 'link',
      refererHost: this.stringOrNull(this.referer[i]),
      userAgent: this.strings[this.userAgent[i]],
      variant: variant < 0 ? null : variant,
    };
    return clickId === NO_STRING ? event : { ...event, clickId: this.strings[clickId] };
  }

  /** Every click as the bus delivers it, in order. */
  delivered(partition: number): DeliveredClick[] {
    const out = new Array<DeliveredClick>(this.length);
    for (let i = 0; i < this.length; i++) {
      const r = this.record[i];
      out[i] = { partition, offset: this.recordOffsets[r], recordedAt: this.recordedAt[r], event: this.eventAt(i) };
    }
    return out;
  }

  /** The columns of delivered clicks (consecutive clicks of one offset form one record). */
  static of(messages: readonly DeliveredClick[]): ClickColumns {
    const columns = new ClickColumns();
    let offset: string | null = null;
    for (const m of messages) {
      if (m.offset !== offset) {
        columns.beginRecord(m.offset, m.recordedAt);
        offset = m.offset;
      }
      columns.add(m.event);
    }
    return columns;
  }

  private internOrNone(s: string | null): number {
    return s === null ? NO_STRING : this.intern(s);
  }
}

function grow<T extends Int32Array | Float64Array | Uint8Array>(array: T, size: number): T {
  const next = new (array.constructor as new (n: number) => T)(size);
  next.set(array);
  return next;
}

/**
 * A batch as the sources deliver it: the columns, and the clicks as objects made on first use
 * (the analytics consumer reads only the columns).
 */
export class ColumnarClickBatch implements ClickBatch {
  private made: DeliveredClick[] | null = null;

  constructor(
    readonly source: string,
    readonly partition: number,
    readonly clicks: ClickColumns,
  ) {}

  get messages(): readonly DeliveredClick[] {
    return (this.made ??= this.clicks.delivered(this.partition));
  }
}
