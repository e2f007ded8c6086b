import { AppConfig } from '@shortlink/config';
import { ClickEventSink, ClickEventSource } from '@shortlink/clicks-domain';
import { ensureClickTopic, InProcessClickLog, KafkaClickEventSink, KafkaClickEventSource, MemoryClickEventSink, MemoryClickEventSource } from '@shortlink/bus';

export interface ClickBus {
  sink(): Promise<ClickEventSink>;
  source(): Promise<ClickEventSource>;
  close(): Promise<void>;
}

/** kafka: a topic on the brokers; memory: one in-process log shared by the apps of this process. */
export function createClickBus(config: AppConfig): ClickBus {
  const bus = config.bus;
  const opened: Array<{ close(): Promise<void> }> = [];
  const track = <T extends { close(): Promise<void> }>(x: T) => (opened.push(x), x);
  let sink: Promise<ClickEventSink> | null = null;
  const close = async () => {
    for (const x of opened.splice(0).reverse()) await x.close().catch(() => undefined);
  };
  if (bus.driver === 'kafka') {
    let topicReady: Promise<unknown> | null = null;
    const ensureTopic = () => (topicReady ??= ensureClickTopic(bus.brokers, bus.topic, bus.partitions));
    return {
      // The producer must not wait for the topic: a redirect app boots (and buffers) with Kafka down.
      sink: () => (sink ??= Promise.resolve(track(new KafkaClickEventSink({ brokers: bus.brokers, topic: bus.topic, clientId: 'shortlink-redirect' }))).finally(() => void ensureTopic().catch(() => (topicReady = null)))),
      source: async () => {
        await ensureTopic();
        return track(new KafkaClickEventSource({ brokers: bus.brokers, topic: bus.topic, groupId: bus.consumerGroup, clientId: 'shortlink-analytics' }));
      },
      close,
    };
  }
  // Retention is what a lagging consumer can still catch up on: 4 MiB of bytes per partition
  // (about 12 000 clicks), kept off the JS heap.
  const log = new InProcessClickLog({ partitions: bus.partitions, maxBytesPerPartition: 4 * 1024 * 1024 });
  return {
    sink: () => (sink ??= Promise.resolve(track(new MemoryClickEventSink(log)))),
    // The log dies with the process: at shutdown the consumer first takes what the redirect flushed.
    source: async () => track(new MemoryClickEventSource(log, { groupId: bus.consumerGroup, drainOnCloseMs: 10_000 })),
    close,
  };
}
