/** A record as read back from a partition. */
export interface LogRecord {
  readonly offset: number;
  readonly key: string | null;
  readonly value: Buffer;
  /** Epoch ms at append. */
  readonly timestamp: number;
}

/** Record layout in the byte ring: key length (NO_KEY for null), value length, timestamp, key, value. */
const HEADER_BYTES = 16;
const NO_KEY = 0xffffffff;

/**
 * A partition as a ring of records in one byte buffer. Records are laid out back to back in
 * append order; one that does not fit before the end starts again at byte 0. Appending drops the
 * oldest records while the message bound is reached or the new record would overwrite them, so
 * the retained records always occupy one contiguous (possibly wrapped) region.
 */
export class PartitionLog {
  private readonly data: Buffer;
  /** Byte position of each retained record, by ring slot (slot = offset's index in the ring). */
  private readonly positions: Uint32Array;
  private head = 0;
  private size = 0;
  /** Offset of the oldest retained record (== next offset when empty). */
  private start = 0;
  /** Byte position the next record is written at. */
  private tail = 0;

  constructor(
    private readonly capacity: number,
    byteCapacity: number,
  ) {
    this.data = Buffer.allocUnsafeSlow(byteCapacity);
    this.positions = new Uint32Array(capacity);
  }

  get startOffset(): number {
    return this.start;
  }

  /** Offset the next appended record gets (Kafka's log end offset / high watermark). */
  get endOffset(): number {
    return this.start + this.size;
  }

  append(key: string | null, value: Buffer | string, timestamp: number): number {
    const keyBytes = key === null ? 0 : Buffer.byteLength(key);
    const valueBytes = typeof value === 'string' ? Buffer.byteLength(value) : value.length;
    const length = HEADER_BYTES + keyBytes + valueBytes;
    if (length > this.data.length) {
      throw new RangeError(`message of ${length} bytes exceeds the partition's ${this.data.length} bytes`);
    }
    const at = this.place(length);
    const data = this.data;
    data.writeUInt32LE(key === null ? NO_KEY : keyBytes, at);
    data.writeUInt32LE(valueBytes, at + 4);
    data.writeDoubleLE(timestamp, at + 8);
    if (key !== null) data.write(key, at + HEADER_BYTES, keyBytes, 'utf8');
    if (typeof value === 'string') data.write(value, at + HEADER_BYTES + keyBytes, valueBytes, 'utf8');
    else value.copy(data, at + HEADER_BYTES + keyBytes);
    this.positions[(this.head + this.size) % this.capacity] = at;
    this.size++;
    this.tail = at + length;
    return this.endOffset - 1;
  }

  /** Up to `max` records from `from` on; `from` below the retained start reads from the start. */
  read(from: number, max: number): LogRecord[] {
    const first = Math.max(from, this.start);
    const out: LogRecord[] = [];
    for (let offset = first; offset < this.endOffset && out.length < max; offset++) {
      out.push(this.decode(offset, this.positions[(this.head + (offset - this.start)) % this.capacity]));
    }
    return out;
  }

  /**
   * Where a record of `length` bytes goes, after dropping the oldest records as needed. The free
   * space is [tail, end) and [0, oldest) while the retained region does not wrap, and
   * [tail, oldest) while it does (oldest == tail: full).
   */
  private place(length: number): number {
    for (;;) {
      if (this.size === 0) return 0;
      const oldest = this.positions[this.head];
      if (this.size < this.capacity) {
        if (oldest < this.tail) {
          if (this.tail + length <= this.data.length) return this.tail;
          if (length <= oldest) return 0;
        } else if (this.tail + length <= oldest) {
          return this.tail;
        }
      }
      this.dropOldest();
    }
  }

  private dropOldest(): void {
    this.head = (this.head + 1) % this.capacity;
    this.size--;
    this.start++;
  }

  private decode(offset: number, at: number): LogRecord {
    const data = this.data;
    const keyBytes = data.readUInt32LE(at);
    const valueBytes = data.readUInt32LE(at + 4);
    const timestamp = data.readDoubleLE(at + 8);
    const key = keyBytes === NO_KEY ? null : data.toString('utf8', at + HEADER_BYTES, at + HEADER_BYTES + keyBytes);
    const valueAt = at + HEADER_BYTES + (key === null ? 0 : keyBytes);
    return { offset, key, value: Buffer.from(data.subarray(valueAt, valueAt + valueBytes)), timestamp };
  }
}
