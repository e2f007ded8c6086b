import { randomUUID } from 'crypto';
import { requireEnv } from '@shortlink/testing';
import { describePlatformEventsContract } from '../contract/platform-events.contract';
import { KafkaPlatformEventSink, KafkaPlatformEventSource } from './kafka-platform-events';

// Runs against the Kafka broker of `npm run stack:up`; each test gets its own topic and group. Its in-process twin is memory-platform-events.spec.ts.
describePlatformEventsContract('kafka', async () => {
  const brokers = requireEnv('KAFKA_BROKERS');
  const topic = `shortlink.events.test-${randomUUID()}`;
  const common = { brokers, topic, partitions: 3, logLevel: 'nothing' as const };
  return {
    sink: new KafkaPlatformEventSink({ ...common, clientId: 'events-test' }),
    source: new KafkaPlatformEventSource({ ...common, clientId: 'events-test', groupId: `${topic}.group`, retryMs: 100 }),
  };
});
