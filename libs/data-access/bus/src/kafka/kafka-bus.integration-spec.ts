import { randomUUID } from 'crypto';
import { Admin, Kafka, logLevel, Partitioners, Producer } from 'kafkajs';
import { eventIdOf } from '@shortlink/clicks-domain';
import { requireEnv } from '@shortlink/testing';
import { decodeClickRecord, kafkaPartitionOf } from '../codec';
import { aClick, describeClickBusContract } from '../contract/click-bus.contract';
import { BusLogEntry, BusLogger } from '../logging';
import { ensureClickTopic } from './ensure-click-topic';
import { KafkaClickEventSink } from './kafka-click-event-sink';
import { KafkaClickEventSource } from './kafka-click-event-source';

// Runs against the Kafka broker of `npm run stack:up` (KAFKA_BROKERS in deploy/local/.run/stack.env).
// Each test gets its own topic and group ids, so runs can share a broker.
const logs: BusLogEntry[] = [];
const logger: BusLogger = (e) => {
  logs.push(e);
  if (process.env.BUS_TEST_LOG) console.warn(`[${e.level}] ${e.namespace}: ${e.message}`, e.extra ?? '');
};
const fastConsumer = { heartbeatIntervalMs: 1000, sessionTimeoutMs: 10_000, maxWaitTimeMs: 200 };

