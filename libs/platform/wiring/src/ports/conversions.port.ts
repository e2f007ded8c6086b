import { randomUUID } from 'crypto';
import { hostname } from 'os';
import { CONVERSION_EVENT_SINK, CONVERSION_EVENT_SOURCE, ConversionEventSink, ConversionEventSource, LIVE_CONVERSION_SOURCE } from '@shortlink/clicks-domain';
import { InProcessConversionLog, KafkaConversionEventSink, KafkaConversionEventSource } from '@shortlink/bus';
import { portSpec } from '../port';

/**
 * The conversions topic (leads and sales; docs/analytics.md, "Conversions"): kafka with
 * BUS_DRIVER=kafka (analytics reads it in the group `<KAFKA_CONSUMER_GROUP>.conversions`), one
 * in-process log shared by the apps of the process otherwise. Building it opens no connection.
 */
export const conversionsPort = portSpec<{ sink: ConversionEventSink; source: ConversionEventSource; liveSource: ConversionEventSource }>({
  name: 'conversion-events',
  open: (config) => {
    const bus = config.bus;
    if (bus.driver === 'kafka') {
      const common = { brokers: bus.brokers, topic: config.conversions.topic, partitions: bus.partitions };
      return {
        sink: new KafkaConversionEventSink({ ...common, clientId: 'shortlink-generation' }),
        source: new KafkaConversionEventSource({ ...common, clientId: 'shortlink-analytics', groupId: `${bus.consumerGroup}.conversions` }),
        // The live stream's (docs/design.md, "Live click stream"): a group of this instance's own, from the end, committing nothing.
        liveSource: new KafkaConversionEventSource({
          ...common,
          clientId: 'shortlink-live',
          groupId: `${bus.consumerGroup}.conversions.live.${hostname()}.${process.pid}.${randomUUID().slice(0, 8)}`,
          fromBeginning: false,
          commitOffsets: false,
          sessionTimeoutMs: Math.min(bus.sessionTimeoutMs, 10_000),
          heartbeatIntervalMs: 1000,
        }),
      };
    }
    const log = new InProcessConversionLog();
    return { sink: log.sink, source: log.source, liveSource: log.liveSource() };
  },
  provides: [
    [CONVERSION_EVENT_SINK, (e) => e.sink],
    [CONVERSION_EVENT_SOURCE, (e) => e.source],
    [LIVE_CONVERSION_SOURCE, (e) => e.liveSource],
  ],
  close: async (e) => {
    await e.source.close();
    await e.liveSource.close();
    await e.sink.close();
  },
});
