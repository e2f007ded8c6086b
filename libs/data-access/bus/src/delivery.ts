import { ClickBatch } from '@shortlink/clicks-domain';
import { RetryBackoff } from './backoff';
import { BusLogger } from './logging';

/** What a source lends the redelivery loop: how to call, how long to wait, when to give up. */
export interface Redelivery {
  readonly backoff: RetryBackoff;
  readonly logger: BusLogger;
  /** Log namespace of the source, e.g. `bus.kafka`. */
  readonly namespace: string;
  readonly groupId: string;
  /** Runs one handler call (a source may keep its group membership alive meanwhile). */
  attempt(call: () => Promise<void>): Promise<void>;
  /** False when the batch must not be retried any more (closing, or the partition moved away). */
  stillWanted(): boolean;
  /** Waits before the next attempt; false when the source must stop first. May throw to give the partition back. */
  waitBeforeRetry(ms: number): Promise<boolean>;
  /** Counts a failed handler call. */
  failed(): void;
}

/**
 * Calls the handler with the batch until it resolves, with a doubling backoff between attempts and
 * a warning per failure; nothing else is delivered meanwhile. True when handled, false when the
 * source stopped first (the batch stays uncommitted and comes again).
 */
export async function deliverUntilHandled(handler: (batch: ClickBatch) => Promise<void>, batch: ClickBatch, r: Redelivery): Promise<boolean> {
  for (;;) {
    try {
      await r.attempt(() => handler(batch));
      r.backoff.reset();
      return true;
    } catch (error) {
      r.failed();
      if (!r.stillWanted()) return false;
      const wait = r.backoff.next();
      r.logger({
        level: 'warn',
        namespace: r.namespace,
        message: `click handler failed, redelivering the batch in ${wait} ms`,
        extra: { groupId: r.groupId, partition: batch.partition, firstOffset: batch.messages[0]?.offset, error: String(error) },
      });
      if (!(await r.waitBeforeRetry(wait))) return false;
    }
  }
}