function admin(brokers: string): Admin {
  return new Kafka({ clientId: 'bus-test-admin', brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();
}

describeClickBusContract(
  'kafka',
  async () => {
    const brokers = requireEnv('KAFKA_BROKERS');
    const topic = `shortlink.clicks.test-${randomUUID()}`;
    await ensureClickTopic(brokers, topic, 6, { logger });
    const sink = new KafkaClickEventSink({ brokers, topic, clientId: 'bus-test', logger });
    let raw: Producer | null = null;
    return {
      sink,
      newSource: (groupId, options) => new KafkaClickEventSource({ brokers, topic, groupId, clientId: 'bus-test', logger, ...fastConsumer, ...options }),
      produceRaw: async (key, value) => {
        if (!raw) {
          raw = new Kafka({ clientId: 'bus-test-raw', brokers: brokers.split(','), logLevel: logLevel.NOTHING }).producer({
            createPartitioner: Partitioners.DefaultPartitioner,
          });
          await raw.connect();
        }
        await raw.send({ topic, messages: [{ key, value }] });
      },
      close: async () => {
        await sink.close();
        await (raw as Producer | null)?.disconnect();
        const a = admin(brokers);
        await a.connect();
        await a.deleteTopics({ topics: [topic] }).catch(() => undefined);
        await a.disconnect();
      },
    };
  },
  { deliveryTimeoutMs: 30_000 },
);

describe('kafka click topic', () => {
  const brokers = () => requireEnv('KAFKA_BROKERS');

  it('ensureClickTopic creates the topic once and is idempotent', async () => {
    const topic = `shortlink.clicks.test-ensure-${randomUUID()}`;
    const [first, second] = [await ensureClickTopic(brokers(), topic, 6, { logger }), await ensureClickTopic(brokers(), topic, 6, { logger })];
    expect(first).toEqual({ created: true, partitions: 6 });
    expect(second).toEqual({ created: false, partitions: 6 });
    const concurrent = await Promise.all([1, 2, 3].map(() => ensureClickTopic(brokers(), topic, 6, { logger })));
    expect(concurrent.every((r) => !r.created && r.partitions === 6)).toBe(true);
    const a = admin(brokers());
    await a.connect();
    await a.deleteTopics({ topics: [topic] });
    await a.disconnect();
  });

  it("produces one compressed binary record per partition on the partition Kafka's partitioner names, committing offsets after the handler", async () => {
    const topic = `shortlink.clicks.test-wire-${randomUUID()}`;
    await ensureClickTopic(brokers(), topic, 3, { logger });
    const sink = new KafkaClickEventSink({ brokers: brokers(), topic, logger });
    const e = aClick({ occurredAt: 1_700_000_000_123 });
    const sameLink = [e, aClick({ code: e.code }), aClick({ code: e.code })];
    await sink.send(sameLink);
    await sink.close();

    const kafka = new Kafka({ clientId: 'bus-test-wire', brokers: brokers().split(','), logLevel: logLevel.NOTHING });
    const groupId = `wire-${randomUUID()}`;
    const source = new KafkaClickEventSource({ brokers: brokers(), topic, groupId, logger, ...fastConsumer });
    let seen: { partition: number; offset: string } | null = null;
    await source.start(async (batch) => {
      seen = { partition: batch.partition, offset: batch.messages[0].offset };
    });
    const deadline = Date.now() + 30_000;
    while (!seen && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await source.close();
    expect(seen).not.toBeNull();
    const { partition, offset } = seen!;

    const a = kafka.admin();
    await a.connect();
    const [committed] = await a.fetchOffsets({ groupId, topics: [topic] });
    expect(committed.partitions.find((p) => p.partition === partition)?.offset).toBe(String(BigInt(offset) + 1n));

    const consumer = kafka.consumer({ groupId: `wire-raw-${randomUUID()}`, maxWaitTimeInMs: 200 });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    let message: { partition: number; events: unknown } | null = null;
    await consumer.run({ eachMessage: async ({ partition: p, message: m }) => void (message = { partition: p, events: decodeClickRecord(m.value) }) });
    while (!message && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await consumer.disconnect();
    await a.deleteTopics({ topics: [topic] });
    await a.disconnect();
    expect(message).toEqual({ partition: kafkaPartitionOf(`${e.domain}/${e.code}`, 3), events: sameLink });
    expect(partition).toBe(message!.partition);
  });

  it('with fromBeginning false and commitOffsets false (the live stream): reads only what came after it joined, and commits nothing', async () => {
    const topic = `shortlink.clicks.test-live-${randomUUID()}`;
    await ensureClickTopic(brokers(), topic, 2, { logger });
    const sink = new KafkaClickEventSink({ brokers: brokers(), topic, logger });
    const before = aClick();
    await sink.send([before]);
    const groupId = `live-${randomUUID()}`;
    const source = new KafkaClickEventSource({ brokers: brokers(), topic, groupId, logger, fromBeginning: false, commitOffsets: false, ...fastConsumer });
    const seen: string[] = [];
    await source.start(async (batch) => void seen.push(...batch.messages.map((m) => eventIdOf(m.event))));
    // Joined once a click sent now arrives: send until one does (the group's first join takes a few seconds).
    const deadline = Date.now() + 40_000;
    const after: string[] = [];
    while (seen.length === 0 && Date.now() < deadline) {
      const e = aClick();
      after.push(eventIdOf(e));
      await sink.send([e]);
      await new Promise((r) => setTimeout(r, 500));
    }
    const last = aClick();
    await sink.send([last]);
    while (!seen.includes(eventIdOf(last)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await source.close();
    await sink.close();
    expect(seen).toContain(eventIdOf(last));
    expect(seen).not.toContain(eventIdOf(before));
    expect(seen.every((id) => after.includes(id) || id === eventIdOf(last))).toBe(true);
    const a = admin(brokers());
    await a.connect();
    const [committed] = await a.fetchOffsets({ groupId, topics: [topic] });
    await a.deleteTopics({ topics: [topic] });
    await a.disconnect();
    expect(committed.partitions.map((p) => p.offset)).toEqual(['-1', '-1']);
  }, 60_000);

  it('can be started again after a start that failed (the live stream retries a start while the brokers are down)', async () => {
    const topic = `shortlink.clicks.test-restart-${randomUUID()}`;
    let ready = false;
    const topicReady = () => (ready ? ensureClickTopic(brokers(), topic, 1, { logger }) : Promise.reject(new Error('brokers down')));
    const source = new KafkaClickEventSource({ brokers: brokers(), topic, groupId: `restart-${randomUUID()}`, logger, topicReady, ...fastConsumer });
    const seen: string[] = [];
    const handler = async (batch: { messages: ReadonlyArray<{ event: Parameters<typeof eventIdOf>[0] }> }) =>
      void seen.push(...batch.messages.map((m) => eventIdOf(m.event)));
    await expect(source.start(handler)).rejects.toThrow('brokers down');
    ready = true;
    await source.start(handler);
    const sink = new KafkaClickEventSink({ brokers: brokers(), topic, logger });
    const e = aClick();
    await sink.send([e]);
    const deadline = Date.now() + 30_000;
    while (!seen.includes(eventIdOf(e)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await source.close();
    await sink.close();
    expect(seen).toContain(eventIdOf(e));
    await expect(source.start(handler)).rejects.toThrow('closed');
    const a = admin(brokers());
    await a.connect();
    await a.deleteTopics({ topics: [topic] });
    await a.disconnect();
  }, 60_000);

  it('heartbeats while a handler runs longer than the session timeout, so the batch is not redelivered', async () => {
    const topic = `shortlink.clicks.test-slow-${randomUUID()}`;
    await ensureClickTopic(brokers(), topic, 1, { logger });
    const sink = new KafkaClickEventSink({ brokers: brokers(), topic, logger });
    const events = [aClick(), aClick()];
    await sink.send(events);
    const source = new KafkaClickEventSource({
      brokers: brokers(),
      topic,
      groupId: `slow-${randomUUID()}`,
      logger,
      sessionTimeoutMs: 6000,
      heartbeatIntervalMs: 1000,
      maxWaitTimeMs: 200,
    });
    const calls: string[][] = [];
    await source.start(async (batch) => {
      calls.push(batch.messages.map((m) => eventIdOf(m.event)));
      if (calls.length === 1) await new Promise((r) => setTimeout(r, 9000)); // > session timeout
    });
    const more = aClick();
    const deadline = Date.now() + 40_000;
    while (calls.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await sink.send([more]);
    while (!calls.flat().includes(eventIdOf(more)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await source.close();
    await sink.close();
    const a = admin(brokers());
    await a.connect();
    await a.deleteTopics({ topics: [topic] });
    await a.disconnect();
    expect(calls.flat()).toEqual([...events, more].map(eventIdOf));
  }, 60_000);
});
