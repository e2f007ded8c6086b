export interface RetryBackoffOptions {
  /** First wait after a failed handler call, ms (default 100). */
  readonly initialMs?: number;
  /** Cap of the doubling wait, ms (default 5000). */
  readonly maxMs?: number;
}

/** Doubling wait between redeliveries of a failed batch: 100 ms, 200 ms ... capped at 5 s. */
export class RetryBackoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private current: number;

  constructor(options: RetryBackoffOptions = {}) {
    this.initialMs = Math.max(1, options.initialMs ?? 100);
    this.maxMs = Math.max(this.initialMs, options.maxMs ?? 5000);
    this.current = this.initialMs;
  }

  next(): number {
    const wait = this.current;
    this.current = Math.min(this.maxMs, this.current * 2);
    return wait;
  }

  reset(): void {
    this.current = this.initialMs;
  }
}

/**
 * A sleep that close() can cut short: `abort()` resolves every pending sleep at once and clears
 * its timer, so a closing source never leaves a timer behind.
 */
export class AbortableSleeper {
  private readonly pending = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private aborted = false;

  sleep(ms: number): Promise<void> {
    if (this.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.pending.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      this.pending.add(entry);
    });
  }

  abort(): void {
    this.aborted = true;
    for (const entry of this.pending) {
      clearTimeout(entry.timer);
      entry.resolve();
    }
    this.pending.clear();
  }
}
