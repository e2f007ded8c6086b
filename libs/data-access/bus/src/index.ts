export { decodeClickRecord, encodeClickRecord, kafkaPartitionOf } from './codec';
export { ensureClickTopic } from './kafka/ensure-click-topic';
export { KafkaClickEventSink } from './kafka/kafka-click-event-sink';
export { KafkaClickEventSource } from './kafka/kafka-click-event-source';
export { InProcessClickLog } from './memory/in-process-click-log';
export { MemoryClickEventSink } from './memory/memory-click-event-sink';
export { MemoryClickEventSource } from './memory/memory-click-event-source';
export { decodePlatformEvent, encodePlatformEvent, KafkaPlatformEventSink, KafkaPlatformEventSource } from './kafka/kafka-platform-events';
export { InProcessPlatformEvents } from './memory/memory-platform-events';
export {
  decodeConversionEvent,
  encodeConversionEvent,
  InProcessConversionLog,
  KafkaConversionEventSink,
  KafkaConversionEventSource,
} from './kafka/kafka-conversion-events';
