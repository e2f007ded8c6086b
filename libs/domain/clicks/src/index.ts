export { aggregateClicks, DIMENSION_ID, DIMENSIONS } from './aggregation';
export type { Dimension, DimensionCount, VisitorMinuteRow } from './aggregation';
export { ClickBuffer } from './click-buffer';
export type { BatchSink, ClickBufferObserver, ClickBufferOptions } from './click-buffer';
export { ClickEnricher } from './click-enricher';
export type { RawClick } from './click-enricher';
export { CLICK_EVENT_VERSION, eventIdOf } from './click-event';
export type { ClickBatch, ClickEvent, DeliveredClick } from './click-event';
export { CLICK_AGGREGATE_STORE, CLICK_EVENT_SINK, CLICK_EVENT_SOURCE, VISITOR_SECRET } from './ports';
export type {
  BotFilter, BreakdownRow, ClickAggregateStore, ClickEventSink, ClickEventSource, ConsumerProgress, Granularity, LinkScope, OrphanQuery, OrphanResult,
  ProducerMark, RangeQuery, Retention, SeriesPoint, SeriesResult, TopLinkRow,
} from './ports';
export { resolveRange } from './time-range';
