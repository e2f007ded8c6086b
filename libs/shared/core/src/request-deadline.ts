import { AsyncLocalStorage } from 'async_hooks';
import { Clock, systemClock } from './clock';

interface Deadline {
  /** The epoch millisecond by which the request must have its answer (it may move: a body's end restarts it). */
  readonly at: () => number;
  /** True once the answer has started: a stream that began in time is not cut by the deadline. */
  readonly answered: () => boolean;
}

const storage = new AsyncLocalStorage<Deadline>();

/**
 * The deadline of the request being served (docs/design.md, "Overload"): the HTTP server runs each
 * request inside it, and the calls below it (a shard query, a ClickHouse query) take no longer than
 * what is left, so that no call outlives its request.
 */
export const RequestDeadline = {
  run<T>(at: number | (() => number), answered: () => boolean, fn: () => T): T {
    return storage.run({ at: typeof at === 'number' ? () => at : at, answered }, fn);
  },

  /** Milliseconds left to the current request's deadline; Infinity outside a request, or once its answer started. */
  remainingMs(clock: Clock = systemClock): number {
    const d = storage.getStore();
    if (!d || d.answered()) return Number.POSITIVE_INFINITY;
    return d.at() - clock.now();
  },
};
