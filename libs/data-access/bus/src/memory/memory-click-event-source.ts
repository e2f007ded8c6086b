import { ClickBatch, ClickEventSource, DeliveredClick } from '@shortlink/clicks-domain';
import { AbortableSleeper, RetryBackoff, RetryBackoffOptions } from '../backoff';
import { decodeClickRecord } from '../codec';
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
    this.maxBatchSize = Math.max(1, options.maxBatchSize ?? 100);
    this.drainOnCloseMs = options.drainOnCloseMs ?? 0;
    this.backoff = new RetryBackoff(options.retryBackoff);
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
    this.loop = this.run(handler).catch((error) => {
      this.logger({ level: 'error', namespace: 'bus.memory', message: 'click delivery loop stopped', extra: { groupId: this.groupId, error: String(error) } });
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
  private deliver(handler: (batch: ClickBatch) => Promise<void>, batch: ClickBatch): Promise<boolean> {
    return deliverUntilHandled(handler, batch, {
      backoff: this.backoff,
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

  /** Next pending batch, partitions round robin; malformed records are dropped from it (and counted). */
  private nextBatch(): { partition: number; nextOffset: number; messages: DeliveredClick[] } | null {
    for (let i = 0; i < this.log.partitions; i++) {
      const partition = (this.nextPartition + i) % this.log.partitions;
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
      const messages: DeliveredClick[] = [];
      for (const record of records) {
        const events = decodeClickRecord(record.value);
        if (typeof events !== 'string') {
          const offset = String(record.offset);
          for (const event of events) messages.push({ partition, offset, recordedAt: record.timestamp, event });
        } else {
          this.skipped++;
          this.logger({ level: 'warn', namespace: 'bus.memory', message: `skipped a click record (${events})`, extra: { partition, offset: record.offset } });
        }
      }
      return { partition, nextOffset: records[records.length - 1].offset + 1, messages };
    }
    return null;
  }
}
