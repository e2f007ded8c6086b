export {
  cityOfValue,
  cityValueOf,
  type CityValue,
  type CountedClick,
  type Dimension,
  DIMENSION_ID,
  type DimensionCount,
  DIMENSIONS,
  minuteOf,
  rollUp,
  RollupCaps,
  type VisitorMinuteRow,
} from './aggregation';
export { type BatchSink, ClickBuffer, type ClickBufferObserver, type ClickBufferOptions } from './click-buffer';
export { ClickEnricher, type RawClick } from './click-enricher';
export { CLICK_EVENT_VERSION, type ClickBatch, type ClickEvent, type ClickSource, type DeliveredClick, eventIdOf } from './click-event';
export {
  type BotFilter,
  type BreakdownRow,
  CLICK_AGGREGATE_STORE,
  CLICK_STATS_READER,
  CLICK_EVENT_SINK,
  CLICK_EVENT_SOURCE,
  type ClickAggregateStore,
  type ClickEventSink,
  type ClickEventSource,
  type ClickWrite,
  type ConsumerProgress,
  type Granularity,
  type LinkScope,
  LIVE_CLICK_SOURCE,
  type OrphanQuery,
  type OrphanResult,
  type ProducerMark,
  type RangeQuery,
  type Retention,
  type SeriesPoint,
  type SeriesResult,
  type TopLinkRow,
  type VisitQuery,
  VISITOR_SECRET,
  type WrittenThrough,
} from './ports';
export { parseInstant, resolveRange } from './time-range';
export { visitIdOf, visitOf, type VisitPosition, type VisitRow, type VisitSource } from './visits';
export { dayOf, MAX_CLICKS_PER_WRITE, type PlannedWrite, planWrites, type TableLedgers } from './write-plan';
export { QR_SEGMENT, qrUrlOf } from './qr';
