import { ClickBatch, ClickEvent, eventIdOf } from '@shortlink/clicks-domain';
import { decodeClickRecord } from '../codec';
import { murmur32 } from '@shortlink/shard-router';
import { RetryBackoff } from '../backoff';
import { aClick, describeClickBusContract } from '../contract/click-bus.contract';
import { BusLogEntry } from '../logging';
import { InProcessClickLog } from './in-process-click-log';
import { MemoryClickEventSink } from './memory-click-event-sink';
import { MemoryClickEventSource } from './memory-click-event-source';

const quiet = () => undefined;

/** One record per event, as a producer flushing after every click would write them (these tests count messages). */
const appendEach = (log: InProcessClickLog, events: ClickEvent[]) => events.flatMap((e) => log.append([e]));

describeClickBusContract('in-process log', async () => {
  const log = new InProcessClickLog();
  const sink = new MemoryClickEventSink(log);
  return {
    sink,
    newSource: (groupId, options) => new MemoryClickEventSource(log, { groupId, logger: quiet, ...options }),
    produceRaw: async (key, value) => {
      log.appendRaw(key, value);
    },
    close: () => sink.close(),
  };
});

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function collect() {
  const batches: ClickBatch[] = [];
  return { batches, handler: async (b: ClickBatch) => void batches.push(b), offsets: () => batches.flatMap((b) => b.messages.map((m) => Number(m.offset))) };
}

