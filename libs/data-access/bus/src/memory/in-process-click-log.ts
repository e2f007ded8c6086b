import { randomUUID } from 'crypto';
import { ClickBatch, ClickEvent, ClickEventSink, ClickEventSource, DeliveredClick } from '@shortlink/clicks-domain';
import { murmur32 } from '@shortlink/shard-router';
import { AbortableSleeper, RetryBackoff, RetryBackoffOptions } from '../backoff';
import { clickMessageKey, decodeClickEvent, encodeClickEvent } from '../codec';
import { BusLogger, consoleWarnLogger, filteredLogger } from '../logging';

/**
 * The embedded twin of the Kafka click topic, for the profile where generation, redirect and
 * analytics share one process. It keeps Kafka's semantics that the apps rely on:
 * - a fixed number of partitions; a message goes to `murmur32(key) % partitions`, the key being
 *   `${domain}/${code}`, so the clicks of one link stay in one partition and in order;
 * - offsets per partition start at 0 and only grow; retention is bounded by messages and by bytes
 *   (oldest dropped first), like Kafka's retention.bytes;
 * - consumer groups with committed offsets per group and partition (in memory: lost with the
 *   process, exactly like the log itself).
 * Values are stored as the same JSON Kafka carries, so decoding (and skipping of malformed
 * messages) is the same code path on both profiles.
 *
 * Retained messages live as bytes in one preallocated buffer per partition, not as JS strings:
 * a log of tens of thousands of retained messages on the JS heap is promoted by every minor GC
 * and swept by mark-compacts, and those pauses showed up in the redirect's p99
 * (docs/benchmarks.md). Strings are made only when a consumer reads.
 *
 * Limitation, by design: one active consumer per group (the embedded profile runs one analytics
 * consumer). Starting a second source of a group that already has one is an error.
 */
export interface InProcessClickLogOptions {
  /** Number of partitions (default 6, as the Kafka topic). */
  readonly partitions?: number;
  /** Messages kept per partition; when exceeded the oldest are dropped (default 100 000). */
  readonly maxMessagesPerPartition?: number;
  /** Bytes of keys and values kept per partition, preallocated (default 4 MiB); oldest dropped first. */
  readonly maxBytesPerPartition?: number;
}

export interface LogRecord {
  readonly offset: number;
  readonly key: string | null;
  readonly value: string;
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
class PartitionLog {
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

  append(key: string | null, value: string, timestamp: number): number {
    const keyBytes = key === null ? 0 : Buffer.byteLength(key);
    const valueBytes = Buffer.byteLength(value);
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
    data.write(value, at + HEADER_BYTES + keyBytes, valueBytes, 'utf8');
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
    return { offset, key, value: data.toString('utf8', valueAt, valueAt + valueBytes), timestamp };
  }
}

export class InProcessClickLog {
  /** This incarnation of the log: its offsets start at 0, so consumers keep progress per id. */
  readonly id = randomUUID();
  readonly partitions: number;
  readonly maxMessagesPerPartition: number;
  readonly maxBytesPerPartition: number;
  private readonly logs: PartitionLog[];
  /** group -> partition -> next offset to consume (Kafka's committed offset semantics). */
  private readonly committed = new Map<string, Map<number, number>>();
  private readonly activeGroups = new Set<string>();
  private readonly listeners = new Set<() => void>();

