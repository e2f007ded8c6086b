import { Clock, systemClock } from './clock';

/**
 * How late this process's event loop runs now (docs/design.md, "Overload"): a timer due every
 * `intervalMs` fires late by as long as the loop was busy with other callbacks, and a request's
 * bytes wait in the same queue before its handler runs. `lagMs()` is what a request that reaches its
 * handler now has most likely waited since it arrived: the lateness of the last tick, or, while the
 * next tick is overdue (the loop is busy right now), how overdue it is. The HTTP server counts a
 * request's deadline from its arrival so estimated (its handler runs that much late), and sheds at
 * once what arrives when the queue is already longer than its class may wait.
 */
export class EventLoopLag {
  private lastTickAt: number;
  private lastLagMs = 0;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly intervalMs = 20,
    private readonly clock: Clock = systemClock,
  ) {
    this.lastTickAt = clock.now();
  }

  /** Starts sampling (an unref'd timer: it keeps no process alive). */
  start(): this {
    if (this.timer) return this;
    this.lastTickAt = this.clock.now();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One tick of the sampling timer (called by it; a test calls it with a fake clock). */
  tick(): void {
    const now = this.clock.now();
    this.lastLagMs = Math.max(0, now - this.lastTickAt - this.intervalMs);
    this.lastTickAt = now;
  }

  /** Milliseconds the loop is late now: the last tick's lateness, or the next tick's while it is overdue. */
  lagMs(): number {
    const overdue = this.clock.now() - this.lastTickAt - this.intervalMs;
    return Math.max(this.lastLagMs, overdue, 0);
  }
}
