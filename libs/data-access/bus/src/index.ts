export { DEFAULT_CLICK_TOPIC, clickMessageKey, encodeClickEvent, decodeClickEvent } from './codec';
export type { BusLogger, BusLogEntry, BusLogLevel } from './logging';
export { consoleWarnLogger, silentLogger, filteredLogger } from './logging';
export type { RetryBackoffOptions } from './backoff';
export {
  InProcessClickLog,
  MemoryClickEventSink,
  MemoryClickEventSource,
} from './memory/in-process-click-log';
export type { InProcessClickLogOptions, MemoryClickEventSourceOptions, LogRecord } from './memory/in-process-click-log';
export { KafkaClickEventSink } from './kafka/kafka-click-event-sink';
export type { KafkaClickEventSinkOptions } from './kafka/kafka-click-event-sink';
export { KafkaClickEventSource } from './kafka/kafka-click-event-source';
export type { KafkaClickEventSourceOptions } from './kafka/kafka-click-event-source';
export { ensureClickTopic } from './kafka/ensure-click-topic';
export type { EnsureClickTopicOptions, EnsureClickTopicResult } from './kafka/ensure-click-topic';
export type { KafkaConnectionOptions } from './kafka/kafka-options';
