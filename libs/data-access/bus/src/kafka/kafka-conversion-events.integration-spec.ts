import { randomUUID } from 'crypto';
import { requireEnv } from '@shortlink/testing';
import { describeConversionBusContract } from '../contract/conversion-events.contract';
import { KafkaConversionEventSink, KafkaConversionEventSource } from './kafka-conversion-events';

// Runs against the Kafka of `npm run stack:up` (deploy/local/.run/stack.env), on a topic and group of its own; its in-process twin is memory-conversion-log.spec.ts.
describeConversionBusContract('kafka', async () => {
  const brokers = requireEnv('KAFKA_BROKERS').split(',');
  const topic = `shortlink.conversions.contract-${randomUUID().slice(0, 8)}`;
  const sink = new KafkaConversionEventSink({ brokers, topic, partitions: 3, clientId: 'conversion-contract' });
  return {
    sink,
    source: () =>
      new KafkaConversionEventSource({ brokers, topic, partitions: 3, clientId: 'conversion-contract', groupId: `${topic}.analytics`, retryMs: 100 }),
    liveSource: () =>
      new KafkaConversionEventSource({
        brokers,
        topic,
        partitions: 3,
        clientId: 'conversion-contract-live',
        groupId: `${topic}.live.${randomUUID().slice(0, 8)}`,
        fromBeginning: false,
        commitOffsets: false,
        sessionTimeoutMs: 10_000,
        heartbeatIntervalMs: 1000,
      }),
    close: () => sink.close(),
  };
});
