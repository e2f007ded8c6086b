export {
  cityOfValue,
  cityValueOf,
  type CityValue,
  CountedClicks,
  type CountedFacts,
  type Dimension,
  type DimensionCount,
  type DimensionValue,
  DIMENSION_ID,
  DIMENSIONS,
  minuteOf,
  NONE,
  OTHER,
  RollupCaps,
  type RollupRow,
  rollupsOf,
  rollupsOfVisitorRows,
  type VisitorMinuteRow,
} from './aggregation';
export { ClickColumns, ColumnarClickBatch, NO_STRING, ORPHAN_FLAG, QR_FLAG } from './click-columns';
export { type BatchSink, ClickBuffer, type ClickBufferObserver, type ClickBufferOptions } from './click-buffer';
export { ClickEnricher, type RawClick } from './click-enricher';
export { ClickIds, DEFAULT_CLICK_ID_TTL_DAYS, type OpenedClickId, withQueryParam } from './click-id';
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
  type ConversionRow,
  type Granularity,
  type LinkScope,
  LIVE_CLICK_SOURCE,
  MERCURE_CLICK_SOURCE,
  type OrphanQuery,
  type OrphanResult,
  type ProducerMark,
  type RangeQuery,
  type Retention,
  type SeriesPoint,
  type SeriesResult,
  type TopLinkRow,
  type LinkConversionRow,
  type ConversionBreakdownRow,
  type ConversionPoint,
  type ConversionScope,
  type VisitDeletion,
  type VisitQuery,
  VISITOR_SECRET,
  type WrittenThrough,
} from './ports';
export { parseInstant, resolveRange } from './time-range';
export {
  producerKeyOf,
  type VisitColumns,
  visitColumnsOf,
  visitIdOf,
  type VisitPosition,
  type VisitRow,
  visitRowAt,
  visitsOf,
  type VisitSource,
  writeVisitId,
} from './visits';
export { dayOf, MAX_CLICKS_PER_WRITE, type PlannableClicks, type PlannedWrite, planWrites, type TableLedgers } from './write-plan';
export { QR_SEGMENT, qrUrlOf } from './qr';
export {
  checkLead,
  checkMetadata,
  checkSale,
  CONVERSION_LIMITS,
  type ConversionDimensions,
  type ConversionEvent,
  type ConvertedClick,
  type LeadInput,
  type SaleInput,
  UNKNOWN_DIMENSIONS,
} from './conversions/conversion';
export {
  type ConversionCaps,
  type ConversionObserver,
  ConversionService,
  type ConversionServiceOptions,
  type TrackResult,
} from './conversions/conversion-service';
export {
  ATTRIBUTIONS,
  type Attribution,
  CONVERSION_EVENT_SINK,
  CONVERSION_EVENT_SOURCE,
  CONVERSION_STORE,
  type ConversionBatch,
  type ConversionEventSink,
  type ConversionEventSource,
  type ConversionLinks,
  type ConversionStore,
  type ConversionTotals,
  type Customer,
  type StripeSettings,
} from './conversions/ports';
export { InMemoryConversionStore } from './conversions/in-memory-conversion-store';
