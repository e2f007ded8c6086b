/**
 * Rows in ClickHouse's RowBinary format, which ClickHouse 18.16 and chdb both read: each value in
 * column order, integers little-endian at their width, a string or an array as a LEB128 length and
 * then its bytes or elements, DateTime as UInt32 seconds. No text to parse, no escaping, no object
 * per row (docs/design.md, "Analytics").
 */
export class RowBinaryWriter {
  private buf: Buffer;
  private pos = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  get length(): number {
    return this.pos;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  u16(v: number): void {
    this.ensure(2);
    const b = this.buf;
    b[this.pos++] = v;
    b[this.pos++] = v >>> 8;
  }

  u32(v: number): void {
    this.ensure(4);
    this.word(v);
  }

  /** A UInt64 given as a safe integer. */
  u64(v: number): void {
    this.ensure(8);
    const low = v % 0x1_0000_0000;
    this.word(low);
    this.word((v - low) / 0x1_0000_0000);
  }

  /** A UInt64 given as two 32-bit words. */
  u64Words(high: number, low: number): void {
    this.ensure(8);
    this.word(low);
    this.word(high);
  }

  /** A UInt64 given as a bigint (< 2^64). */
  u64Big(v: bigint): void {
    this.u64Words(Number(v >> 32n), Number(v & 0xffff_ffffn));
  }

  /** A length (of a string or an array), LEB128. */
  length128(v: number): void {
    this.ensure(10);
    const b = this.buf;
    while (v >= 0x80) {
      b[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    b[this.pos++] = v;
  }

  string(s: string): void {
    if (s.length === 0) return this.u8(0);
    const bytes = Buffer.byteLength(s);
    this.length128(bytes);
    this.ensure(bytes);
    this.pos += this.buf.write(s, this.pos, bytes, 'utf8');
  }

  /** Bytes already in RowBinary (a value encoded once and written in several rows). */
  raw(bytes: Buffer): void {
    const n = bytes.length;
    this.ensure(n);
    // Short values (most strings of a row) copy faster byte by byte than through Buffer.copy.
    if (n < 32) {
      const b = this.buf;
      const at = this.pos;
      for (let i = 0; i < n; i++) b[at + i] = bytes[i];
    } else bytes.copy(this.buf, this.pos);
    this.pos += n;
  }

  /** The rows written, as one buffer (a view: valid until the writer is written again). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  private word(v: number): void {
    const b = this.buf;
    b[this.pos++] = v;
    b[this.pos++] = v >>> 8;
    b[this.pos++] = v >>> 16;
    b[this.pos++] = v >>> 24;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
}
