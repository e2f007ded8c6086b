/** Where a buffer sends its batches: the bus sink, or a step in front of it (enrichment). */
export interface BatchSink<T> {
  send(batch: readonly T[]): Promise<void>;
}

export interface ClickBufferOptions {
  /** Events held at most; beyond it new events are dropped and counted (losing clicks beats slowing redirects: docs/design.md, "Clicks and analytics"). */
  readonly capacity: number;
  readonly batchSize: number;
  readonly flushIntervalMs: number;
  /** After a failed send the batch is retried after this delay, doubling up to maxBackoffMs. */
  readonly retryBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

export interface ClickBufferObserver {
  dropped(count: number): void;
  sendFailed(error: unknown): void;
}

const silent: ClickBufferObserver = { dropped: () => undefined, sendFailed: () => undefined };

/**
 * Bounded in-memory buffer between the redirect path and the broker. `push` is synchronous and
 * O(1): a redirect never waits on Kafka, and a broker outage only fills (then overflows) the buffer.
 */
export class ClickBuffer<T> {
  private queue: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private backoffMs: number;
  private nextAttemptAt = 0;
  private droppedTotal = 0;
  private closed = false;

  constructor(
    private readonly sink: BatchSink<T>,
    private readonly options: ClickBufferOptions,
    private readonly observer: ClickBufferObserver = silent,
  ) {
    this.backoffMs = options.retryBackoffMs ?? 200;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  push(event: T): boolean {
    if (this.closed || this.queue.length >= this.options.capacity) {
      this.droppedTotal++;
      this.observer.dropped(1);
      return false;
    }
    this.queue.push(event);
    if (this.queue.length >= this.options.batchSize) void this.flush();
    return true;
  }

  get size(): number {
    return this.queue.length;
  }

  get dropped(): number {
    return this.droppedTotal;
  }

  /** Sends what is buffered, one batch at a time; concurrent calls share one flush. */
  flush(): Promise<void> {
    this.flushing ??= this.drain().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Stops the timer and tries once to send what is left. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.nextAttemptAt = 0;
    await this.flush();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && Date.now() >= this.nextAttemptAt) {
      const batch = this.queue.slice(0, this.options.batchSize);
      try {
        await this.sink.send(batch);
        this.queue.splice(0, batch.length);
        this.backoffMs = this.options.retryBackoffMs ?? 200;
      } catch (error) {
        this.observer.sendFailed(error);
        this.nextAttemptAt = Date.now() + this.backoffMs;
        this.backoffMs = Math.min(this.backoffMs * 2, this.options.maxBackoffMs ?? 5000);
        if (this.closed) return;
      }
    }
  }
}
