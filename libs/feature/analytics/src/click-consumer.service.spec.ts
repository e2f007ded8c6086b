import { Registry } from 'prom-client';
import { ClickAggregateStore, ClickEvent, ClickEventSource, ConsumerProgress, MinuteVisitorRow } from '@shortlink/clicks-domain';
import { ClickConsumer, runsByMonth } from './click-consumer.service';

const at = (iso: string, offset: number) => ({ partition: 0, offset: String(offset), event: { occurredAt: Date.parse(iso), tenantId: 't', domain: 'd', code: 'c', ip: '1.1.1.1', userAgent: 'ua' } as ClickEvent });
const batchOf = (source: string, ...messages: ReturnType<typeof at>[]) => ({ source, partition: 0, messages });

/** A store that records writes and keeps progress per source, and can fail the n-th write like a crash between two inserts. */
class RecordingStore implements Partial<ClickAggregateStore> {
  writes: Array<{ rows: MinuteVisitorRow[]; progress: ConsumerProgress }> = [];
  failOn = -1;
  offsets = new Map<string, Map<number, bigint>>();
  reads = 0;
  async ingestedOffsets(source: string) {
    this.reads++;
    return new Map(this.offsets.get(source) ?? []);
  }
  async write(rows: readonly MinuteVisitorRow[], progress?: ConsumerProgress) {
    if (this.writes.length === this.failOn) throw new Error('crash');
    this.writes.push({ rows: [...rows], progress: progress! });
    const bySource = this.offsets.get(progress!.source) ?? new Map<number, bigint>();
    bySource.set(progress!.partition, BigInt(progress!.lastOffset));
    this.offsets.set(progress!.source, bySource);
  }
  clicks() {
    return this.writes.flatMap((w) => w.rows).reduce((n, r) => n + r.clicks, 0);
  }
}

describe('ClickConsumer', () => {
  const source = { start: async () => undefined, close: async () => undefined } as ClickEventSource;
  const consumer = (store: RecordingStore) => new ClickConsumer(source, store as unknown as ClickAggregateStore, 'secret', new Registry());

  it('writes a batch that crosses a month boundary as one insert per month, each with its progress', async () => {
    const store = new RecordingStore();
    await consumer(store).handle(batchOf('kafka:t', at('2026-11-30T23:59:59Z', 1), at('2026-12-01T00:00:01Z', 2), at('2026-12-01T00:00:02Z', 3)));
    expect(store.writes.map((w) => w.progress)).toEqual([
      { source: 'kafka:t', partition: 0, lastOffset: '1' },
      { source: 'kafka:t', partition: 0, lastOffset: '3' },
    ]);
    expect(store.clicks()).toBe(3);
  });

  it('after a crash between the two inserts, the replay counts only what was not written', async () => {
    const store = new RecordingStore();
    store.failOn = 1;
    const batch = batchOf('kafka:t', at('2026-11-30T23:59:59Z', 1), at('2026-12-01T00:00:01Z', 2));
    await expect(consumer(store).handle(batch)).rejects.toThrow('crash');
    store.failOn = -1;
    await consumer(store).handle(batch);
    expect(store.clicks()).toBe(2);
  });

  it('counts a new source from offset 0 although another source already reached higher offsets (a restarted in-process log)', async () => {
    const store = new RecordingStore();
    const c = consumer(store);
    await c.handle(batchOf('memory:first', at('2026-12-01T00:00:01Z', 0), at('2026-12-01T00:00:02Z', 1), at('2026-12-01T00:00:03Z', 2)));
    await c.handle(batchOf('memory:second', at('2026-12-01T00:01:00Z', 0), at('2026-12-01T00:01:01Z', 1)));
    expect(store.clicks()).toBe(5);
    // A replay of the second source's batch is still recognised.
    await consumer(store).handle(batchOf('memory:second', at('2026-12-01T00:01:00Z', 0), at('2026-12-01T00:01:01Z', 1)));
    expect(store.clicks()).toBe(5);
  });

  it('re-reads progress when a batch does not continue where it left off (another member advanced the partition)', async () => {
    const store = new RecordingStore();
    const c = consumer(store);
    await c.handle(batchOf('kafka:t', at('2026-12-01T00:00:01Z', 1)));
    store.offsets.get('kafka:t')!.set(0, 5n); // another member wrote offsets 2..5
    const readsBefore = store.reads;
    await c.handle(batchOf('kafka:t', at('2026-12-01T00:00:02Z', 4), at('2026-12-01T00:00:03Z', 5), at('2026-12-01T00:00:04Z', 6)));
    expect(store.reads).toBe(readsBefore + 1);
    expect(store.clicks()).toBe(2);
    await c.handle(batchOf('kafka:t', at('2026-12-01T00:00:05Z', 7)));
    expect(store.reads).toBe(readsBefore + 1);
  });

  it('splits only where the month changes', () => {
    expect(runsByMonth([at('2026-01-01T00:00:00Z', 1), at('2026-01-31T00:00:00Z', 2)])).toHaveLength(1);
    expect(runsByMonth([])).toEqual([]);
  });
});
