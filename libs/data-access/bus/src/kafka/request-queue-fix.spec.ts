import { fixKafkajsRequestQueue, kafkajsRequestQueue } from './request-queue-fix';

type Queue = {
  pending: unknown[];
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  scheduleCheckPendingRequests(): void;
  checkPendingRequests(): void;
  maybeThrottle(ms: number): void;
  destroy(): void;
};

const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const newQueue = (): Queue => {
  const RequestQueue = kafkajsRequestQueue() as unknown as new (o: object) => Queue;
  return new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 1000, enforceRequestTimeout: false, clientId: 'test', broker: 'b:9092', logger });
};

/** Checks of the pending requests a queue runs in `ms` of the fake clock, from one check on. */
function checksIn(queue: Queue, ms: number): number {
  let checks = 0;
  const check = queue.checkPendingRequests.bind(queue);
  queue.checkPendingRequests = () => {
    checks++;
    check();
  };
  queue.checkPendingRequests();
  jest.advanceTimersByTime(ms);
  return checks;
}

describe("kafkajs' request queue, fixed", () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('sets no timer when nothing is pending and nothing throttled (kafkajs alone checked every millisecond forever)', () => {
    fixKafkajsRequestQueue();
    fixKafkajsRequestQueue(); // once per process, whatever the number of clients
    const queue = newQueue();
    expect(checksIn(queue, 1000)).toBe(1);
    expect(queue.throttleCheckTimeoutId).toBeNull();
  });

  it('still checks a pending request until it can go, and waits out a throttle', () => {
    fixKafkajsRequestQueue();
    const queue = newQueue();
    const request = { send: jest.fn(), expectResponse: true, correlationId: 1 };
    queue.pending.push(request);
    queue.scheduleCheckPendingRequests();
    expect(queue.throttleCheckTimeoutId).not.toBeNull();
    jest.advanceTimersByTime(10);
    expect(request.send).toHaveBeenCalledTimes(1);
    const throttled = newQueue();
    throttled.maybeThrottle(50);
    throttled.scheduleCheckPendingRequests();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
    jest.advanceTimersByTime(60);
    expect(throttled.throttleCheckTimeoutId).toBeNull();
    queue.destroy();
    throttled.destroy();
  });
});
