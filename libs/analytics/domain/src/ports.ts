import type { ConversionDimensions, ConversionEvent, ConvertedClick } from './conversions/conversion';
import type { ConversionTotals } from './conversions/ports';
import { ClickBatch, ClickEvent } from './click-event';
import { Dimension, RollupRow } from './aggregation';
import { VisitColumns, VisitPosition, VisitRow } from './visits';
import { TableLedgers } from './write-plan';

/** Producer side of the click topic. Called from the background flusher, never from a request. */
export interface ClickEventSink {
  /** Sends the batch; events of one link go to one partition (partitioned by domain/code). */
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
  /** Messages behind the end of the log per partition, for the group (committed offset to log end). */
  lag(): Promise<Map<number, number>>;
  close(): Promise<void>;
}

/** How far a consumer has aggregated one partition of one source (offsets at or below are done). */
export interface ConsumerProgress {
  readonly source: string;
  readonly partition: number;
  /** Decimal string: Kafka offsets are int64. */
  readonly lastOffset: string;
}

/**
 * The highest event seq of one producer counted on one partition of a source: a resend of a
 * batch after an ambiguous failure lands at new offsets, and is recognised by its event ids.
 */
export interface ProducerMark {
  readonly source: string;
  readonly partition: number;
  readonly producer: string;
  readonly lastSeq: number;
}

export type Granularity = 'minute' | 'hour' | 'day';
export const GRANULARITY_SECONDS: Readonly<Record<Granularity, number>> = { minute: 60, hour: 3600, day: 86_400 };
/** Whether bot clicks (crawlers, link-preview fetchers) count: excluded by default. */
export type BotFilter = 'exclude' | 'include' | 'only';

export interface LinkScope {
  readonly tenantId: string;
  readonly domain: string;
  readonly code: string;
}

export interface RangeQuery {
  /** Epoch seconds, inclusive, aligned to the granularity. */
  readonly from: number;
  /** Epoch seconds, exclusive, aligned to the granularity. */
  readonly to: number;
  readonly granularity: Granularity;
  readonly bots: BotFilter;
}

export interface SeriesPoint {
  /** Start of the bucket, epoch seconds. */
  readonly time: number;
  readonly clicks: number;
  readonly visitors: number;
  /** Bot clicks in the bucket, whatever the filter. */
  readonly botClicks: number;
}

export interface Totals {
  readonly clicks: number;
  /** Unique visitors over the whole range: one HLL union, never a sum of buckets. */
  readonly visitors: number;
  readonly botClicks: number;
}

export interface SeriesResult {
  readonly series: readonly SeriesPoint[];
  readonly totals: Totals;
}

export interface BreakdownRow {
  /** '' when the click had none (no referer, unknown country, no variant). */
  readonly value: string;
  readonly clicks: number;
  readonly visitors: number;
}

/**
 * Whose conversions a breakdown or series counts (docs/analytics.md, "Conversions"): one link
 * (`code` with its `domain`), one domain of the tenant, or all its links (`domain` null).
 */
export interface ConversionScope {
  readonly tenantId: string;
  readonly domain: string | null;
  readonly code?: string;
}

/** Conversions of one value of a dimension (conversionBreakdown): '' is none/unknown. */
export interface ConversionBreakdownRow extends ConversionTotals {
  readonly value: string;
}

/** Conversions of one bucket (conversionSeries): epoch seconds of its start. */
export interface ConversionPoint extends ConversionTotals {
  readonly time: number;
}

/** One link's conversions over a range (conversionsByLink). */
export interface LinkConversionRow extends ConversionTotals {
  readonly domain: string;
  readonly code: string;
}

export interface TopLinkRow {
  readonly domain: string;
  readonly code: string;
  readonly clicks: number;
  readonly visitors: number;
}

export interface OrphanPoint {
  readonly time: number;
  readonly domain: string;
  readonly visits: number;
  readonly visitors: number;
}

export interface OrphanCodeRow {
  readonly domain: string;
  readonly code: string;
  readonly visits: number;
}

export interface OrphanQuery extends RangeQuery {
  /**
   * The domains whose orphan visits the caller may see (they belong to no tenant: a tenant's own
   * domains, and the service's shared ones for the operator; docs/design.md, "Security model").
   * Empty: nothing.
   */
  readonly domains: readonly string[];
  readonly limit: number;
}

export interface OrphanResult {
  readonly series: readonly OrphanPoint[];
  readonly codes: readonly OrphanCodeRow[];
  readonly totals: { readonly visits: number; readonly visitors: number };
}

/** How long each granularity is kept, in days; 0 keeps it forever (docs/analytics.md, "Retention"). */
export interface Retention {
  readonly minuteDays: number;
  readonly hourDays: number;
  readonly dayDays: number;
  /** The raw visits (one row per click). */
  readonly visitDays: number;
}

