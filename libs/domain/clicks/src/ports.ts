import { ClickBatch, ClickEvent } from './click-event';

/** Producer side of the click topic. Called from the background flusher, never from a request. */
export interface ClickEventSink {
  /** Sends the batch; events of one link go to one partition (message key = domain/code). */
  send(events: readonly ClickEvent[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Consumer side of the click topic, as one member of a consumer group. The handler is called
 * with batches of one partition in offset order; the source commits a batch's offsets only
 * after the handler resolves, so a crash replays (at-least-once) and the store de-duplicates.
 */
export interface ClickEventSource {
  start(handler: (batch: ClickBatch) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** One row of the per-minute aggregation as the consumer hands it to the store. */
export interface MinuteVisitorRow {
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
  /** Start of the minute, epoch seconds (UTC). */
  readonly minute: number;
  /** Keyed hash of the visitor (IP + user agent), a safe integer < 2^52. */
  readonly visitor: number;
  readonly clicks: number;
}

/** How far a consumer has aggregated one partition of one source (offsets at or below are done). */
export interface ConsumerProgress {
  readonly source: string;
  readonly partition: number;
  /** Decimal string: Kafka offsets are int64. */
  readonly lastOffset: string;
}

export interface StatsQuery {
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
  /** Epoch seconds, inclusive. */
  readonly from: number;
  /** Epoch seconds, exclusive. */
  readonly to: number;
}

export interface MinutePoint {
  readonly minute: number;
  readonly clicks: number;
  readonly visitors: number;
}

export interface LinkStats {
  readonly series: readonly MinutePoint[];
  readonly totals: { readonly clicks: number; readonly visitors: number };
}

/** Per-minute click aggregates (ClickHouse server, or chdb in process). */
export interface ClickAggregateStore {
  /** Creates database, tables and views if missing. */
  migrate(): Promise<void>;
  /**
   * Writes the rows and the progress they complete in one insert, so a consumer that crashes
   * leaves either both or neither (docs/design.md, "Clicks and analytics").
   */
  write(rows: readonly MinuteVisitorRow[], progress?: ConsumerProgress): Promise<void>;
  /** Highest offset already aggregated per partition of the source: messages at or below it are skipped. */
  ingestedOffsets(source: string): Promise<Map<number, bigint>>;
  stats(query: StatsQuery): Promise<LinkStats>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const CLICK_EVENT_SINK = Symbol('CLICK_EVENT_SINK');
export const CLICK_EVENT_SOURCE = Symbol('CLICK_EVENT_SOURCE');
export const CLICK_AGGREGATE_STORE = Symbol('CLICK_AGGREGATE_STORE');
/** string: key of the visitor hash (docs/design.md, "Security model"). */
export const VISITOR_SECRET = Symbol('VISITOR_SECRET');
