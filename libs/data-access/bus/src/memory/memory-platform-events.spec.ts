import { describePlatformEventsContract } from '../contract/platform-events.contract';
import { InProcessPlatformEvents } from './memory-platform-events';

// The embedded twin of the events topic; its Kafka twin is kafka-platform-events.integration-spec.ts.
describePlatformEventsContract('memory', async () => {
  const queue = new InProcessPlatformEvents({ retryMs: 20 });
  return { sink: queue.sink, source: queue.source };
});