/**
 * One write of the consumer (docs/analytics.md, "Exactly once"): rollup rows and raw visits, to the
 * tables named. With `through`, every table written also keeps, in the same insert as its rows, its
 * ledger entry (source, partition, UTC day) -> `through.lastOffset` for each day the write has rows of.
 */
export interface ClickWrite {
  /** Rows per link, minute and bot flag, and per dimension value of those, for the rollup tables. */
  readonly rollups?: readonly RollupRow[];
  /** One row per click, for the raw visits table. */
  readonly visits?: VisitColumns;
  /** Names from `ClickAggregateStore.targets`; default: every table. */
  readonly targets?: readonly string[];
  readonly through?: ConsumerProgress;
}

/** What the store holds of one source partition: its committed progress and each table's ledger. */
export interface WrittenThrough {
  /** Last offset of the partition committed (progress table); undefined when none was. */
  readonly committed: bigint | undefined;
  readonly tables: TableLedgers;
}

/**
 * Visits to delete (docs/analytics.md, "Deleting visits"): a link's (its tenant, domain and code),
 * or the orphan visits of some domains (tenant '').
 */
export type VisitDeletion =
  | { readonly kind: 'link'; readonly tenantId: string; readonly domain: string; readonly code: string }
  | { readonly kind: 'orphans'; readonly domains: readonly string[] };

/** A page of raw visits, newest first (by time, then id). */
export interface VisitQuery {
  /** '' with `domain`: the orphan visits of that domain (codes that do not exist). */
  readonly tenantId: string;
  /** Only this domain. */
  readonly domain?: string;
  /** With `domain`: one link. */
  readonly code?: string;
  /** Only these links (a tag's); empty: none. */
  readonly links?: ReadonlyArray<{ readonly domain: string; readonly code: string }>;
  /** Epoch seconds, inclusive. */
  readonly from: number;
  /** Epoch seconds, exclusive. */
  readonly to: number;
  readonly bots: BotFilter;
  /** Only visits after this one in that order; null: from the newest. */
  readonly after: VisitPosition | null;
  /** Rows returned at most: the caller asks for its page size + 1 to learn whether a next page exists. */
  readonly limit: number;
}

