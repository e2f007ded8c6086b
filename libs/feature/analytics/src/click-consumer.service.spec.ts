import { Registry } from 'prom-client';
import { ClickAggregateStore, ClickEvent, ClickEventSource, MinuteVisitorRow } from '@shortlink/clicks-domain';
import { ClickConsumer, runsByMonth } from './click-consumer.service';

const at = (iso: string, offset: number) => ({ partition: 0, offset: String(offset), event: { occurredAt: Date.parse(iso), tenantId: 't', domain: 'd', code: 'c', ip: '1.1.1.1', userAgent: 'ua' } as ClickEvent });

/** A store that records writes and can fail the n-th one, like a crash between two inserts. */
class RecordingStore implements Partial<ClickAggregateStore> {
  writes: MinuteVisitorRow[][] = [];
  failOn = -1;
  offsets = new Map<number, bigint>();
  async ingestedOffsets() {
    return new Map(this.offsets);
  }
  async write(rows: readonly MinuteVisitorRow[]) {
    if (this.writes.length === this.failOn) throw new Error('crash');
    this.writes.push([...rows]);
    for (const r of rows) if (!this.offsets.has(r.sourcePartition) || BigInt(r.sourceOffset) > this.offsets.get(r.sourcePartition)!) this.offsets.set(r.sourcePartition, BigInt(r.sourceOffset));
  }
}

describe('ClickConsumer', () => {
  const source = { start: async () => undefined, close: async () => undefined } as ClickEventSource;

  it('writes a batch that crosses a month boundary as one insert per month, in offset order', async () => {
    const store = new RecordingStore();
    const consumer = new ClickConsumer(source, store as unknown as ClickAggregateStore, 'secret', new Registry());
    await consumer.handle({ partition: 0, messages: [at('2026-11-30T23:59:59Z', 1), at('2026-12-01T00:00:01Z', 2), at('2026-12-01T00:00:02Z', 3)] });
    expect(store.writes.map((w) => w.map((r) => r.sourceOffset))).toEqual([['1'], ['3']]);
  });

  it('after a crash between the two inserts, the replay counts only what was not written', async () => {
    const store = new RecordingStore();
    store.failOn = 1;
    const batch = { partition: 0, messages: [at('2026-11-30T23:59:59Z', 1), at('2026-12-01T00:00:01Z', 2)] };
    await expect(new ClickConsumer(source, store as unknown as ClickAggregateStore, 's', new Registry()).handle(batch)).rejects.toThrow('crash');
    store.failOn = -1;
    await new ClickConsumer(source, store as unknown as ClickAggregateStore, 's', new Registry()).handle(batch);
    const clicks = store.writes.flat().reduce((n, r) => n + r.clicks, 0);
    expect(clicks).toBe(2);
  });

  it('splits only where the month changes', () => {
    expect(runsByMonth({ partition: 0, messages: [at('2026-01-01T00:00:00Z', 1), at('2026-01-31T00:00:00Z', 2)] })).toHaveLength(1);
  });
});
