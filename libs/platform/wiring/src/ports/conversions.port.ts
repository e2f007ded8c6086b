import { CONVERSION_EVENT_SINK, CONVERSION_EVENT_SOURCE, ConversionEventSink, ConversionEventSource } from '@shortlink/clicks-domain';
import { InProcessConversionLog, KafkaConversionEventSink, KafkaConversionEventSource } from '@shortlink/bus';
import { portSpec } from '../port';

/**
 * The conversions topic (leads and sales; docs/analytics.md, "Conversions"): kafka with
 * BUS_DRIVER=kafka (analytics reads it in the group `<KAFKA_CONSUMER_GROUP>.conversions`), one
 * in-process log shared by the apps of the process otherwise. Building it opens no connection.
 */
export const conversionsPort = portSpec<{ sink: ConversionEventSink; source: ConversionEventSource }>({
  name: 'conversion-events',
  open: (config) => {
    const bus = config.bus;
    if (bus.driver === 'kafka') {
      const common = { brokers: bus.brokers, topic: config.conversions.topic, partitions: bus.partitions };
      return {
        sink: new KafkaConversionEventSink({ ...common, clientId: 'shortlink-generation' }),
        source: new KafkaConversionEventSource({ ...common, clientId: 'shortlink-analytics', groupId: `${bus.consumerGroup}.conversions` }),
      };
    }
    return new InProcessConversionLog();
  },
  provides: [
    [CONVERSION_EVENT_SINK, (e) => e.sink],
    [CONVERSION_EVENT_SOURCE, (e) => e.source],
  ],
  close: async (e) => {
    await e.source.close();
    await e.sink.close();
  },
});
