import { createServer, Server, Socket } from 'net';
import { aClick } from '../contract/click-bus.contract';
import { ClickColumns } from '@shortlink/clicks-domain';
import { byPartition, decodeClickRecord, encodeClickRecord, kafkaPartitionOf, readClickRecord } from '../codec';
import { BusLogEntry } from '../logging';
import { KafkaClickEventSink } from './kafka-click-event-sink';
import { logLevel } from 'kafkajs';
import { brokerList, kafkajsLogCreator } from './kafka-options';

// No broker needed: these pin down how the producer behaves when Kafka is not there.

async function listen(onSocket: (socket: Socket) => void): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, sockets };
}

/**
 * Runs `work` on Jest's fake clock (sockets stay real), moving the clock 100 ms at a time until it
 * settles: how long it took is then the clock's time, the same whatever the load of the machine.
 */
async function onFakeClock(work: () => Promise<unknown>, limitMs = 30_000): Promise<{ error: Error | null; waitedMs: number }> {
  const started = Date.now();
  let outcome: { error: Error | null; waitedMs: number } | undefined;
  void work().then(
    () => (outcome = { error: null, waitedMs: Date.now() - started }),
    (error: Error) => (outcome = { error, waitedMs: Date.now() - started }),
  );
  while (!outcome) {
    await new Promise((r) => setImmediate(r));
    if (outcome || Date.now() - started >= limitMs) break;
    await jest.advanceTimersByTimeAsync(100);
  }
  return outcome ?? { error: new Error(`not settled after ${limitMs} ms of the clock`), waitedMs: Infinity };
}

async function stop(s: { server: Server; sockets: Set<Socket> }): Promise<void> {
  for (const socket of s.sockets) socket.destroy();
  await new Promise<void>((resolve) => s.server.close(() => resolve()));
}

describe('KafkaClickEventSink without a reachable broker', () => {
  it('rejects a send quickly when nothing listens on the broker port, and again on the next send', async () => {
    const probe = await listen(() => undefined);
    await stop(probe); // the port is free now: connections are refused
    const logs: BusLogEntry[] = [];
    const sink = new KafkaClickEventSink({ brokers: `127.0.0.1:${probe.port}`, topic: 'unit.down', logger: (e) => logs.push(e) });
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      for (let i = 0; i < 2; i++) {
        const { error, waitedMs } = await onFakeClock(() => sink.send([aClick()]));
        expect(error).toBeInstanceOf(Error);
        expect(error!.message).not.toMatch(/timed out/); // refused, not the 10 s send deadline
        expect(waitedMs).toBeLessThan(5000);
      }
      await sink.close();
    } finally {
      jest.useRealTimers();
    }
    // The refused connection is reported (once per message: repeats are folded), and nothing below warn.
    expect(logs.some((e) => e.level === 'error' && /ECONNREFUSED/.test(e.message))).toBe(true);
    expect(logs.filter((e) => e.level !== 'error' && e.level !== 'warn')).toEqual([]);
  });

  it('rejects within sendTimeoutMs when the broker accepts connections but never answers', async () => {
    const blackhole = await listen(() => undefined);
    const sink = new KafkaClickEventSink({
      brokers: [`127.0.0.1:${blackhole.port}`],
      topic: 'unit.blackhole',
      sendTimeoutMs: 1500,
      requestTimeoutMs: 10_000,
      logLevel: 'nothing',
    });
    // The deadlines on the fake clock (the socket is real): the send fails when 1 500 ms of the clock
    // have passed, however slowly a loaded machine gets there.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const sent = await onFakeClock(() => sink.send([aClick()]));
      expect(sent.error?.message).toMatch(/timed out after 1500 ms/);
      expect(sent.waitedMs).toBeGreaterThanOrEqual(1500);
      expect(sent.waitedMs).toBeLessThanOrEqual(1600);
      const closed = await onFakeClock(() => sink.close());
      expect(closed.error).toBeNull();
      expect(closed.waitedMs).toBeLessThan(12_000);
    } finally {
      jest.useRealTimers();
      await stop(blackhole); // also when an expectation failed: its sockets would keep Jest from exiting
    }
  }, 20_000);

  it('rejects sends after close() and resolves an empty send without connecting', async () => {
    const sink = new KafkaClickEventSink({ brokers: '127.0.0.1:1', logLevel: 'nothing' });
    await expect(sink.send([])).resolves.toBeUndefined();
    await sink.close();
    await expect(sink.send([aClick()])).rejects.toThrow(/closed/);
  });
});

