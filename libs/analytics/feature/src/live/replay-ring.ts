/** What the ring keeps: an entry with its sequence number and when it arrived (epoch ms). */
export interface Sequenced {
  readonly seq: number;
  readonly at: number;
}

/** What a resume gets: the entries after the position, and whether some between were lost. */
export interface Replay<T> {
  readonly entries: readonly T[];
  /** Entries after the position were dropped from the window: the client missed some. */
  readonly gap: boolean;
}

/**
 * The replay window of one instance (docs/design.md, "Live click stream"): the last `maxEntries`
 * entries, none older than `maxAgeMs`, in a circular buffer (no shifting of a 10 000-entry array
 * per click). Sequence numbers are given by the caller and only grow.
 */
export class ReplayRing<T extends Sequenced> {
  private readonly buffer: (T | undefined)[];
  private start = 0;
  private size = 0;
  private last = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.buffer = new Array<T | undefined>(Math.max(0, maxEntries));
  }

  /** The newest sequence number pushed (0: none yet). */
  get lastSeq(): number {
    return this.last;
  }

  get length(): number {
    this.expire();
    return this.size;
  }

  push(entry: T): void {
    if (entry.seq <= this.last) throw new RangeError(`sequence ${entry.seq} is not after ${this.last}`);
    this.last = entry.seq;
    if (this.buffer.length === 0) return;
    if (this.size === this.buffer.length) {
      this.buffer[this.start] = entry;
      this.start = (this.start + 1) % this.buffer.length;
    } else {
      this.buffer[(this.start + this.size) % this.buffer.length] = entry;
      this.size++;
    }
  }

  /**
   * The entries after `seq`, oldest first. A gap when entries after `seq` were pushed but are no
   * longer held (too many since, or too old): the client gets what is held, and is told.
   */
  after(seq: number): Replay<T> {
    this.expire();
    if (seq >= this.last) return { entries: [], gap: false };
    const oldest = this.size > 0 ? this.at(0).seq : this.last + 1;
    const entries: T[] = [];
    for (let i = 0; i < this.size; i++) {
      const entry = this.at(i);
      if (entry.seq > seq) entries.push(entry);
    }
    return { entries, gap: oldest > seq + 1 };
  }

  /** Every entry held, oldest first. */
  all(): T[] {
    this.expire();
    return Array.from({ length: this.size }, (_, i) => this.at(i));
  }

  private at(i: number): T {
    return this.buffer[(this.start + i) % this.buffer.length]!;
  }

  /** Drops entries older than the window from the front. */
  private expire(): void {
    const cutoff = this.now() - this.maxAgeMs;
    while (this.size > 0 && this.at(0).at < cutoff) {
      this.buffer[this.start] = undefined;
      this.start = (this.start + 1) % this.buffer.length;
      this.size--;
    }
  }
}