describe('in-process click log', () => {
  it('partitions by murmur32 of `${domain}/${code}` over 6 partitions by default', () => {
    const log = new InProcessClickLog();
    expect(log.partitions).toBe(6);
    for (let i = 0; i < 50; i++) {
      const e = aClick();
      const [{ partition }] = appendEach(log, [e]);
      expect(partition).toBe(murmur32(`${e.domain}/${e.code}`) % 6);
    }
  });

  it('numbers offsets per partition from 0', () => {
    const log = new InProcessClickLog({ partitions: 3 });
    const placed = appendEach(
      log,
      Array.from({ length: 30 }, () => aClick()),
    );
    for (let p = 0; p < 3; p++) {
      const offsets = placed.filter((x) => x.partition === p).map((x) => x.offset);
      expect(offsets).toEqual(offsets.map((_, i) => i));
      expect(log.endOffset(p)).toBe(offsets.length);
    }
  });

  it('keeps at most maxMessagesPerPartition messages, dropping the oldest', () => {
    const log = new InProcessClickLog({ partitions: 1, maxMessagesPerPartition: 3 });
    const events = Array.from({ length: 5 }, () => aClick());
    appendEach(log, events);
    expect(log.startOffset(0)).toBe(2);
    expect(log.endOffset(0)).toBe(5);
    expect(log.read(0, 0, 10).map((r) => r.offset)).toEqual([2, 3, 4]);
    expect(log.read(0, 0, 10).map((r) => (decodeClickRecord(r.value) as ClickEvent[])[0])).toEqual(events.slice(2));
    appendEach(log, [aClick(), aClick(), aClick(), aClick()]);
    expect(log.read(0, 0, 10).map((r) => r.offset)).toEqual([6, 7, 8]);
  });

  it('keeps at most maxBytesPerPartition bytes, dropping the oldest, and reads back what was written', () => {
    const log = new InProcessClickLog({ partitions: 1, maxBytesPerPartition: 4096 });
    const written = new Map<number, { key: string | null; value: string }>();
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      // Sizes from a few bytes to ~900, multi-byte characters and null keys included, so records wrap at every position.
      const value = JSON.stringify({ i, pad: 'é→x'.repeat(Math.floor(random() * 300)) });
      const key = i % 7 === 0 ? null : `sho.rt/ü${i}`;
      const { offset } = log.appendRaw(key, value, 0);
      written.set(offset, { key, value });
      const records = log.read(0, 0, 100_000);
      expect(records.map((r) => r.offset)).toEqual(Array.from({ length: log.endOffset(0) - log.startOffset(0) }, (_, k) => log.startOffset(0) + k));
      expect(records[records.length - 1].offset).toBe(offset);
      const bytes = records.reduce((sum, r) => sum + 16 + Buffer.byteLength(r.key ?? '') + r.value.length, 0);
      expect(bytes).toBeLessThanOrEqual(4096);
      // Only the oldest are dropped, and only as many as needed: at most two records' worth is unused.
      expect(bytes).toBeGreaterThan(offset < 10 ? 0 : 4096 - 2 * 2000);
      expect(records.map((r) => ({ key: r.key, value: r.value.toString('utf8') }))).toEqual(records.map((r) => written.get(r.offset)));
    }
  });

  it('refuses a message larger than the partition and keeps what it had', () => {
    const log = new InProcessClickLog({ partitions: 1, maxBytesPerPartition: 1024 });
    log.appendRaw('k', 'kept', 0);
    expect(() => log.appendRaw('k', 'x'.repeat(2000), 0)).toThrow(RangeError);
    expect(log.read(0, 0, 10).map((r) => r.value.toString('utf8'))).toEqual(['kept']);
    expect(() => new InProcessClickLog({ maxBytesPerPartition: 10 })).toThrow(/maxBytesPerPartition/);
  });

  it('a new group starts at the oldest retained message', async () => {
    const log = new InProcessClickLog({ partitions: 1, maxMessagesPerPartition: 3 });
    appendEach(
      log,
      Array.from({ length: 5 }, () => aClick()),
    );
    const c = collect();
    const source = new MemoryClickEventSource(log, { groupId: 'g', logger: quiet });
    await source.start(c.handler);
    await waitFor(() => c.offsets().length === 3, 'three messages');
    expect(c.offsets()).toEqual([2, 3, 4]);
    expect(source.lostToRetention).toBe(0);
    await source.close();
  });

  it('a group that fell behind retention resumes at the oldest retained message and counts the loss', async () => {
    const log = new InProcessClickLog({ partitions: 1, maxMessagesPerPartition: 3 });
    appendEach(log, [aClick()]);
    log.commit('g', 0, 1);
    appendEach(
      log,
      Array.from({ length: 6 }, () => aClick()),
    ); // offsets 1..6, 4..6 retained
    const warnings: BusLogEntry[] = [];
    const c = collect();
    const source = new MemoryClickEventSource(log, { groupId: 'g', logger: (e) => warnings.push(e) });
    await source.start(c.handler);
    await waitFor(() => c.offsets().length === 3, 'three messages');
    expect(c.offsets()).toEqual([4, 5, 6]);
    expect(source.lostToRetention).toBe(3);
    expect(warnings.some((w) => w.level === 'warn' && /retention/.test(w.message))).toBe(true);
    await source.close();
    expect(log.committedOffset('g', 0)).toBe(7);
  });

  it('fromBeginning: false starts a new group at the end', async () => {
    const log = new InProcessClickLog({ partitions: 1 });
    appendEach(log, [aClick(), aClick()]);
    const c = collect();
    const source = new MemoryClickEventSource(log, { groupId: 'g', fromBeginning: false, logger: quiet });
    await source.start(c.handler);
    appendEach(log, [aClick()]);
    await waitFor(() => c.offsets().length === 1, 'the new message');
    expect(c.offsets()).toEqual([2]);
    await source.close();
  });

  it('bounds batches by maxBatchSize, all of one partition', async () => {
    const log = new InProcessClickLog({ partitions: 2 });
    appendEach(
      log,
      Array.from({ length: 40 }, () => aClick()),
    );
    const c = collect();
    const source = new MemoryClickEventSource(log, { groupId: 'g', maxBatchSize: 7, logger: quiet });
    await source.start(c.handler);
    await waitFor(() => c.offsets().length === 40, 'all messages');
    for (const b of c.batches) {
      expect(b.messages.length).toBeLessThanOrEqual(7);
      expect(new Set(b.messages.map((m) => m.partition))).toEqual(new Set([b.partition]));
    }
    await source.close();
  });

  it('allows one active consumer per group, and a new one after close()', async () => {
    const log = new InProcessClickLog();
    const first = new MemoryClickEventSource(log, { groupId: 'g', logger: quiet });
    await first.start(async () => undefined);
    await expect(new MemoryClickEventSource(log, { groupId: 'g', logger: quiet }).start(async () => undefined)).rejects.toThrow(
      /already has an active consumer/,
    );
    await first.close();
    const again = new MemoryClickEventSource(log, { groupId: 'g', logger: quiet });
    await again.start(async () => undefined);
    await again.close();
    await expect(again.start(async () => undefined)).rejects.toThrow(/closed/);
  });

  it('close() while a batch waits for redelivery clears the timer and leaves the batch uncommitted', async () => {
    const timersBefore = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const log = new InProcessClickLog({ partitions: 1 });
    appendEach(log, [aClick(), aClick()]);
    let calls = 0;
    const source = new MemoryClickEventSource(log, { groupId: 'g', retryBackoff: { initialMs: 60_000 }, logger: quiet });
    await source.start(async () => {
      calls++;
      throw new Error('store down');
    });
    await waitFor(() => calls === 1, 'the failing call');
    await waitFor(() => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length > timersBefore, 'the backoff timer');
    const started = Date.now();
    await source.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(timersBefore);
    expect(source.handlerFailures).toBe(1);
    expect(log.committedOffset('g', 0)).toBeUndefined();
  });

  it('close() waits for a running handler, then commits its batch and stops', async () => {
    const log = new InProcessClickLog({ partitions: 1 });
    appendEach(log, [aClick()]);
    let release!: () => void;
    let entered = false;
    const source = new MemoryClickEventSource(log, { groupId: 'g', logger: quiet });
    await source.start(() => {
      entered = true;
      return new Promise<void>((resolve) => (release = resolve));
    });
    await waitFor(() => entered, 'the handler');
    let closed = false;
    const closing = source.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    release();
    await closing;
    expect(log.committedOffset('g', 0)).toBe(1);
  });

  it('names its source by the log incarnation: a new log (offsets from 0 again) is a new source', async () => {
    const first = new InProcessClickLog();
    const second = new InProcessClickLog();
    expect(first.id).not.toBe(second.id);
    const c = collect();
    const source = new MemoryClickEventSource(first, { groupId: 'g', logger: quiet });
    await source.start(c.handler);
    await new MemoryClickEventSink(first).send([aClick(), aClick()]);
    await waitFor(() => c.offsets().length === 2, 'two clicks');
    expect(new Set(c.batches.map((b) => b.source))).toEqual(new Set([`memory:${first.id}`]));
    await source.close();
  });

  it('with drainOnCloseMs, close() first delivers what is left in the log', async () => {
    const log = new InProcessClickLog({ partitions: 2 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const delivered: string[] = [];
    const source = new MemoryClickEventSource(log, { groupId: 'g', logger: quiet, maxBatchSize: 10, drainOnCloseMs: 5000 });
    await source.start(async (b) => {
      await gate;
      delivered.push(...b.messages.map((m) => eventIdOf(m.event)));
    });
    const events = Array.from({ length: 50 }, () => aClick());
    appendEach(log, events);
    const closing = source.close();
    release();
    await closing;
    expect(new Set(delivered)).toEqual(new Set(events.map(eventIdOf)));
  });

  it('an idle started source holds no timer, and closing it leaves none', async () => {
    const timersBefore = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const log = new InProcessClickLog();
    const source = new MemoryClickEventSource(log, { groupId: 'idle', logger: quiet });
    await source.start(async () => undefined);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(timersBefore);
    await source.close();
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(timersBefore);
  });

  it('a closed sink rejects sends', async () => {
    const sink = new MemoryClickEventSink(new InProcessClickLog());
    await sink.close();
    await expect(sink.send([aClick()])).rejects.toThrow(/closed/);
  });
});

describe('RetryBackoff', () => {
  it('doubles from 100 ms up to 5 s and starts over after reset()', () => {
    const b = new RetryBackoff();
    expect(Array.from({ length: 8 }, () => b.next())).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    b.reset();
    expect(b.next()).toBe(100);
  });
});
