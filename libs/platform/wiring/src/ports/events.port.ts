import { PLATFORM_EVENT_SINK, PLATFORM_EVENT_SOURCE, PlatformEventSink, PlatformEventSource } from '@shortlink/webhooks-domain';
import { InProcessPlatformEvents, KafkaPlatformEventSink, KafkaPlatformEventSource } from '@shortlink/bus';
import { portSpec } from '../port';

/**
 * The platform's events topic (link changes, batches; docs/design.md, "Webhooks"): kafka with
 * BUS_DRIVER=kafka, one in-process queue shared by the apps of the process otherwise. Building
 * it opens no connection.
 */
export const eventsPort = portSpec<{ sink: PlatformEventSink; source: PlatformEventSource }>({
  name: 'platform-events',
  open: (config) => {
    const bus = config.bus;
    if (bus.driver === 'kafka') {
      const common = { brokers: bus.brokers, topic: config.webhooks.eventsTopic, partitions: bus.partitions };
      return {
        sink: new KafkaPlatformEventSink({ ...common, clientId: 'shortlink-generation' }),
        source: new KafkaPlatformEventSource({ ...common, clientId: 'shortlink-webhooks', groupId: config.webhooks.consumerGroup }),
      };
    }
    return new InProcessPlatformEvents();
  },
  provides: [
    [PLATFORM_EVENT_SINK, (e) => e.sink],
    [PLATFORM_EVENT_SOURCE, (e) => e.source],
  ],
  close: async (e) => {
    await e.source.close();
    await e.sink.close();
  },
});
