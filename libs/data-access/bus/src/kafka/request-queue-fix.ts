/**
 * kafkajs 2.2.4 keeps every broker connection's request queue in a timer loop of 1 ms for as long as
 * the connection lives (tulios/kafkajs#1704, #1556; fixes proposed in #1667 and #1768, none released):
 * `scheduleCheckPendingRequests` sets a timer even when nothing is pending and nothing throttled,
 * with a negative delay (`throttledUntil` is -1), which Node runs after 1 ms, and the check it runs
 * schedules the next one. Measured on the redirect: about 1 000 wakeups a second and 25-37 ms of CPU
 * a second with no request at all (docs/benchmarks.md, "CPU at rest"), paid by every app with a Kafka client.
 *
 * The fix #1768's review settled on, applied to kafkajs' class once: with nothing pending and no
 * client-side throttle ahead, nothing is scheduled. A request that cannot go at once is pushed to
 * `pending` and schedules its check as before (kafkajs' own code, unchanged), and a fulfilled request
 * checks the pending ones itself, so no request waits on the timer that is no longer set.
 */
interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  scheduleCheckPendingRequests(): void;
}

const FIXED = Symbol.for('shortlink.kafkajs.requestQueueFixed');

/** The class kafkajs' connections build their queues from (kafkajs keeps it in its sources, which it ships). */
export function kafkajsRequestQueue(): { prototype: RequestQueueLike } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('kafkajs/src/network/requestQueue') as { prototype: RequestQueueLike };
}

/** Applies the fix once per process (idempotent). */
export function fixKafkajsRequestQueue(RequestQueue: { prototype: RequestQueueLike } = kafkajsRequestQueue()): void {
  const proto = RequestQueue.prototype as RequestQueueLike & { [FIXED]?: true };
  if (proto[FIXED]) return;
  const schedule = proto.scheduleCheckPendingRequests;
  proto.scheduleCheckPendingRequests = function (this: RequestQueueLike): void {
    if (this.pending.length === 0 && !(this.throttledUntil > Date.now())) return;
    schedule.call(this);
  };
  proto[FIXED] = true;
}
