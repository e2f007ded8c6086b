export { aggregateClicks, type Dimension, DIMENSION_ID, type DimensionCount, DIMENSIONS, type VisitorMinuteRow } from './aggregation';
export { type BatchSink, ClickBuffer, type ClickBufferObserver, type ClickBufferOptions } from './click-buffer';
export { ClickEnricher, type RawClick } from './click-enricher';
export { CLICK_EVENT_VERSION, type ClickBatch, type ClickEvent, type DeliveredClick, eventIdOf } from './click-event';
export {
  type BotFilter,
  type BreakdownRow,
  CLICK_AGGREGATE_STORE,
  CLICK_EVENT_SINK,
  CLICK_EVENT_SOURCE,
  type ClickAggregateStore,
  type ClickEventSink,
  type ClickEventSource,
  type ConsumerProgress,
  type Granularity,
  type LinkScope,
  type OrphanQuery,
  type OrphanResult,
  type ProducerMark,
  type RangeQuery,
  type Retention,
  type SeriesPoint,
  type SeriesResult,
  type TopLinkRow,
  VISITOR_SECRET,
} from './ports';
export { resolveRange } from './time-range';
