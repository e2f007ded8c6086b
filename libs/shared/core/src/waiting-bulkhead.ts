/** Thrown when a call found every permit taken and could not wait for one (queue full or wait over). */
export class BulkheadFullError extends Error {
  constructor(readonly reason: 'queue_full' | 'wait_expired') {
    super(reason === 'queue_full' ? 'every permit is taken and the queue is full' : 'no permit became free in time');
    this.name = 'BulkheadFullError';
  }
}

const ignore = () => undefined;

interface Waiter {
  readonly grant: () => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * At most `limit` calls at once; the next `queueMax` wait in arrival order for at most `maxWaitMs`
 * (docs/design.md, "Redirect read path", step 5). A cold cache sends a burst of distinct codes to
 * the shards: waiting a few milliseconds for a permit serves them, where refusing at once turned
 * real visitors away with 503. A waiter holds nothing while it waits, and a freed permit passes
 * straight to the oldest waiter, so a newcomer cannot take it first.
 */
export class WaitingBulkhead {
  private active = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly limit: number,
    readonly queueMax: number,
    readonly maxWaitMs: number,
  ) {}

  /** Calls running now, and calls waiting for a permit. */
  get inFlight(): number {
    return this.active;
  }
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Runs `call` under a permit. The permit comes back when its answer is in and, if `stillRunning` names
   * work the call started and gave up on (a shard query a timeout stopped waiting for, which goes on
   * in the database), once that has ended too: the limit bounds the work on the server, not the waits.
   */
  async execute<T>(call: () => Promise<T>, stillRunning: () => Promise<unknown> | undefined = () => undefined): Promise<T> {
    if (this.active < this.limit) this.active++;
    else await this.waitForPermit();
    try {
      return await call();
    } finally {
      const left = stillRunning();
      if (left === undefined) this.release();
      else void left.then(ignore, ignore).then(() => this.release());
    }
  }

  private waitForPermit(): Promise<void> {
    if (this.waiting.length >= this.queueMax || this.maxWaitMs <= 0) return Promise.reject(new BulkheadFullError('queue_full'));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: resolve,
        timer: setTimeout(() => {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(new BulkheadFullError('wait_expired'));
        }, this.maxWaitMs),
      };
      this.waiting.push(waiter);
    });
  }

  /** The permit goes to the oldest waiter (the count stays), or back to the pool. */
  private release(): void {
    const next = this.waiting.shift();
    if (next === undefined) {
      this.active--;
      return;
    }
    clearTimeout(next.timer);
    next.grant();
  }
}
