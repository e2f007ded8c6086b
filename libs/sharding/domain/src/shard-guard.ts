import {
  BrokenCircuitError,
  circuitBreaker,
  CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  handleWhen,
  timeout,
  TimeoutPolicy,
  TaskCancelledError,
  TimeoutStrategy,
} from 'cockatiel';
import { BulkheadFullError, DomainError, ErrorCode, RequestDeadline, WaitingBulkhead } from '@shortlink/core';
import { DuplicateLinkError } from '@shortlink/links-domain';

export interface ShardGuardOptions {
  /** Longest one operation may take before it fails with SHARD_UNAVAILABLE; 0: unbounded. */
  readonly timeoutMs: number;
  /** The same for a multi-row insert (a batch chunk of up to 1000 rows). */
  readonly bulkTimeoutMs: number;
  /** Consecutive failures after which the shard fails fast for `openMs`, then one call tries it again. */
  readonly failures: number;
  readonly openMs: number;
  /** A redirect's look-ups in flight on the shard at most; beyond, they queue. Null: unbounded. */
  readonly redirectLookups: number | null;
  /** Look-ups that may wait for one of those permits, and how long each may wait; beyond, SHARD_UNAVAILABLE. */
  readonly redirectLookupQueue: { readonly max: number; readonly waitMs: number };
}

/** How an operation goes through the guard: `bulk` with the longer timeout, `redirect` within the redirect's share. */
export type GuardedCall = 'single' | 'bulk' | 'redirect';

/**
 * The one guard of one shard (docs/design.md, "Failure containment"), built with cockatiel: a
 * timeout inside a breaker that opens after `failures` failures in a row; a redirect's look-ups go
 * through a bulkhead first. Domain answers (a DomainError, a duplicate) are not failures. Every
 * refusal is DomainError SHARD_UNAVAILABLE with the shard's name and a Retry-After. No call waits
 * longer than its timeout: while the breaker's one probe runs, the other calls fail at once.
 */
export class ShardGuard {
  private readonly breaker: CircuitBreakerPolicy;
  private readonly single: TimeoutPolicy | null;
  private readonly bulk: TimeoutPolicy | null;
  private readonly lookups: WaitingBulkhead | null;
  private openedAt = 0;

  constructor(
    readonly shard: string,
    private readonly options: ShardGuardOptions,
  ) {
    const failure = handleWhen((error) => !(error instanceof DomainError) && !(error instanceof DuplicateLinkError));
    this.breaker = circuitBreaker(failure, { halfOpenAfter: options.openMs, breaker: new ConsecutiveBreaker(options.failures) });
    this.breaker.onBreak(() => (this.openedAt = Date.now()));
    this.single = options.timeoutMs > 0 ? timeout(options.timeoutMs, TimeoutStrategy.Aggressive) : null;
    this.bulk = options.bulkTimeoutMs > 0 ? timeout(options.bulkTimeoutMs, TimeoutStrategy.Aggressive) : null;
    const queue = options.redirectLookupQueue;
    this.lookups = options.redirectLookups === null ? null : new WaitingBulkhead(options.redirectLookups, queue.max, queue.waitMs);
  }

  /** False while the breaker keeps the shard out (open, or its probe under way). */
  get available(): boolean {
    const state = this.breaker.state;
    return state === CircuitState.Closed || (state === CircuitState.Open && Date.now() - this.openedAt >= this.options.openMs);
  }

  async run<T>(op: () => Promise<T>, call: GuardedCall = 'single'): Promise<T> {
    const bounded = call === 'bulk' ? this.bulk : this.single;
    // The shard call itself: a timeout stops waiting for it, not the query in the database, which keeps its
    // look-up permit until it ends (DB_CONCURRENCY bounds the queries on the shard; docs/design.md, "Redirect read path").
    let running: Promise<T> | undefined;
    let ended = false;
    const started = () => {
      ended = false;
      running = op();
      running.then(
        () => (ended = true),
        () => (ended = true),
      );
      return running;
    };
    const guarded = () => {
      // cockatiel's half-open breaker makes the calls that come during its probe wait for its answer and then run again:
      // on the shard (the probe passed) or behind a second probe (a call begun before the breaker opened failed meanwhile
      // and opened it again), up to twice the timeout in all. So they fail at once (docs/design.md, "Failure containment").
      if (this.breaker.state === CircuitState.HalfOpen) throw new BrokenCircuitError();
      return this.breaker.execute(bounded ? () => bounded.execute(started) : started);
    };
    const queued = () => (call === 'redirect' && this.lookups ? this.lookups.execute(guarded, () => (ended ? undefined : running)) : guarded());
    // The request's deadline (docs/design.md, "Overload"): the call gets what is left of it when that is less than its own
    // timeout, outside the breaker (a request short of time says nothing about the shard). A batch chunk keeps its own.
    const left = call === 'bulk' ? Number.POSITIVE_INFINITY : RequestDeadline.remainingMs();
    const deadline = left !== Number.POSITIVE_INFINITY && (this.options.timeoutMs <= 0 || left < this.options.timeoutMs);
    try {
      if (!deadline) return await queued();
      if (left <= 0) throw new TaskCancelledError();
      return await timeout(Math.ceil(left), TimeoutStrategy.Aggressive).execute(queued);
    } catch (error) {
      if (error instanceof DomainError || error instanceof DuplicateLinkError) throw error;
      if (deadline && error instanceof TaskCancelledError) {
        const why = `the request's deadline passed before shard ${this.shard} answered`;
        throw new DomainError(ErrorCode.SHARD_UNAVAILABLE, why, { shard: this.shard, retryAfterSeconds: 1, deadline: true });
      }
      if (error instanceof BulkheadFullError) {
        const why = `too many lookups are waiting on shard ${this.shard}; retry shortly`;
        throw new DomainError(ErrorCode.SHARD_UNAVAILABLE, why, { shard: this.shard, retryAfterSeconds: 1 });
      }
      if (error instanceof BrokenCircuitError) {
        const retryAfterSeconds = Math.max(1, Math.ceil((this.openedAt + this.options.openMs - Date.now()) / 1000));
        throw new DomainError(ErrorCode.SHARD_UNAVAILABLE, `shard ${this.shard} is unavailable`, { shard: this.shard, retryAfterSeconds });
      }
      throw new DomainError(ErrorCode.SHARD_UNAVAILABLE, `shard ${this.shard} is unavailable`, { shard: this.shard, retryAfterSeconds: 1 }, { cause: error });
    }
  }
}
