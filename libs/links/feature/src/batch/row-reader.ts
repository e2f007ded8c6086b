import { DomainError, ErrorCode } from '@shortlink/core';

/** One row of a batch body as read: its JSON text, or why it could not be read. */
export type RawRow = { readonly index: number; readonly text: string } | { readonly index: number; readonly error: DomainError };

export interface RowLimits {
  /** Rows read at most; the next one is answered BATCH_TOO_LARGE and reading stops. */
  readonly maxRows: number;
  /** Bytes of one row at most (the single create's body limit). */
  readonly maxRowBytes: number;
}

const NEWLINE = 0x0a;
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * The rows of a batch body as the bytes arrive (docs/design.md, "Batch creation"): NDJSON (one
 * create per line; blank lines are skipped) or a JSON array. Only one row is held at a time, so
 * memory does not grow with the body. A row that is not JSON or too long fails alone; an array
 * whose structure breaks ends with an INVALID_JSON row (nothing after it can be placed).
 * Structural characters are ASCII, so the bytes are scanned without decoding UTF-8.
 */
export async function* readRows(chunks: AsyncIterable<Buffer>, mediaType: string, limits: RowLimits): AsyncGenerator<RawRow> {
  const splitter = mediaType === 'application/x-ndjson' ? new NdjsonSplitter(limits.maxRowBytes) : new ArraySplitter(limits.maxRowBytes);
  let index = 0;
  const emit = function* (pieces: Piece[]): Generator<RawRow, boolean> {
    for (const piece of pieces) {
      if (index >= limits.maxRows) {
        yield {
          index,
          error: new DomainError(ErrorCode.BATCH_TOO_LARGE, `a batch has at most ${limits.maxRows} rows; this row and any after it were not read`, {
            maxRows: limits.maxRows,
          }),
        };
        return false;
      }
      yield 'text' in piece ? { index: index++, text: piece.text } : { index: index++, error: piece.error };
      if ('error' in piece && piece.terminal) return false;
    }
    return true;
  };
  try {
    for await (const chunk of chunks) {
      if (!(yield* emit(splitter.feed(chunk)))) return;
    }
    yield* emit(splitter.end());
  } catch (error) {
    // Too large: the row being read gets the error, and the same body meets it again at the same row.
    if (error instanceof DomainError) yield { index, error };
    // Cut off (the client went away): no row at all, so nothing of a chunk read only in part is
    // written or recorded, and a retry of the batch goes on from the last whole chunk.
    else throw new DomainError(ErrorCode.INVALID_JSON, 'the request body was cut off before its end', {}, { cause: error });
  }
}

type Piece = { readonly text: string } | { readonly error: DomainError; readonly terminal?: boolean };

const tooLong = (max: number) => new DomainError(ErrorCode.PAYLOAD_TOO_LARGE, `a row is longer than ${max} bytes`, { maxRowBytes: max });
const broken = (detail: string) => ({ error: new DomainError(ErrorCode.INVALID_JSON, `the body is not a JSON array of links: ${detail}`), terminal: true });

/** Collects one row's bytes, or only counts them once the row is too long. */
class RowBuffer {
  private parts: Buffer[] = [];
  private size = 0;
  overflow = false;

  constructor(private readonly max: number) {}

  add(bytes: Buffer): void {
    this.size += bytes.length;
    if (this.size > this.max) {
      this.overflow = true;
      this.parts = [];
    } else if (bytes.length) {
      this.parts.push(bytes);
    }
  }

  get empty(): boolean {
    return this.size === 0;
  }

  take(): Piece {
    const piece: Piece = this.overflow
      ? { error: tooLong(this.max) }
      : { text: (this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts)).toString('utf8') };
    this.parts = [];
    this.size = 0;
    this.overflow = false;
    return piece;
  }
}

class NdjsonSplitter {
  private readonly row: RowBuffer;

  constructor(max: number) {
    this.row = new RowBuffer(max);
  }

  feed(chunk: Buffer): Piece[] {
    const pieces: Piece[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE, start); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      this.row.add(chunk.subarray(start, nl));
      this.line(pieces);
      start = nl + 1;
    }
    this.row.add(chunk.subarray(start));
    return pieces;
  }

  end(): Piece[] {
    const pieces: Piece[] = [];
    this.line(pieces);
    return pieces;
  }

  private line(pieces: Piece[]): void {
    if (this.row.empty) return;
    const piece = this.row.take();
    if ('text' in piece && piece.text.trim() === '') return; // blank lines are no rows
    pieces.push(piece);
  }
}

/** States of the array scanner. */
const enum At {
  Start, // before '['
  Element, // before an element (after '[' or ',')
  Inside, // in an element
  After, // after the closing ']'
}

class ArraySplitter {
  private readonly row: RowBuffer;
  private at = At.Start;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Whether ']' may close the array here (right after '[', not after ','). */
  private mayClose = true;

  constructor(max: number) {
    this.row = new RowBuffer(max);
  }

  feed(chunk: Buffer): Piece[] {
    const pieces: Piece[] = [];
    let start = this.at === At.Inside ? 0 : -1; // where the current element's bytes begin in this chunk
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (this.at === At.Inside) {
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (c === 0x5c) this.escaped = true;
          else if (c === 0x22) this.inString = false;
          continue;
        }
        if (c === 0x22) this.inString = true;
        else if (c === 0x7b || c === 0x5b) this.depth++;
        else if ((c === 0x7d || c === 0x5d) && this.depth > 0) this.depth--;
        else if ((c === 0x2c || c === 0x5d) && this.depth === 0) {
          this.row.add(chunk.subarray(start, i));
          pieces.push(this.row.take());
          start = -1;
          this.at = c === 0x2c ? At.Element : At.After;
          this.mayClose = false;
        }
        continue;
      }
      if (isSpace(c)) continue;
      if (this.at === At.Start) {
        if (c !== 0x5b) return [...pieces, broken('it does not start with "["')];
        this.at = At.Element;
      } else if (this.at === At.Element) {
        if (c === 0x5d && this.mayClose) this.at = At.After;
        else if (c === 0x5d || c === 0x2c) return [...pieces, broken('an element is missing')];
        else {
          this.at = At.Inside;
          start = i;
          i--; // scan this byte as part of the element
        }
      } else {
        return [...pieces, broken('there is more after the closing "]"')];
      }
    }
    if (this.at === At.Inside && start >= 0) this.row.add(chunk.subarray(start));
    return pieces;
  }

  end(): Piece[] {
    if (this.at === At.After) return [];
    if (this.at === At.Start) return [broken('the body is empty')];
    return [broken('it ends before its closing "]"')];
  }
}
