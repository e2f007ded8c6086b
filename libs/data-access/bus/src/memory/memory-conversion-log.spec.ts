import { InProcessConversionLog } from '../kafka/kafka-conversion-events';
import { describeConversionBusContract } from '../contract/conversion-events.contract';

// The embedded twin of the conversions topic; its Kafka twin is kafka-conversion-events.integration-spec.ts.
describeConversionBusContract('in-process', async () => {
  const log = new InProcessConversionLog({ retryMs: 20 });
  return { sink: log.sink, source: () => log.source, liveSource: () => log.liveSource(), close: async () => undefined };
});
