import { randomUUID } from 'crypto';
import { ClickBatch, ClickEvent, ClickEventSink, ClickEventSource, DeliveredClick, eventIdOf } from '@shortlink/clicks-domain';

export type ContractSource = ClickEventSource & {
  /** Messages the source skipped because they were not JSON ClickEvents. */
  readonly skippedMessages: number;
};

export interface ClickBusFixture {
  /** One sink on a fresh, empty topic (or log). */
  readonly sink: ClickEventSink;
  /** A new, not yet started member of the consumer group `groupId` on the same topic (handling up to `partitionsConsumedConcurrently` partitions at once; default 1). */
  newSource(groupId: string, options?: { readonly partitionsConsumedConcurrently?: number }): ContractSource;
  /** Appends a raw message value as a foreign producer could (bypasses the sink's encoding). */
  produceRaw(key: string | null, value: string): Promise<void>;
  close(): Promise<void>;
}

export interface ClickBusContractOptions {
  /** Longest wait for an expected delivery (Kafka needs a group join first). Default 10 s. */
  readonly deliveryTimeoutMs?: number;
}

let seq = 0;
const runId = randomUUID().slice(0, 8);

export function aClick(overrides: Partial<ClickEvent> = {}): ClickEvent {
  seq++;
  return {
    producer: `p-${runId}`,
    seq,
    kind: 'click',
    occurredAt: Date.now(),
    linkId: String(1_000_000 + seq),
    tenantId: 't-' + runId,
    domain: 'sho.rt',
    code: `c${runId}${seq}`,
    visitor: 1000 + (seq % 7),
    country: seq % 3 === 0 ? null : 'DE',
    region: seq % 3 === 0 ? null : 'Berlin',
    city: seq % 6 === 1 ? 'Berlin' : null,
    source: seq % 4 === 0 ? 'qr' : 'link',
    userAgent: 'Mozilla/5.0 (contract)',
    refererHost: seq % 2 === 0 ? null : 'example.com',
    variant: seq % 5 === 0 ? 1 : null,
    ...overrides,
  };
}

/** `count` clicks on each of `links` distinct links, interleaved link by link. */
function clicksOnLinks(links: number, count: number): ClickEvent[] {
  const codes = Array.from({ length: links }, () => aClick().code);
  const out: ClickEvent[] = [];
  for (let i = 0; i < count; i++) for (const code of codes) out.push(aClick({ code }));
  return out;
}

const linkKey = (e: ClickEvent) => `${e.domain}/${e.code}`;
const idOf = eventIdOf;

/** Records every handler call; `fail` decides per call whether the handler throws. */
class Recorder {
  readonly calls: { batch: ClickBatch; ok: boolean }[] = [];
  constructor(private readonly fail: (batch: ClickBatch, callNo: number) => boolean = () => false) {}

  readonly handler = async (batch: ClickBatch): Promise<void> => {
    const ok = !this.fail(batch, this.calls.length);
    this.calls.push({ batch: { source: batch.source, partition: batch.partition, messages: [...batch.messages] }, ok });
    if (!ok) throw new Error('handler failure on purpose');
  };

  /** Messages of handler calls that resolved, in delivery order. */
  get delivered(): DeliveredClick[] {
    return this.calls.filter((c) => c.ok).flatMap((c) => c.batch.messages);
  }

  deliveredIds(): Set<string> {
    return new Set(this.delivered.map((m) => idOf(m.event)));
  }

