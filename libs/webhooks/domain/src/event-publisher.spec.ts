import { EventPublisher } from './event-publisher';
import { PlatformEvent, PlatformEventSink } from './index';

/** A bus that refuses while `down`, and keeps what it took. */
class FlakySink implements PlatformEventSink {
  down = false;
  readonly taken: PlatformEvent[] = [];
  async publish(events: readonly PlatformEvent[]) {
    if (this.down) throw new Error('broker down');
    this.taken.push(...events);
  }
  async close() {}
}

describe('EventPublisher', () => {
  it('never makes the caller wait or fail while the bus is down, and sends everything in order once it is back', async () => {
    const sink = new FlakySink();
    sink.down = true;
    const deferred: number[] = [];
    const publisher = new EventPublisher(sink, { retryMs: 5, onDeferred: (_e, pending) => deferred.push(pending) });
    const events = [1, 2, 3].map((i) => publisher.event('link.created', 't1', { i }));
    expect(publisher.publish([events[0]])).toBeUndefined();
    publisher.publish([events[1], events[2]]);
    await publisher.idle();
    expect(deferred.length).toBeGreaterThan(0);
    expect(publisher.pendingCount).toBe(3);
    sink.down = false;
    await new Promise((r) => setTimeout(r, 30));
    await publisher.idle();
    expect(sink.taken.map((e) => e.id)).toEqual(events.map((e) => e.id));
    expect(publisher.pendingCount).toBe(0);
    await publisher.stop();
  });

  it('keeps at most maxPending events, dropping the oldest, and counts what stop() could not send', async () => {
    const sink = new FlakySink();
    sink.down = true;
    let dropped = 0;
    const publisher = new EventPublisher(sink, { retryMs: 60_000, maxPending: 2, onDropped: (n) => (dropped += n) });
    for (let i = 0; i < 3; i++) publisher.publish([publisher.event('link.deleted', 't1', { i })]);
    expect(dropped).toBe(1);
    await publisher.stop();
    expect(dropped).toBe(3);
  });
});