  constructor(options: InProcessClickLogOptions = {}) {
    const partitions = options.partitions ?? 6;
    const max = options.maxMessagesPerPartition ?? 100_000;
    const bytes = options.maxBytesPerPartition ?? 4 * 1024 * 1024;
    if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxMessagesPerPartition must be a positive integer, got ${max}`);
    if (!Number.isInteger(bytes) || bytes < 1024 || bytes > 2 ** 31) throw new RangeError(`maxBytesPerPartition must be an integer in [1024, 2^31], got ${bytes}`);
    this.partitions = partitions;
    this.maxMessagesPerPartition = max;
    this.maxBytesPerPartition = bytes;
    this.logs = Array.from({ length: partitions }, () => new PartitionLog(max, bytes));
  }

  /** Stable partition of a key (murmur32, the same hash as the shard router). */
  partitionFor(key: string): number {
    return murmur32(key) % this.partitions;
  }

  /** Appends the events in order; returns where each one landed. */
  append(events: readonly ClickEvent[]): { partition: number; offset: number }[] {
    const now = Date.now();
    const placed = events.map((event) => {
      const key = clickMessageKey(event);
      const partition = this.partitionFor(key);
      return { partition, offset: this.logs[partition].append(key, encodeClickEvent(event), now) };
    });
    if (placed.length > 0) this.notify();
    return placed;
  }

  /**
   * Appends a raw value as a producer other than ours could (tests use it for malformed
   * messages). A null key goes to partition 0.
   */
  appendRaw(key: string | null, value: string, partition?: number): { partition: number; offset: number } {
    const p = partition ?? (key === null ? 0 : this.partitionFor(key));
    if (!Number.isInteger(p) || p < 0 || p >= this.partitions) throw new RangeError(`no partition ${p}`);
    const offset = this.logs[p].append(key, value, Date.now());
    this.notify();
    return { partition: p, offset };
  }

  startOffset(partition: number): number {
    return this.log(partition).startOffset;
  }

  endOffset(partition: number): number {
    return this.log(partition).endOffset;
  }

  read(partition: number, from: number, max: number): LogRecord[] {
    return this.log(partition).read(from, max);
  }

  /** Next offset the group consumes on the partition, or undefined when it never committed. */
  committedOffset(groupId: string, partition: number): number | undefined {
    return this.committed.get(groupId)?.get(partition);
  }

  commit(groupId: string, partition: number, nextOffset: number): void {
    let group = this.committed.get(groupId);
    if (!group) this.committed.set(groupId, (group = new Map()));
    group.set(partition, nextOffset);
  }

  /** @internal claims the single consumer slot of a group. */
  claimGroup(groupId: string): void {
    if (this.activeGroups.has(groupId)) {
      throw new Error(`consumer group "${groupId}" already has an active consumer (the in-process log supports one per group)`);
    }
    this.activeGroups.add(groupId);
  }

  /** @internal */
  releaseGroup(groupId: string): void {
    this.activeGroups.delete(groupId);
  }

  /** @internal called on every append; returns the unsubscribe function. */
  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private log(partition: number): PartitionLog {
    const log = this.logs[partition];
    if (!log) throw new RangeError(`no partition ${partition}`);
    return log;
  }
}

/** Producer side on the in-process log: appending is synchronous, so send never fails or waits. */
export class MemoryClickEventSink implements ClickEventSink {
  private closed = false;

  constructor(private readonly log: InProcessClickLog) {}

  async send(events: readonly ClickEvent[]): Promise<void> {
    if (this.closed) throw new Error('MemoryClickEventSink is closed');
    this.log.append(events);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

export interface MemoryClickEventSourceOptions {
  readonly groupId: string;
  /** Where a group without committed offsets starts: the oldest retained message (default) or the end. */
  readonly fromBeginning?: boolean;
  /** Most messages handed to the handler at once (default 500). */
  readonly maxBatchSize?: number;
  /** Wait between redeliveries of a batch whose handler threw (default 100 ms doubling to 5 s). */
  readonly retryBackoff?: RetryBackoffOptions;
  /**
   * On close, keep delivering for up to this long until every partition is consumed (default 0).
   * The log lives in memory: what is not consumed before the process stops is gone.
   */
  readonly drainOnCloseMs?: number;
  /** Warnings: skipped malformed messages, handler failures, messages lost to retention. Default: stderr. */
  readonly logger?: BusLogger;
}

/**
 * Consumer side on the in-process log, the single member of its group. Batches hold messages
 * of one partition in offset order; partitions are served round robin; the handler is called
 * with one batch at a time. A batch's offsets are committed only after the handler resolved;
 * a handler that throws gets the same batch again after a backoff, and nothing else is
 * delivered meanwhile (as the Kafka source does). close() stops delivery (waiting for a running
 * handler), clears its timers and frees the group for a new source.
 */
export class MemoryClickEventSource implements ClickEventSource {
  private readonly groupId: string;
  private readonly fromBeginning: boolean;
  private readonly maxBatchSize: number;
  private readonly drainOnCloseMs: number;
  private readonly backoff: RetryBackoff;
  private readonly logger: BusLogger;
  private readonly sleeper = new AbortableSleeper();
  private state: 'new' | 'running' | 'closed' = 'new';
  private positions: number[] = [];
  private nextPartition = 0;
  private wake: (() => void) | null = null;
  private unsubscribe: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private skipped = 0;
  private failures = 0;
  private lost = 0;

  constructor(
    private readonly log: InProcessClickLog,
    options: MemoryClickEventSourceOptions,
  ) {
    this.groupId = options.groupId;
    this.fromBeginning = options.fromBeginning ?? true;
    this.maxBatchSize = Math.max(1, options.maxBatchSize ?? 500);
    this.drainOnCloseMs = options.drainOnCloseMs ?? 0;
    this.backoff = new RetryBackoff(options.retryBackoff);
    this.logger = filteredLogger(options.logger ?? consoleWarnLogger, 'warn');
  }

  /** Messages skipped because they were not JSON ClickEvents. */
  get skippedMessages(): number {
    return this.skipped;
  }

  /** Handler calls that threw (each one is followed by a redelivery). */
  get handlerFailures(): number {
    return this.failures;
  }

  /** Messages dropped by retention before this group read them. */
  get lostToRetention(): number {
    return this.lost;
  }

  async start(handler: (batch: ClickBatch) => Promise<void>): Promise<void> {
    if (this.state !== 'new') throw new Error(`MemoryClickEventSource is ${this.state === 'running' ? 'already started' : 'closed'}`);
    this.log.claimGroup(this.groupId);
    this.state = 'running';
    this.positions = Array.from({ length: this.log.partitions }, (_, p) => {
      const committed = this.log.committedOffset(this.groupId, p);
      if (committed !== undefined) return committed;
      return this.fromBeginning ? this.log.startOffset(p) : this.log.endOffset(p);
    });
    this.unsubscribe = this.log.onAppend(() => this.signal());
    this.loop = this.run(handler).catch((error) => {
      this.logger({ level: 'error', namespace: 'bus.memory', message: 'click delivery loop stopped', extra: { groupId: this.groupId, error: String(error) } });
    });
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    if (this.state === 'running' && this.drainOnCloseMs > 0) {
      const deadline = Date.now() + this.drainOnCloseMs;
      while (!this.caughtUp() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    }
    const wasRunning = this.state === 'running';
    this.state = 'closed';
    this.sleeper.abort();
    this.signal();
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.loop;
    if (wasRunning) this.log.releaseGroup(this.groupId);
  }

  private get running(): boolean {
    return this.state === 'running';
  }

  /** Every partition consumed and committed up to its end. */
  private caughtUp(): boolean {
    for (let p = 0; p < this.log.partitions; p++) if (this.positions[p] < this.log.endOffset(p)) return false;
    return true;
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async run(handler: (batch: ClickBatch) => Promise<void>): Promise<void> {
    while (this.running) {
      const next = this.nextBatch();
      if (!next) {
        // Nothing pending: sleep until the next append (or close). Checked and armed in one tick.
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      const { partition, nextOffset, messages } = next;
      if (messages.length > 0) {
        const delivered = await this.deliver(handler, { source: `memory:${this.log.id}`, partition, messages });
        if (!delivered) return; // closed while retrying: nothing committed, the batch comes again
      }
      this.log.commit(this.groupId, partition, nextOffset);
      this.positions[partition] = nextOffset;
      // Yield to I/O between batches so a large backlog cannot starve the process.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** Calls the handler until it resolves; false if the source was closed first. */
  private async deliver(handler: (batch: ClickBatch) => Promise<void>, batch: ClickBatch): Promise<boolean> {
    for (;;) {
      try {
        await handler(batch);
        this.backoff.reset();
        return true;
      } catch (error) {
        this.failures++;
        if (!this.running) return false;
        const wait = this.backoff.next();
        this.logger({
          level: 'warn',
          namespace: 'bus.memory',
          message: `click handler failed, redelivering the batch in ${wait} ms`,
          extra: { groupId: this.groupId, partition: batch.partition, firstOffset: batch.messages[0]?.offset, error: String(error) },
        });
        await this.sleeper.sleep(wait);
        if (!this.running) return false;
      }
    }
  }

  /** Next pending batch, partitions round robin; malformed messages are dropped from it (and counted). */
  private nextBatch(): { partition: number; nextOffset: number; messages: DeliveredClick[] } | null {
    for (let i = 0; i < this.log.partitions; i++) {
      const partition = (this.nextPartition + i) % this.log.partitions;
      let position = this.positions[partition];
      const start = this.log.startOffset(partition);
      if (position < start) {
        this.lost += start - position;
        this.logger({ level: 'warn', namespace: 'bus.memory', message: `${start - position} click messages were dropped by retention before group "${this.groupId}" read them`, extra: { partition } });
        position = this.positions[partition] = start;
      }
      if (position >= this.log.endOffset(partition)) continue;
      const records = this.log.read(partition, position, this.maxBatchSize);
      this.nextPartition = (partition + 1) % this.log.partitions;
      const messages: DeliveredClick[] = [];
      for (const record of records) {
        const event = decodeClickEvent(record.value);
        if (event) {
          messages.push({ partition, offset: String(record.offset), event });
        } else {
          this.skipped++;
          this.logger({ level: 'warn', namespace: 'bus.memory', message: 'skipped a click message that is not a JSON ClickEvent', extra: { partition, offset: record.offset } });
        }
      }
      return { partition, nextOffset: records[records.length - 1].offset + 1, messages };
    }
    return null;
  }
}