/** Click aggregates per minute, hour and day, and the raw visits (ClickHouse server, or chdb in process). */
export interface ClickAggregateStore {
  /** Creates database, tables and views if missing. */
  migrate(): Promise<void>;
  /**
   * The tables a write reaches. Each commits on its own (a server crash mid-insert can leave some
   * written and others not), and each keeps its own ledger (docs/analytics.md, "Exactly once").
   */
  readonly targets: readonly string[];
  /**
   * Each table named receives its rows and, with `through`, its ledger entries in the same insert, as
   * one part per partition. The tables may be written by several inserts that commit apart (a failed
   * write may have reached some): the ledgers tell which.
   */
  write(write: ClickWrite): Promise<void>;
  /** The committed progress of a source partition, and each table's ledger for the given UTC days (epoch s). */
  writtenThrough(source: string, partition: number, days: readonly number[]): Promise<WrittenThrough>;
  /**
   * Marks a batch done once every table holds it: the producers' marks first, then the progress, in
   * two inserts (a crash between them leaves marks ahead of progress, which only skips clicks the
   * tables already hold).
   */
  commit(progress: ConsumerProgress, marks: readonly ProducerMark[]): Promise<void>;
  /** Highest offset already aggregated per partition of the source: messages at or below it are skipped. */
  ingestedOffsets(source: string): Promise<Map<number, bigint>>;
  /** Producer marks of the source written since `sinceEpochSeconds` (older producers are gone). */
  producerMarks(source: string, sinceEpochSeconds: number): Promise<ProducerMark[]>;
  series(scope: LinkScope, range: RangeQuery): Promise<SeriesResult>;
  /** The clicks of all the tenant's links (or those of one domain) together: series and totals as `series` gives them for one link. */
  tenantSeries(tenantId: string, domain: string | null, range: RangeQuery): Promise<SeriesResult>;
  breakdown(scope: LinkScope, range: RangeQuery, dimension: Dimension, limit: number): Promise<BreakdownRow[]>;
  /** The tenant's most clicked links (of one domain, or among `among` only: a page of links with their counts), at most `limit`. */
  topLinks(tenantId: string, domain: string | null, range: RangeQuery, limit: number, among?: readonly Omit<LinkScope, 'tenantId'>[]): Promise<TopLinkRow[]>;
  orphans(query: OrphanQuery): Promise<OrphanResult>;
  /** Raw visits of a tenant, newest first: at most `limit` rows. */
  visits(query: VisitQuery): Promise<VisitRow[]>;
  /**
   * Deletes the visits from the raw visits, the rollups and the dimension tables (an `ALTER TABLE …
   * DELETE` mutation of each, which the server applies in the background: reads may still count them
   * for a few seconds); the ledgers stay, so a redelivered batch writes none of them again. Returns how
   * many raw visits there were (rows of the retention).
   */
  deleteVisits(target: VisitDeletion): Promise<number>;
  /**
   * Conversions (docs/analytics.md, "Conversions"): the events of one batch of the conversions topic
   * into the `conversions` table, in one insert (one part: the table holds the whole batch or none).
   */
  writeConversions(rows: readonly ConversionRow[]): Promise<void>;
  /** The last offset of this source partition the `conversions` table holds (its own ledger), or undefined. */
  conversionsThrough(source: string, partition: number): Promise<bigint | undefined>;
  /** A link's leads, sales and revenue per currency over the range, each event key counted once. */
  conversionTotals(scope: LinkScope, range: Pick<RangeQuery, 'from' | 'to'>): Promise<ConversionTotals>;
  /**
   * The tenant's links with conversions over the range (the funnel, docs/analytics.md "Conversions"):
   * leads, sales and revenue per currency per link, each event key counted once, most sales first.
   */
  conversionsByLink(tenantId: string, domain: string | null, range: Pick<RangeQuery, 'from' | 'to'>, limit: number): Promise<LinkConversionRow[]>;
  /**
   * The dimensions of the clicks conversions name, by click id (docs/design.md, "Conversions"): from
   * the click's raw visit (found by its link and minute), else from an earlier conversion row of the
   * same click. A click found nowhere is absent from the map.
   */
  clickDimensions(clicks: readonly ConvertedClick[]): Promise<Map<string, ConversionDimensions>>;
  /** Leads, sales and revenue per value of a dimension of their clicks over the range, each event key once; most sales first, at most `limit`. */
  conversionBreakdown(scope: ConversionScope, range: Pick<RangeQuery, 'from' | 'to'>, dimension: Dimension, limit: number): Promise<ConversionBreakdownRow[]>;
  /** Leads, sales and revenue per bucket of `range.granularity` (buckets without any absent), each event key once. */
  conversionSeries(scope: ConversionScope, range: Pick<RangeQuery, 'from' | 'to' | 'granularity'>): Promise<ConversionPoint[]>;
  /** Clicks and visitors per value of a dimension over the links of a scope (`breakdown` for a domain or the whole tenant). */
  scopeBreakdown(scope: ConversionScope, range: RangeQuery, dimension: Dimension, limit: number): Promise<BreakdownRow[]>;
  /** Drops the partitions wholly older than the retention allows; returns `table:partition` of each. */
  dropExpired(nowEpochSeconds: number, retention: Retention): Promise<string[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const CLICK_EVENT_SINK = Symbol('CLICK_EVENT_SINK');
export const CLICK_EVENT_SOURCE = Symbol('CLICK_EVENT_SOURCE');
/**
 * ClickEventSource for the live click stream (docs/design.md, "Live click stream"): a consumer group
 * of this instance's own that starts at the end of the topic and commits nothing, so every analytics
 * instance sees every click from its start on, and none holds back another's progress.
 */
export const LIVE_CLICK_SOURCE = Symbol('LIVE_CLICK_SOURCE');
/**
 * ClickEventSource for the Mercure hub of Shlink's real-time updates (the generation app; docs/design.md,
 * "Compatible APIs"): as LIVE_CLICK_SOURCE, a group of this instance's own from the end, committing nothing.
 */
export const MERCURE_CLICK_SOURCE = Symbol('MERCURE_CLICK_SOURCE');
export const CLICK_AGGREGATE_STORE = Symbol('CLICK_AGGREGATE_STORE');
/** string: key of the visitor hash (docs/design.md, "Security model"). */
export const VISITOR_SECRET = Symbol('VISITOR_SECRET');
/**
 * ClickAggregateStore | null: the click aggregates as an app other than analytics reads them (the
 * compatibility APIs' click counts in the generation app). Null where they are not reachable from
 * that process: chdb lives inside the analytics process (the embedded launcher hands its shared
 * store instead).
 */
export const CLICK_STATS_READER = Symbol('CLICK_STATS_READER');

/** A conversion as the consumer writes it: the event and where it was read (the guards' offsets). */
export interface ConversionRow {
  readonly event: ConversionEvent;
  /** Its click's dimensions (the consumer's lookup); unknown when absent. */
  readonly dims?: ConversionDimensions;
  readonly source: string;
  readonly partition: number;
  readonly offset: string;
}