  hasAll(events: readonly ClickEvent[]): boolean {
    const ids = this.deliveredIds();
    return events.every((e) => ids.has(idOf(e)));
  }
}

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One behaviour, every backend: the in-process log in unit runs, Kafka in integration runs. */
export function describeClickBusContract(backend: string, open: () => Promise<ClickBusFixture>, options: ClickBusContractOptions = {}) {
  const timeout = options.deliveryTimeoutMs ?? 10_000;

  describe(`click bus contract: ${backend}`, () => {
    let f: ClickBusFixture;
    let sources: ContractSource[] = [];
    const group = (name: string) => `contract-${name}-${randomUUID()}`;
    const started = async (groupId: string, recorder: Recorder) => {
      const source = f.newSource(groupId);
      sources.push(source);
      await source.start(recorder.handler);
      return source;
    };

    beforeEach(async () => {
      f = await open();
      sources = [];
    });
    afterEach(async () => {
      for (const source of sources) await source.close();
      await f?.close();
    });

    it('delivers every sent event once to a group, with its partition, offsets not decreasing within a partition (a record carries several events)', async () => {
      const events = clicksOnLinks(12, 5);
      const sentFrom = Date.now();
      await f.sink.send(events.slice(0, 30)); // before the group exists: read from the beginning
      const recorder = new Recorder();
      await started(group('once'), recorder);
      await f.sink.send(events.slice(30, 45));
      await f.sink.send(events.slice(45));
      await waitFor(() => recorder.hasAll(events), timeout, 'all events');
      const receivedBy = Date.now();

      const ids = recorder.delivered.map((m) => idOf(m.event));
      expect(ids.length).toBe(events.length);
      expect(new Set(ids).size).toBe(events.length);
      const byId = new Map(events.map((e) => [idOf(e), e]));
      const offsetsOf = new Map<number, bigint[]>();
      for (const { batch } of recorder.calls) {
        expect(batch.messages.length).toBeGreaterThan(0);
        for (const m of batch.messages) {
          expect(m.partition).toBe(batch.partition);
          expect(m.offset).toMatch(/^\d+$/);
          // The record's time in the log: when it was sent, not when it was read.
          expect(m.recordedAt >= sentFrom - 1000 && m.recordedAt <= receivedBy).toBe(true);
          expect(m.event).toEqual(byId.get(idOf(m.event)));
          (offsetsOf.get(m.partition) ?? offsetsOf.set(m.partition, []).get(m.partition)!).push(BigInt(m.offset));
        }
      }
      // Each partition in offset order: every delivered message counted, each partition's offsets ascending.
      expect([...offsetsOf.values()].reduce((n, o) => n + o.length, 0)).toBe(events.length);
      for (const offsets of offsetsOf.values()) expect(offsets).toEqual([...offsets].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    });

    it('keeps the clicks of one link on one partition, in the order they were sent', async () => {
      const events = clicksOnLinks(20, 4);
      for (let i = 0; i < events.length; i += 10) await f.sink.send(events.slice(i, i + 10));
      const recorder = new Recorder();
      await started(group('keys'), recorder);
      await waitFor(() => recorder.hasAll(events), timeout, 'all events');

      const partitionsOfLink = new Map<string, Set<number>>();
      const orderOfLink = new Map<string, string[]>();
      for (const m of recorder.delivered) {
        const key = linkKey(m.event);
        (partitionsOfLink.get(key) ?? partitionsOfLink.set(key, new Set()).get(key)!).add(m.partition);
        (orderOfLink.get(key) ?? orderOfLink.set(key, []).get(key)!).push(idOf(m.event));
      }
      expect(partitionsOfLink.size).toBe(20);
      for (const partitions of partitionsOfLink.values()) expect(partitions.size).toBe(1);
      // 20 keys on several partitions: the key is actually hashed, not everything on one partition.
      expect(new Set([...partitionsOfLink.values()].map((s) => [...s][0])).size).toBeGreaterThan(1);
      for (const [key, order] of orderOfLink) {
        expect(order).toEqual(events.filter((e) => linkKey(e) === key).map((e) => idOf(e)));
      }
    });

    it('redelivers the messages of a batch whose handler threw, before anything later of that partition', async () => {
      const code = aClick().code;
      const first = Array.from({ length: 5 }, () => aClick({ code }));
      const later = Array.from({ length: 3 }, () => aClick({ code }));
      await f.sink.send(first);
      const recorder = new Recorder((_batch, callNo) => callNo === 0);
      await started(group('redeliver'), recorder);
      await waitFor(() => recorder.calls.length > 0, timeout, 'the first (failing) call');
      await f.sink.send(later);
      await waitFor(() => recorder.hasAll([...first, ...later]), timeout, 'all events after the redelivery');

      const failed = recorder.calls[0];
      expect(failed.ok).toBe(false);
      const samePartition = recorder.calls.slice(1).filter((c) => c.batch.partition === failed.batch.partition);
      const retry = samePartition[0];
      // The next call of that partition starts where the failed one did and carries all its messages.
      expect(retry.batch.messages.slice(0, failed.batch.messages.length)).toEqual(failed.batch.messages);
      // Everything arrived exactly once among the successful calls, in send order.
      expect(recorder.delivered.map((m) => idOf(m.event))).toEqual([...first, ...later].map((e) => idOf(e)));
    });

    it('after a restart of the group, delivers again only what was not committed', async () => {
      const groupId = group('restart');
      const committed = clicksOnLinks(6, 3);
      const uncommitted = clicksOnLinks(6, 2);
      const failIds = new Set(uncommitted.map((e) => idOf(e)));
      const first = new Recorder((batch) => batch.messages.some((m) => failIds.has(idOf(m.event))));
      const source1 = await started(groupId, first);
      await f.sink.send(committed);
      await waitFor(() => first.hasAll(committed), timeout, 'the events to commit');
      await f.sink.send(uncommitted);
      await waitFor(() => first.calls.some((c) => !c.ok), timeout, 'a failing call');
      await source1.close();
      const seenOffsetsBefore = new Map(first.calls.flatMap((c) => c.batch.messages).map((m) => [idOf(m.event), `${m.partition}@${m.offset}@${m.recordedAt}`]));

      const second = new Recorder();
      await started(groupId, second);
      const marker = aClick();
      await f.sink.send([marker]);
      await waitFor(() => second.hasAll([...uncommitted, marker]), timeout, 'the uncommitted events again');

      const ids = second.delivered.map((m) => idOf(m.event));
      const committedIds = new Set(committed.map((e) => idOf(e)));
      expect(ids.filter((id) => committedIds.has(id))).toEqual([]);
      expect(new Set(ids)).toEqual(new Set([...uncommitted, marker].map((e) => idOf(e))));
      // Redelivered messages keep their partition, offset and record time: those of the first member's failing calls at least come again.
      const failedIds = new Set(first.calls.filter((c) => !c.ok).flatMap((c) => c.batch.messages.map((m) => idOf(m.event))));
      const again = second.delivered.filter((m) => seenOffsetsBefore.has(idOf(m.event)));
      expect(failedIds.size).toBeGreaterThan(0);
      expect(again.map((m) => idOf(m.event))).toEqual(expect.arrayContaining([...failedIds]));
      expect(again.map((m) => `${m.partition}@${m.offset}@${m.recordedAt}`)).toEqual(again.map((m) => seenOffsetsBefore.get(idOf(m.event))));
    });

    it('delivers everything to each of two groups', async () => {
      const events = clicksOnLinks(10, 3);
      const a = new Recorder();
      const b = new Recorder();
      await started(group('a'), a);
      await f.sink.send(events.slice(0, 15));
      await started(group('b'), b);
      await f.sink.send(events.slice(15));
      await waitFor(() => a.hasAll(events) && b.hasAll(events), timeout, 'all events in both groups');
      expect(a.delivered.length).toBe(events.length);
      expect(b.delivered.length).toBe(events.length);
      const placement = (r: Recorder) => new Map(r.delivered.map((m) => [idOf(m.event), `${m.partition}@${m.offset}`]));
      expect(placement(b)).toEqual(placement(a));
    });

    it('skips malformed messages without stopping delivery', async () => {
      const code = aClick().code;
      const before = aClick({ code });
      const after = aClick({ code });
      const key = `sho.rt/${code}`;
      await f.sink.send([before]);
      await f.produceRaw(key, 'not json {');
      await f.produceRaw(key, JSON.stringify({ hello: 'world' }));
      await f.produceRaw(key, JSON.stringify({ ...aClick({ code }), occurredAt: 'yesterday' }));
      await f.sink.send([after]);
      await f.produceRaw(null, ''); // wherever a key-less message lands, it is after `after`
      const recorder = new Recorder();
      const source = await started(group('malformed'), recorder);
      await waitFor(() => recorder.hasAll([before, after]), timeout, 'the valid events around the malformed ones');
      await waitFor(() => source.skippedMessages >= 4, timeout, 'four skipped messages');
      expect(recorder.delivered.map((m) => idOf(m.event))).toEqual([idOf(before), idOf(after)]);
      const [b, a] = recorder.delivered;
      expect(b.partition).toBe(a.partition);
      expect(BigInt(a.offset) - BigInt(b.offset)).toBe(4n);

      const more = aClick({ code });
      await f.sink.send([more]);
      await waitFor(() => recorder.hasAll([more]), timeout, 'an event after the malformed ones');
      expect(source.skippedMessages).toBe(4);
    });

    it('carries several events in one record and reports the group lag per partition in records', async () => {
      const code = aClick().code;
      const events = Array.from({ length: 25 }, (_, i) => aClick({ code, kind: i % 5 === 0 ? 'orphan' : 'click', tenantId: i % 5 === 0 ? '' : 't-x' }));
      const groupId = group('lag');
      const idle = f.newSource(groupId);
      sources.push(idle);
      const before = [...(await idle.lag()).values()].reduce((a, b) => a + b, 0);
      await f.sink.send(events);
      const sent = [...(await idle.lag()).values()].reduce((a, b) => a + b, 0);
      expect(sent - before).toBe(1); // one link: one record
      await idle.close();
      const recorder = new Recorder();
      const source = await started(groupId, recorder);
      await waitFor(() => recorder.hasAll(events), timeout, 'the record');
      expect(recorder.delivered.map((m) => m.event)).toEqual(events);
      expect(new Set(recorder.delivered.map((m) => m.offset)).size).toBe(1);
      const deadline = Date.now() + timeout;
      let lag = -1;
      while (Date.now() < deadline && lag !== 0) {
        lag = [...(await source.lag()).values()].reduce((a, b) => a + b, 0);
        if (lag !== 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(lag).toBe(0);
    });

    it('with partitions consumed at once: a handler held on one partition holds none of the others fetched with it, and batches of one partition never overlap', async () => {
      const events = clicksOnLinks(24, 3);
      // One send before the start: one record per partition, so the first batch of a partition has all
      // of its clicks, and Kafka's first fetch has every partition (kafkajs fetches again only once
      // every batch of a fetch is done).
      await f.sink.send(events);
      const running = new Set<number>();
      const overlaps: number[] = [];
      let held: ClickBatch | null = null;
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const recorder = new Recorder();
      const source = f.newSource(group('parallel'), { partitionsConsumedConcurrently: 3 });
      sources.push(source);
      await source.start(async (batch) => {
        if (running.has(batch.partition)) overlaps.push(batch.partition);
        running.add(batch.partition);
        try {
          held ??= batch;
          if (batch.partition === held.partition) await gate;
          await recorder.handler(batch);
        } finally {
          running.delete(batch.partition);
        }
      });
      try {
        await waitFor(() => held !== null, timeout, 'a first batch');
        const heldLinks = new Set(held!.messages.map((m) => linkKey(m.event)));
        const elsewhere = events.filter((e) => !heldLinks.has(linkKey(e)));
        expect(elsewhere.length).toBeGreaterThan(0);
        // Everything of the other partitions arrives while the first one's handler is held.
        await waitFor(() => recorder.hasAll(elsewhere), timeout, 'the other partitions while one is held');
        expect(recorder.delivered.filter((m) => heldLinks.has(linkKey(m.event)))).toEqual([]);
      } finally {
        release();
      }
      await waitFor(() => recorder.hasAll(events), timeout, 'all events after the release');
      expect(overlaps).toEqual([]);
      expect(recorder.delivered).toHaveLength(events.length);
      // Each link's clicks in the order they were sent.
      for (const key of new Set(events.map(linkKey))) {
        expect(recorder.delivered.filter((m) => linkKey(m.event) === key).map((m) => idOf(m.event))).toEqual(
          events.filter((e) => linkKey(e) === key).map(idOf),
        );
      }
    });

    it('delivers nothing to a source after close() resolved', async () => {
      const closedOne = new Recorder();
      const source = await started(group('closed'), closedOne);
      const early = aClick();
      await f.sink.send([early]);
      await waitFor(() => closedOne.hasAll([early]), timeout, 'the first event');
      await source.close();
      const callsAtClose = closedOne.calls.length;

      const late = aClick();
      await f.sink.send([late]);
      const witness = new Recorder();
      await started(group('witness'), witness);
      await waitFor(() => witness.hasAll([early, late]), timeout, 'the witness group to see both events');
      expect(closedOne.calls.length).toBe(callsAtClose);
    });
  });
}
