import { randomUUID } from 'crypto';
import { ClickEvent } from '@shortlink/clicks-domain';
import { murmur32 } from '@shortlink/shard-router';
import { byPartition, encodeClickRecord } from '../codec';
import { LogRecord, PartitionLog } from './partition-log';

/**
 * The embedded twin of the Kafka click topic, for the profile where generation, redirect and
 * analytics share one process. It keeps Kafka's semantics that the apps rely on:
 * - a fixed number of partitions; a message goes to `murmur32(key) % partitions`, the key being
 *   `${domain}/${code}`, so the clicks of one link stay in one partition and in order;
 * - offsets per partition start at 0 and only grow; retention is bounded by messages and by bytes
 *   (oldest dropped first), like Kafka's retention.bytes;
 * - consumer groups with committed offsets per group and partition (in memory: lost with the
 *   process, exactly like the log itself).
 * Values are the same binary records Kafka carries (one per partition and append, several
 * clicks each), so decoding (and skipping of malformed messages) is the same code on both profiles.
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
    if (!Number.isInteger(bytes) || bytes < 1024 || bytes > 2 ** 31)
      throw new RangeError(`maxBytesPerPartition must be an integer in [1024, 2^31], got ${bytes}`);
    this.partitions = partitions;
    this.maxMessagesPerPartition = max;
    this.maxBytesPerPartition = bytes;
    this.logs = Array.from({ length: partitions }, () => new PartitionLog(max, bytes));
  }

  /** Stable partition of a key (murmur32, the same hash as the shard router). */
  partitionFor(key: string): number {
    return murmur32(key) % this.partitions;
  }

  /** Appends the events in order, one record per partition they go to; returns where each record landed. */
  append(events: readonly ClickEvent[]): { partition: number; offset: number; events: number }[] {
    const now = Date.now();
    const placed: { partition: number; offset: number; events: number }[] = [];
    for (const [partition, group] of byPartition(events, (key) => this.partitionFor(key))) {
      placed.push({ partition, offset: this.logs[partition].append(null, encodeClickRecord(group), now), events: group.length });
    }
    if (placed.length > 0) this.notify();
    return placed;
  }

  /**
   * Appends a raw value as a producer other than ours could (tests use it for malformed
   * messages). A null key goes to partition 0.
   */
  appendRaw(key: string | null, value: Buffer | string, partition?: number): { partition: number; offset: number } {
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
