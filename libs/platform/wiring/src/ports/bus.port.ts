import { randomUUID } from 'crypto';
import { hostname } from 'os';
import { CLICK_EVENT_SINK, CLICK_EVENT_SOURCE, ClickEventSink, ClickEventSource, LIVE_CLICK_SOURCE, MERCURE_CLICK_SOURCE } from '@shortlink/clicks-domain';
import { ensureClickTopic, InProcessClickLog, KafkaClickEventSink, KafkaClickEventSource, MemoryClickEventSink, MemoryClickEventSource } from '@shortlink/bus';
import { WEBHOOK_CLICK_SOURCE } from '@shortlink/webhooks-domain';
import { portSpec } from '../port';

/** The two ends of the click topic; building them opens no connection. */
export interface ClickBus {
  readonly sink: ClickEventSink;
  readonly source: ClickEventSource;
  /** The same topic for the webhook deliverer's own consumer group (docs/design.md, "Webhooks"). */
  readonly webhookSource: ClickEventSource;
  /** The same topic for this instance's live click stream: a group of its own, from the end, committing nothing. */
  readonly liveSource: ClickEventSource;
  /** The same for the Mercure hub of Shlink's updates (the generation app): another group of its own. */
  readonly mercureSource: ClickEventSource;
  /** Settles when the background topic check that opening started is over (never rejects). */
  readonly settled: Promise<unknown>;
}

/** kafka: a topic on the brokers; memory: one in-process log shared by the apps of this process. */
export const busPort = portSpec<ClickBus>({
  name: 'click-bus',
  open: (config) => {
    const bus = config.bus;
    if (bus.driver === 'kafka') {
      let topicReady: Promise<unknown> | null = null;
      const ensureTopic = () =>
        (topicReady ??= ensureClickTopic(bus.brokers, bus.topic, bus.partitions).catch((error) => ((topicReady = null), Promise.reject(error))));
      // The producer does not wait for the topic: a redirect app boots (and buffers) with Kafka down.
      const settled = ensureTopic().catch(() => undefined);
      const liveGroup = `${bus.consumerGroup}.live.${hostname()}.${process.pid}.${randomUUID().slice(0, 8)}`;
      const ownGroup = (kind: string) => `${bus.consumerGroup}.${kind}.${hostname()}.${process.pid}.${randomUUID().slice(0, 8)}`;
      const liveLike = (groupId: string, clientId: string) =>
        new KafkaClickEventSource({
          brokers: bus.brokers,
          topic: bus.topic,
          groupId,
          clientId,
          fromBeginning: false,
          commitOffsets: false,
          // A group of one member: a short session frees nothing anyone waits for, but keeps a dead instance's group brief.
          sessionTimeoutMs: Math.min(bus.sessionTimeoutMs, 10_000),
          heartbeatIntervalMs: 1000,
          maxWaitTimeMs: 250,
          topicReady: ensureTopic,
        });
      return {
        settled,
        sink: new KafkaClickEventSink({
          brokers: bus.brokers,
          topic: bus.topic,
          clientId: 'shortlink-redirect',
          compression: bus.compression,
        }),
        source: new KafkaClickEventSource({
          brokers: bus.brokers,
          topic: bus.topic,
          groupId: bus.consumerGroup,
          clientId: 'shortlink-analytics',
          sessionTimeoutMs: bus.sessionTimeoutMs,
          topicReady: ensureTopic,
          // Partitions in parallel: one's decoding and folding runs while another's insert is in the server (docs/design.md, "Analytics").
          partitionsConsumedConcurrently: config.analytics.consumerConcurrency,
        }),
        webhookSource: new KafkaClickEventSource({
          brokers: bus.brokers,
          topic: bus.topic,
          // A group of its own per topic: kafkajs rebalances forever a group whose members subscribe to different topics.
          groupId: `${config.webhooks.consumerGroup}.clicks`,
          clientId: 'shortlink-webhooks',
          sessionTimeoutMs: bus.sessionTimeoutMs,
          topicReady: ensureTopic,
        }),
        liveSource: liveLike(liveGroup, 'shortlink-live'),
        mercureSource: liveLike(ownGroup('mercure'), 'shortlink-mercure'),
      };
    }
    // Retention is what a lagging consumer can still catch up on: 4 MiB of bytes per partition
    // (about 12 000 clicks), kept off the JS heap.
    const log = new InProcessClickLog({ partitions: bus.partitions, maxBytesPerPartition: 4 * 1024 * 1024 });
    return {
      settled: Promise.resolve(),
      sink: new MemoryClickEventSink(log),
      // The log dies with the process: at shutdown the consumer first takes what the redirect flushed.
      source: new MemoryClickEventSource(log, {
        groupId: bus.consumerGroup,
        drainOnCloseMs: 10_000,
        partitionsConsumedConcurrently: config.analytics.consumerConcurrency,
      }),
      webhookSource: new MemoryClickEventSource(log, { groupId: `${config.webhooks.consumerGroup}.clicks`, drainOnCloseMs: 2000 }),
      liveSource: new MemoryClickEventSource(log, { groupId: `${bus.consumerGroup}.live.${randomUUID().slice(0, 8)}`, fromBeginning: false }),
      mercureSource: new MemoryClickEventSource(log, { groupId: `${bus.consumerGroup}.mercure.${randomUUID().slice(0, 8)}`, fromBeginning: false }),
    };
  },
  provides: [
    [CLICK_EVENT_SINK, (bus) => bus.sink],
    [CLICK_EVENT_SOURCE, (bus) => bus.source],
    [WEBHOOK_CLICK_SOURCE, (bus) => bus.webhookSource],
    [LIVE_CLICK_SOURCE, (bus) => bus.liveSource],
    [MERCURE_CLICK_SOURCE, (bus) => bus.mercureSource],
  ],
  close: async (bus) => {
    await bus.settled; // the admin client of the topic check is gone only then (at most its ~8 s of retries)
    await bus.source.close();
    await bus.webhookSource.close();
    await bus.liveSource.close();
    await bus.mercureSource.close();
    await bus.sink.close();
  },
});