describe('click codec and options', () => {
  it('round-trips the events of a record: orphans, missing country, referer and variant, non-ASCII, large ids and times', () => {
    const events = [
      aClick(),
      aClick({ kind: 'orphan', tenantId: '', linkId: '', country: null, refererHost: null, variant: null }),
      aClick({ country: 'JP', refererHost: 'bücher.example', userAgent: 'Mozilla/5.0 😀', variant: 3, visitor: 2 ** 52 - 1, seq: 2 ** 40 }),
      aClick({ occurredAt: 1 }), // time goes backwards: the delta is negative
      aClick({ source: 'qr', country: 'US', region: 'Illinois', city: 'Springfield' }),
      aClick({ source: 'qr', country: 'FR', region: null, city: 'Saint-Étienne' }),
      aClick({ source: 'link', country: 'DE', region: 'Hesse', city: null }),
      aClick({ clickId: 'AbCdEfGhIjKlMnOpQrSt_-' }),
      aClick({ source: 'qr', city: 'Bonn', clickId: 'AbCdEfGhIjKlMnOpQrSt_0' }),
    ];
    const record = encodeClickRecord(events);
    expect(decodeClickRecord(record)).toEqual(events);
    // Interned strings: 100 clicks of one link with one agent cost a few bytes each.
    const burst = Array.from({ length: 100 }, () =>
      aClick({ code: 'same', linkId: '1', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0 Safari/537.36' }),
    );
    expect(encodeClickRecord(burst).length / 100).toBeLessThan(24);
  });

  it('reads a version-2 record (a producer not yet upgraded) as clicks by link without region or city', () => {
    // A click by link without region or city is encoded as version 2 did it, but for the version byte.
    const events = [aClick({ source: 'link', region: null, city: null }), aClick({ kind: 'orphan', source: 'link', region: null, city: null, country: null })];
    const v2 = Buffer.from(encodeClickRecord(events));
    expect(v2[1]).toBe(4);
    v2[1] = 2;
    expect(decodeClickRecord(v2)).toEqual(events);
    v2[1] = 3;
    expect(decodeClickRecord(v2)).toEqual(events);
    // The source is a flag: a scan costs no byte more than a click.
    const click = aClick({ source: 'link', region: null, city: null });
    expect(encodeClickRecord([{ ...click, source: 'qr' }]).length).toBe(encodeClickRecord([click]).length);
  });

  it('refuses anything that is not a record of a version it knows, without throwing', () => {
    const good = encodeClickRecord([aClick()]);
    const newer = Buffer.from(good);
    newer[1] = 5;
    expect(decodeClickRecord(newer)).toBe('unknown-version');
    for (const value of [
      null,
      undefined,
      '',
      'not json',
      JSON.stringify(aClick()),
      Buffer.from([0xff, 0xfe]),
      good.subarray(0, good.length - 1),
      Buffer.concat([good, Buffer.from([0])]),
    ]) {
      expect(decodeClickRecord(value as never)).toBe('malformed');
    }
  });

  it('reads records into the columns of one batch: strings once across records, a malformed record taken back whole, the same clicks as the objects', () => {
    const first = [aClick({ code: 'a1', refererHost: 'news.example', variant: 2 }), aClick({ code: 'a1', kind: 'orphan', tenantId: '', country: null })];
    const second = [aClick({ code: 'a1', source: 'qr', country: 'US', region: 'Illinois', city: 'Springfield' }), aClick({ code: 'b2', occurredAt: 1 })];
    const columns = new ClickColumns();
    expect(readClickRecord(encodeClickRecord(first), columns, '7', 1000)).toBe(2);
    const stringsAfterFirst = columns.strings.length;
    // Cut short in its last click: begun, its clicks written, found malformed, taken back (the strings it brought may stay).
    const cut = encodeClickRecord(second);
    expect(readClickRecord(cut.subarray(0, cut.length - 1), columns, '8', 2000)).toBe('malformed');
    expect([columns.length, columns.recordCount]).toEqual([2, 1]);
    expect(readClickRecord('not a record', columns, '8', 2000)).toBe('malformed');
    expect(readClickRecord(encodeClickRecord(second), columns, '9', 3000)).toBe(2);
    expect([columns.length, columns.recordCount, columns.recordOffsets]).toEqual([4, 2, ['7', '9']]);
    expect(Array.from({ length: 4 }, (_, i) => columns.eventAt(i))).toEqual([...first, ...second]);
    expect(columns.delivered(3).map((m) => [m.partition, m.offset, m.recordedAt])).toEqual([
      [3, '7', 1000],
      [3, '7', 1000],
      [3, '9', 3000],
      [3, '9', 3000],
    ]);
    // The producer, tenant, domain and agent of the second record are the first one's ids.
    expect(columns.producer[2]).toBe(columns.producer[0]);
    expect(columns.domain[3]).toBe(columns.domain[0]);
    expect(columns.strings.length).toBeLessThan(stringsAfterFirst + 8);
    expect(columns.strings.filter((s) => s === 'a1')).toHaveLength(1);
  });

  it('refuses a record that claims more clicks or strings than its bytes can hold, before making room for them', () => {
    const good = encodeClickRecord([aClick()]);
    // byte 2: the string count (one byte while < 128); a count of 10^6 in a few hundred bytes is a lie.
    const lying = Buffer.concat([good.subarray(0, 2), Buffer.from([0xc0, 0x84, 0x3d]), good.subarray(3)]);
    const columns = new ClickColumns();
    expect(readClickRecord(lying, columns, '0', 0)).toBe('malformed');
    expect(columns.record.length).toBeLessThan(100_000);
    expect(columns.length).toBe(0);
  });

  it('groups a batch by partition in the order of its clicks, links interleaved or in bursts, as the partition of each link says', () => {
    const partitionOf = (key: string) => kafkaPartitionOf(key, 3);
    const events = ['a', 'a', 'b', 'c', 'a', 'd', 'b', 'b', 'e', 'a'].map((code, seq) => aClick({ code, seq, domain: seq === 9 ? 'other.example' : 'sho.rt' }));
    const groups = byPartition(events, partitionOf);
    const expected = new Map<number, number[]>();
    for (const e of events) {
      const p = partitionOf(`${e.domain}/${e.code}`);
      expected.set(p, [...(expected.get(p) ?? []), e.seq]);
    }
    expect(new Map([...groups].map(([p, g]) => [p, g.map((e) => e.seq)]))).toEqual(expected);
    // Each record decodes to its clicks in order, strings interned once whatever field repeats them.
    for (const group of groups.values()) expect(decodeClickRecord(encodeClickRecord(group))).toEqual(group);
  });

  it("partitions like Kafka's default partitioner (murmur2), so other clients agree", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const murmur2 = require('kafkajs/src/producer/partitioners/default/murmur2') as (key: string) => number;
    for (const key of ['sho.rt/abc1234', 'a', 'ab', 'abc', 'dömain.example/x', '', 'go.example/zzzzzzz']) {
      for (const n of [1, 3, 6, 7]) expect(kafkaPartitionOf(key, n)).toBe((murmur2(key) & 0x7fffffff) % n);
    }
  });

  it('accepts brokers as a list or a comma-separated string', () => {
    expect(brokerList(' a:1, b:2 ,')).toEqual(['a:1', 'b:2']);
    expect(brokerList(['a:1'])).toEqual(['a:1']);
    expect(() => brokerList('')).toThrow(/no Kafka broker/);
  });
});

describe('kafkajs log bridge', () => {
  it('maps levels, drops repeats within the window and counts them on the next one', () => {
    let t = 0;
    const out: BusLogEntry[] = [];
    const log = kafkajsLogCreator(
      (e) => out.push(e),
      () => t,
    )(logLevel.INFO);
    const entry = (level: logLevel, namespace: string, message: string) => ({
      namespace,
      level,
      label: '',
      log: { timestamp: '', logger: 'kafkajs', message },
    });
    log(entry(logLevel.ERROR, 'Connection', 'Connection error: connect ECONNREFUSED'));
    t = 1000;
    log(entry(logLevel.ERROR, 'Connection', 'Connection error: connect ECONNREFUSED'));
    log(entry(logLevel.ERROR, 'Connection', 'Connection error: connect ECONNREFUSED'));
    log(entry(logLevel.WARN, 'Consumer', 'The group is rebalancing'));
    log(entry(logLevel.ERROR, 'Connection', 'Response Fetch(key: 1, version: 11)'));
    log(entry(logLevel.WARN, 'Producer', 'Limiting retries for the idempotent producer may invalidate EoS guarantees'));
    t = 11_000;
    log(entry(logLevel.ERROR, 'Connection', 'Connection error: connect ECONNREFUSED'));
    expect(out.map((e) => [e.level, e.namespace, e.message, e.extra?.repeated])).toEqual([
      ['error', 'kafkajs.Connection', 'Connection error: connect ECONNREFUSED', undefined],
      ['warn', 'kafkajs.Consumer', 'The group is rebalancing', undefined],
      ['info', 'kafkajs.Connection', 'Response Fetch(key: 1, version: 11)', undefined],
      ['error', 'kafkajs.Connection', 'Connection error: connect ECONNREFUSED', 2],
    ]);
  });
});
