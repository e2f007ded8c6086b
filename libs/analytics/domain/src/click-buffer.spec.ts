import { BatchSink, ClickBuffer } from './click-buffer';

type Ev = { eventId: string };
type ClickEventSink = BatchSink<Ev> & { close(): Promise<void> };
const ev = (i: number): Ev => ({ eventId: String(i) });

describe('ClickBuffer', () => {
  it('drops and counts events beyond its capacity without blocking the caller', async () => {
    const sent: Ev[][] = [];
    let release!: () => void;
    const sink: ClickEventSink = {
      send: (b) =>
        new Promise<void>((r) => {
          sent.push([...b]);
          release = r;
        }),
      close: async () => undefined,
    };
    const dropped: number[] = [];
    const buffer = new ClickBuffer<Ev>(
      sink,
      { capacity: 3, batchSize: 10, flushIntervalMs: 1000 },
      { dropped: (n) => dropped.push(n), sendFailed: () => undefined },
    );
    expect([1, 2, 3, 4, 5].map((i) => buffer.push(ev(i)))).toEqual([true, true, true, false, false]);
    expect(buffer.dropped).toBe(2);
    expect(dropped).toEqual([1, 1]);
    const flushed = buffer.flush();
    release();
    await flushed;
    expect(sent).toEqual([[ev(1), ev(2), ev(3)]]);
    expect(buffer.size).toBe(0);
  });

  it('keeps events when the sink fails and sends them once it works again', async () => {
    let fail = true;
    const sent: string[] = [];
    const sink: ClickEventSink = {
      send: async (b) => {
        if (fail) throw new Error('broker down');
        sent.push(...b.map((e) => e.eventId));
      },
      close: async () => undefined,
    };
    const buffer = new ClickBuffer<Ev>(sink, { capacity: 100, batchSize: 2, flushIntervalMs: 1000, retryBackoffMs: 1 });
    [1, 2, 3].forEach((i) => buffer.push(ev(i)));
    await buffer.flush();
    expect(buffer.size).toBe(3);
    fail = false;
    await new Promise((r) => setTimeout(r, 5));
    await buffer.flush();
    expect(sent).toEqual(['1', '2', '3']);
  });
});
