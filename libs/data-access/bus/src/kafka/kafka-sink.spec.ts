import { createServer, Server, Socket } from 'net';
import { aClick } from '../contract/click-bus.contract';
import { decodeClickEvent, encodeClickEvent } from '../codec';
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
    for (let i = 0; i < 2; i++) {
      const started = Date.now();
      await expect(sink.send([aClick()])).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(5000);
    }
    await sink.close();
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
    const started = Date.now();
    await expect(sink.send([aClick()])).rejects.toThrow(/timed out after 1500 ms/);
    expect(Date.now() - started).toBeLessThan(2500);
    const closing = Date.now();
    await sink.close();
    expect(Date.now() - closing).toBeLessThan(12_000);
    await stop(blackhole);
  }, 20_000);

  it('rejects sends after close() and resolves an empty send without connecting', async () => {
    const sink = new KafkaClickEventSink({ brokers: '127.0.0.1:1', logLevel: 'nothing' });
    await expect(sink.send([])).resolves.toBeUndefined();
    await sink.close();
    await expect(sink.send([aClick()])).rejects.toThrow(/closed/);
  });
});

describe('click codec and options', () => {
  it('round-trips a click event through its JSON value', () => {
    const e = aClick({ referer: null });
    expect(decodeClickEvent(Buffer.from(encodeClickEvent(e)))).toEqual(e);
    expect(decodeClickEvent(encodeClickEvent({ ...e, referer: 'https://x.example/' }))).toEqual({ ...e, referer: 'https://x.example/' });
  });

  it('returns null for anything that is not a JSON click event', () => {
    for (const value of [null, undefined, '', 'not json', '42', 'null', '[]', JSON.stringify({ ...aClick(), occurredAt: 'x' }), Buffer.from([0xff, 0xfe])]) {
      expect(decodeClickEvent(value as never)).toBeNull();
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
    const log = kafkajsLogCreator((e) => out.push(e), () => t)(logLevel.INFO);
    const entry = (level: logLevel, namespace: string, message: string) => ({ namespace, level, label: '', log: { timestamp: '', logger: 'kafkajs', message } });
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
