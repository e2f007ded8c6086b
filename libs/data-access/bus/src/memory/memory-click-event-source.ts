import { ClickBatch, ClickColumns, ClickEventSource, ColumnarClickBatch } from '@shortlink/clicks-domain';
import { AbortableSleeper, RetryBackoff, RetryBackoffOptions } from '../backoff';
import { clicksIn, readClickRecord } from '../codec';
import { deliverUntilHandled } from '../delivery';
import { BusLogger, consoleWarnLogger, filteredLogger } from '../logging';
import { InProcessClickLog } from './in-process-click-log';

export interface MemoryClickEventSourceOptions {
  readonly groupId: string;
  /** Where a group without committed offsets starts: the oldest retained message (default) or the end. */
  readonly fromBeginning?: boolean;
  /** Most records handed to the handler at once (default 100; a record holds the clicks of one flush). */
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
  /** Partitions whose batches the handler may be running at once (default 1), as the Kafka source's option. */
  readonly partitionsConsumedConcurrently?: number;
}

/**
 * Consumer side on the in-process log, the single member of its group. Batches hold messages
 * of one partition in offset order (their clicks as columns, `ClickBatch.clicks`); partitions are
 * served round robin; the handler runs for at most `partitionsConsumedConcurrently` partitions at
 * once (default one batch at a time), never twice for one partition at once. A batch's offsets are
 * committed only after the handler resolved; a handler that throws gets the same batch again after
 * a backoff, and nothing later of its partition is delivered meanwhile (as the Kafka source does).
 * close() stops delivery (waiting for running handlers), clears its timers and frees the group for
 * a new source.
 */
export class MemoryClickEventSource implements ClickEventSource {
  private readonly groupId: string;
  private readonly fromBeginning: boolean;
  private readonly maxBatchSize: number;
  private readonly drainOnCloseMs: number;
  private readonly retryBackoff: RetryBackoffOptions | undefined;
  private readonly concurrency: number;
  private readonly logger: BusLogger;
  private readonly sleeper = new AbortableSleeper();
  private state: 'new' | 'running' | 'closed' = 'new';
  private positions: number[] = [];
  private nextPartition = 0;
  /** Partitions whose batch a handler is running. */
  private readonly inFlight = new Set<number>();
  private wakers: Array<() => void> = [];
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
    this.maxBatchSize = Math.max(1, options.maxBatchSize ?? 100);
    this.drainOnCloseMs = options.drainOnCloseMs ?? 0;
    this.retryBackoff = options.retryBackoff;
    this.concurrency = Math.max(1, Math.floor(options.partitionsConsumedConcurrently ?? 1));
    this.logger = filteredLogger(options.logger ?? consoleWarnLogger, 'warn');
  }

  /** Records skipped because they were not click records of a known version. */
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
    this.loop = Promise.all(Array.from({ length: this.concurrency }, () => this.run(handler)))
      .then(() => undefined)
      .catch((error) => {
        this.logger({
          level: 'error',
          namespace: 'bus.memory',
          message: 'click delivery loop stopped',
          extra: { groupId: this.groupId, error: String(error) },
        });
      });
  }

  async lag(): Promise<Map<number, number>> {
    const lag = new Map<number, number>();
    for (let p = 0; p < this.log.partitions; p++) {
      const next = this.state === 'running' ? this.positions[p] : (this.log.committedOffset(this.groupId, p) ?? this.log.startOffset(p));
      lag.set(p, Math.max(0, this.log.endOffset(p) - Math.max(next, this.log.startOffset(p))));
    }
    return lag;
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
    const wakers = this.wakers;
    this.wakers = [];
    for (const wake of wakers) wake();
  }

  /** One delivery loop; `partitionsConsumedConcurrently` of them share the partitions. */
  private async run(handler: (batch: ClickBatch) => Promise<void>): Promise<void> {
    while (this.running) {
      const next = this.nextBatch();
      if (!next) {
        // Nothing pending: sleep until the next append, a partition set free, or close. Checked and armed in one tick.
        await new Promise<void>((resolve) => this.wakers.push(resolve));
        continue;
      }
      const { partition, nextOffset, clicks } = next;
      this.inFlight.add(partition);
      try {
        if (clicks.length > 0) {
          const delivered = await this.deliver(handler, new ColumnarClickBatch(`memory:${this.log.id}`, partition, clicks));
          if (!delivered) return; // closed while retrying: nothing committed, the batch comes again
        }
        this.log.commit(this.groupId, partition, nextOffset);
        this.positions[partition] = nextOffset;
      } finally {
        this.inFlight.delete(partition);
        this.signal();
      }
      // Yield to I/O between batches so a large backlog cannot starve the process.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** Calls the handler until it resolves; false if the source was closed first. */
  private deliver(handler: (batch: ClickBatch) => Promise<void>, batch: ClickBatch): Promise<boolean> {
    return deliverUntilHandled(handler, batch, {
      // One backoff per batch: partitions consumed at once fail and recover apart.
      backoff: new RetryBackoff(this.retryBackoff),
      logger: this.logger,
      namespace: 'bus.memory',
      groupId: this.groupId,
      attempt: (call) => call(),
      stillWanted: () => this.running,
      waitBeforeRetry: async (ms) => {
        await this.sleeper.sleep(ms);
        return this.running;
      },
      failed: () => void this.failures++,
    });
  }

  /** Next pending batch of a partition no handler is running for, partitions round robin; malformed records are dropped from it (and counted). */
  private nextBatch(): { partition: number; nextOffset: number; clicks: ClickColumns } | null {
    for (let i = 0; i < this.log.partitions; i++) {
      const partition = (this.nextPartition + i) % this.log.partitions;
      if (this.inFlight.has(partition)) continue;
      let position = this.positions[partition];
      const start = this.log.startOffset(partition);
      if (position < start) {
        this.lost += start - position;
        this.logger({
          level: 'warn',
          namespace: 'bus.memory',
          message: `${start - position} click messages were dropped by retention before group "${this.groupId}" read them`,
          extra: { partition },
        });
        position = this.positions[partition] = start;
      }
      if (position >= this.log.endOffset(partition)) continue;
      const records = this.log.read(partition, position, this.maxBatchSize);
      this.nextPartition = (partition + 1) % this.log.partitions;
      const clicks = new ClickColumns(clicksIn(records.reduce((n, r) => n + (r.value?.length ?? 0), 0)));
      for (const record of records) {
        const read = readClickRecord(record.value, clicks, String(record.offset), record.timestamp);
        if (typeof read === 'string') {
          this.skipped++;
          this.logger({ level: 'warn', namespace: 'bus.memory', message: `skipped a click record (${read})`, extra: { partition, offset: record.offset } });
        }
      }
      return { partition, nextOffset: records[records.length - 1].offset + 1, clicks };
    }
    return null;
  }
}
