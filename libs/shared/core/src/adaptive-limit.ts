import { Clock, systemClock } from './clock';

/**
 * The classes of work an app admits, highest priority first (docs/design.md, "Overload"). Each may
 * take only its share of the adaptive limit, so a flood of a lower class leaves room for the higher
 * ones: a redirect may fill the whole limit, an API write 90 % of it, an API read 70 %, an
 * analytics read 50 %.
 */
export type WorkClass = 'redirect' | 'write' | 'read' | 'analytics';
export const WORK_CLASSES: readonly WorkClass[] = ['redirect', 'write', 'read', 'analytics'];
export const CLASS_SHARE: Readonly<Record<WorkClass, number>> = { redirect: 1, write: 0.9, read: 0.7, analytics: 0.5 };

export interface AdaptiveLimitOptions {
  /** The limit at start, and its bounds. */
  readonly initial: number;
  readonly min: number;
  readonly max: number;
  /** A request that took longer than this (to its first byte), or that was dropped, is a sign of congestion. */
  readonly latencyTargetMs: number;
  /** The limit is multiplied by this on congestion (at most once per latency target). */
  readonly backoff?: number;
  readonly clock?: Clock;
}

/** An admitted request: `done` once its answer started (or it was dropped). */
export interface Permit {
  done(dropped?: boolean): void;
}

/**
 * An AIMD concurrency limit on the requests in flight (the `AIMDLimit` of Netflix's
 * concurrency-limits, with a latency target): every answer that starts within the target while at
 * least half the limit was in use, or while the limit is below its initial value, raises the limit by
 * 1/limit (one per limit's worth of answers; a limit lowered by a burst comes back in calm traffic);
 * an answer slower than the target, or dropped, multiplies it by `backoff`, at most once per target's
 * length so that one slow burst counts once. Beyond its class's share of the limit a request is not
 * admitted: the app answers 503 at once instead of queueing it behind work it cannot finish in time.
 */
export class AdaptiveConcurrencyLimit {
  private limitValue: number;
  private readonly initial: number;
  private active = 0;
  private lastDecreaseAt = Number.NEGATIVE_INFINITY;
  private readonly backoff: number;
  private readonly clock: Clock;
  /** Requests refused, by class, since start. */
  readonly shed: Record<WorkClass, number> = { redirect: 0, write: 0, read: 0, analytics: 0 };

  constructor(private readonly options: AdaptiveLimitOptions) {
    if (options.min < 1 || options.max < options.min) throw new Error('the limit needs 1 <= min <= max');
    this.limitValue = Math.min(options.max, Math.max(options.min, options.initial));
    this.initial = this.limitValue;
    this.backoff = options.backoff ?? 0.9;
    this.clock = options.clock ?? systemClock;
  }

  get limit(): number {
    return Math.floor(this.limitValue);
  }
  get inFlight(): number {
    return this.active;
  }

  /** What a class may have in flight now (at least 1, so no class starves for good). */
  capacityOf(kind: WorkClass): number {
    return Math.max(1, Math.floor(this.limitValue * CLASS_SHARE[kind]));
  }

  /** A permit, or null: over the class's share of the limit (the request is shed). */
  tryAcquire(kind: WorkClass): Permit | null {
    if (this.active >= this.capacityOf(kind)) {
      this.shed[kind]++;
      return null;
    }
    this.active++;
    const start = this.clock.now();
    const busy = this.active >= this.limitValue / 2;
    let released = false;
    return {
      done: (dropped = false) => {
        if (released) return;
        released = true;
        this.active--;
        this.sample(this.clock.now() - start, dropped, busy);
      },
    };
  }

  private sample(rttMs: number, dropped: boolean, busy: boolean): void {
    const now = this.clock.now();
    if (dropped || rttMs > this.options.latencyTargetMs) {
      if (now - this.lastDecreaseAt < this.options.latencyTargetMs) return;
      this.lastDecreaseAt = now;
      this.limitValue = Math.max(this.options.min, this.limitValue * this.backoff);
    } else if (busy || this.limitValue < this.initial) {
      this.limitValue = Math.min(this.options.max, this.limitValue + 1 / this.limitValue);
    }
  }
}
