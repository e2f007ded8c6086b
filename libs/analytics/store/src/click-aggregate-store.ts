import {
  BreakdownRow,
  ClickAggregateStore,
  ClickWrite,
  ConsumerProgress,
  ConversionBreakdownRow,
  ConversionDimensions,
  ConversionPoint,
  ConversionRow,
  ConversionScope,
  ConversionTotals,
  ConvertedClick,
  Dimension,
  DIMENSION_ID,
  Granularity,
  LinkConversionRow,
  LinkScope,
  OrphanQuery,
  OrphanResult,
  ProducerMark,
  RangeQuery,
  Retention,
  SeriesPoint,
  SeriesResult,
  TopLinkRow,
  UNKNOWN_DIMENSIONS,
  VisitDeletion,
  VisitQuery,
  visitColumnsOf,
  VisitRow,
  WrittenThrough,
} from '@shortlink/clicks-domain';
import { DomainError, ErrorCode } from '@shortlink/core';
import { assertProgress, assertUInt, daysOf, encodeRollups, encodeVisits, ROLLUP_COLUMNS, VISIT_COLUMNS } from './click-writes';
import { CLICK_MIGRATIONS, ClickTarget, LEDGER_TENANT, OlapMigration, ROW_KIND, runOlapMigrations, TARGET_BIT } from './migrations';
import { OlapError, OlapExecutor } from './olap-executor';
import { sqlDateTime, sqlIdentifier, sqlNumber, sqlString, sqlUInt } from './sql-literals';

const DAY = 86_400;

/**
 * A progress or producer-mark row of clicks_input as JSONEachRow (one each per batch: text is cheap
 * there). A column a row leaves out reads as its type's default on both engines.
 */
interface InputRow {
  kind: number;
  targets: number;
  minute?: number;
  source: string;
  source_partition: number;
  /** Decimal string: both engines read a quoted UInt64, and it keeps offsets past 2^53 exact. */
  last_offset?: string;
  producer?: string;
  last_seq?: number;
}

/** 64-bit results arrive as decimal strings (quoted on both engines); UInt32 as numbers. */
type Int64 = string | number;

/** Tables each granularity's retention applies to, and how their partition names read. */
const RETAINED: ReadonlyArray<{ table: string; unit: 'day' | 'month' | 'year'; keep: (r: Retention) => number }> = [
  { table: 'link_minute', unit: 'day', keep: (r) => r.minuteDays },
  { table: 'dim_minute', unit: 'day', keep: (r) => r.minuteDays },
  { table: 'link_hour', unit: 'month', keep: (r) => r.hourDays },
  { table: 'dim_hour', unit: 'month', keep: (r) => r.hourDays },
  { table: 'link_day', unit: 'year', keep: (r) => r.dayDays },
  { table: 'dim_day', unit: 'year', keep: (r) => r.dayDays },
  { table: 'visits', unit: 'day', keep: (r) => r.visitDays },
  // A producer's marks matter while it may still resend: days. Two months is plenty.
  { table: 'producer_marks', unit: 'month', keep: () => 62 },
];

/** The tables that hold a link's (or an orphan's) visits, the rollups and dimensions first, then the raw visits. */
const DELETED_FROM = ['link_minute', 'link_hour', 'link_day', 'dim_minute', 'dim_hour', 'dim_day', 'visits'] as const;

const TARGETS = Object.keys(TARGET_BIT) as ClickTarget[];
const ALL_TARGETS = TARGETS.reduce((bits, t) => bits | TARGET_BIT[t], 0);

/**
 * A visits page is read in windows of time going back from its upper bound, each this many times
 * longer than the one before (from an hour), until the page is full: a busy link reads the last hour,
 * not its whole retention. 18.16 cannot read a sorting key backwards, so each window is sorted.
 */
const VISIT_WINDOW_FIRST_SECONDS = 3600;
const VISIT_WINDOW_GROWTH = 8;

/**
 * ClickAggregateStore over SQL that runs unchanged on ClickHouse 18.16 and on chdb; the engine
 * is the executor's business. Each write is one insert into a Null table whose materialized views
 * fold it into AggregatingMergeTrees per minute, hour and day (sum of clicks, HLL of visitors), per
 * dimension value, and copy it into the raw visits, each table with its ledger rows; a commit writes
 * the producer marks and then the progress (docs/analytics.md, "Exactly once").
 */
export class SqlClickAggregateStore implements ClickAggregateStore {
  private readonly db: string;

  constructor(
    private readonly executor: OlapExecutor,
    database = 'shortlink',
    private readonly migrations: readonly OlapMigration[] = CLICK_MIGRATIONS,
  ) {
    this.db = sqlIdentifier(database);
  }

  get database(): string {
    return this.db;
  }

  async migrate(): Promise<void> {
    await runOlapMigrations(this.executor, this.db, this.migrations);
  }

  get targets(): readonly string[] {
    return TARGETS;
  }

  async write(write: ClickWrite): Promise<void> {
    const bits = targetBits(write.targets);
    const rollupBits = bits & ~TARGET_BIT.visits;
    const rollups = rollupBits ? (write.rollups ?? []) : [];
    const visits = bits & TARGET_BIT.visits && write.visits && write.visits.length > 0 ? write.visits : undefined;
    // Every table written keeps a ledger entry for each day the write has rows of, rollups or visits.
    const days = daysOf(rollups, visits);
    if (days.size === 0) return;
    // Both encoded (and checked) before either is sent: a bad value writes nothing.
    const inserts: Array<() => Promise<void>> = [];
    if (rollupBits) {
      const rows = encodeRollups(rollups, rollupBits, write.through, days);
      if (rows.length > 0) inserts.push(() => this.executor.insertRowBinary(`${this.db}.rollup_input`, ROLLUP_COLUMNS, rows));
    }
    if (bits & TARGET_BIT.visits) {
      const rows = encodeVisits(visits ?? visitColumnsOf([]), write.through, days);
      if (rows.length > 0) inserts.push(() => this.executor.insertRowBinary(`${this.db}.visits`, VISIT_COLUMNS, rows));
    }
    // Two inserts the server runs at once; each table commits alone either way (its ledger says what
    // it holds). Both are waited for before a failure is reported: a retry must not start while one
    // of them may still be landing.
    const settled = await Promise.allSettled(inserts.map((insert) => insert()));
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async commit(progress: ConsumerProgress, marks: readonly ProducerMark[]): Promise<void> {
    const progressRow = toProgressRow(progress);
    const today = Math.floor(Date.now() / 1000 / DAY) * DAY;
    const markRows = marks.map((m) => toMarkRow(m, today));
    // Marks before progress: a crash between the two leaves marks ahead, which only skips clicks
    // every table already holds (they are written after the tables' rows); progress ahead of marks
    // would forget the seqs of a batch a producer may still resend.
    if (markRows.length > 0) await this.executor.insertJsonEachRow(`${this.db}.clicks_input`, markRows);
    await this.executor.insertJsonEachRow(`${this.db}.clicks_input`, [progressRow]);
  }

  async writtenThrough(source: string, partition: number, days: readonly number[]): Promise<WrittenThrough> {
    assertUInt(partition, 'partition', 0xffff_ffff, 'writtenThrough');
    const tables = new Map<string, Map<number, bigint>>(TARGETS.map((t) => [t, new Map()]));
    const ledger = `tenant_id = ${sqlString(LEDGER_TENANT)} AND domain = ${sqlString(source)} AND code = ${sqlString(String(partition))}`;
    const inDays = days.length === 0 ? '0' : `t IN (${[...new Set(days)].map((d) => sqlDateTime(clampEpoch(d))).join(', ')})`;
    // One round trip: every table's ledger rows for these days (found by the sorting key's prefix), and the committed progress.
    const parts = TARGETS.map((table) => {
      const through = table === 'visits' ? 'max(ledger_offset)' : 'maxMerge(ledger_offset)';
      const dim = table.startsWith('dim_') ? ' AND dim = 0' : '';
      return `SELECT ${sqlString(table)} AS target, toUInt32(t) AS ledger_day, ${through} AS through FROM ${this.db}.${table} WHERE ${ledger}${dim} AND ${inDays} GROUP BY ledger_day`;
    });
    parts.push(
      `SELECT 'progress' AS target, toUInt32(0) AS ledger_day, maxMerge(last_offset) AS through FROM ${this.db}.consumer_progress` +
        ` WHERE source = ${sqlString(source)} AND source_partition = ${sqlNumber(partition)} GROUP BY source_partition`,
    );
    const rows = await this.executor.queryJsonEachRow<{ target: string; ledger_day: Int64; through: Int64 }>(parts.join(' UNION ALL '));
    let committed: bigint | undefined;
    for (const r of rows) {
      if (r.target === 'progress') committed = BigInt(r.through);
      else tables.get(r.target)?.set(Number(r.ledger_day), BigInt(r.through));
    }
    return { committed, tables };
  }

  async ingestedOffsets(source: string): Promise<Map<number, bigint>> {
    const rows = await this.executor.queryJsonEachRow<{ source_partition: Int64; done: Int64 }>(
      `SELECT source_partition, maxMerge(last_offset) AS done FROM ${this.db}.consumer_progress WHERE source = ${sqlString(source)} GROUP BY source_partition`,
    );
    if (rows.length > 0 || !source.startsWith('kafka:')) return new Map(rows.map((r) => [Number(r.source_partition), BigInt(r.done)]));
    // Before 0002 the progress of the (only) Kafka topic lived in the aggregate rows.
    const legacy = await this.executor.queryJsonEachRow<{ source_partition: Int64; done: Int64 }>(
      `SELECT source_partition, maxMerge(max_offset) AS done FROM ${this.db}.clicks_minute GROUP BY source_partition HAVING done > 0`,
    );
    return new Map(legacy.map((r) => [Number(r.source_partition), BigInt(r.done)]));
  }

  async producerMarks(source: string, sinceEpochSeconds: number): Promise<ProducerMark[]> {
    const rows = await this.executor.queryJsonEachRow<{ source_partition: Int64; producer: string; seq: Int64 }>(
      `SELECT source_partition, producer, maxMerge(last_seq) AS seq FROM ${this.db}.producer_marks` +
        ` WHERE source = ${sqlString(source)} AND day >= toDate(${sqlDateTime(clampEpoch(sinceEpochSeconds))}) GROUP BY source_partition, producer`,
    );
    return rows.map((r) => ({ source, partition: Number(r.source_partition), producer: r.producer, lastSeq: Number(r.seq) }));
  }

  async writeConversions(rows: readonly ConversionRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.executor.insertJsonEachRow(
      `${this.db}.conversions`,
      rows.map(({ event: e, source, partition, offset, dims }) => ({
        tenant_id: e.tenantId,
        domain: e.domain,
        code: e.code,
        link_id: e.linkId,
        kind: e.kind === 'lead' ? 1 : 2,
        event_key: e.key,
        event_id: e.id,
        customer_id: e.customerId,
        event_name: e.eventName,
        amount: e.amount,
        currency: e.currency,
        at: clampEpoch(Math.floor(e.at / 1000)),
        source,
        source_partition: partition,
        // Decimal string: both engines read a quoted UInt64.
        source_offset: String(BigInt(offset)),
        ...dimensionColumns(e.clickId, dims ?? UNKNOWN_DIMENSIONS),
      })),
    );
  }

  async clickDimensions(clicks: readonly ConvertedClick[]): Promise<Map<string, ConversionDimensions>> {
    const found = new Map<string, ConversionDimensions>();
    const columns = `click_id, country, region, city, referer, device, browser, os, variant, visit_source`;
    const take = (rows: DimensionOutput[]) => {
      for (const r of rows) if (!found.has(r.click_id)) found.set(r.click_id, dimensionsOf(r));
    };
    // The click's raw visit: found by its link and minute (the sorting key's prefix), then its id.
    const timed = clicks.filter((c) => c.clickAt !== undefined && Number.isFinite(c.clickAt));
    for (let i = 0; i < timed.length; i += LOOKUP_CHUNK) {
      const chunk = timed.slice(i, i + LOOKUP_CHUNK);
      const where = chunk
        .map((c) => {
          const minute = clampEpoch(Math.floor(c.clickAt! / 60_000) * 60);
          return `(${this.linkWhere(c)} AND t >= ${sqlDateTime(minute)} AND t < ${sqlDateTime(clampEpoch(minute + 60))})`;
        })
        .join(' OR ');
      take(
        await this.executor.queryJsonEachRow<DimensionOutput>(
          `SELECT ${columns} FROM ${this.db}.visits WHERE click_id IN (${chunk.map((c) => sqlString(c.clickId)).join(', ')}) AND (${where}) LIMIT 1 BY click_id`,
        ),
      );
    }
    // Else an earlier lead or sale of the same click that found it (a sale long after its click, whose visit retention dropped).
    const rest = clicks.filter((c) => !found.has(c.clickId));
    for (let i = 0; i < rest.length; i += LOOKUP_CHUNK) {
      const chunk = rest.slice(i, i + LOOKUP_CHUNK);
      take(
        await this.executor.queryJsonEachRow<DimensionOutput>(
          `SELECT ${columns} FROM ${this.db}.conversions WHERE click_id IN (${chunk.map((c) => sqlString(c.clickId)).join(', ')})` +
            ` AND (${chunk.map((c) => `(${this.linkWhere(c)})`).join(' OR ')}) AND visit_source != '' LIMIT 1 BY click_id`,
        ),
      );
    }
    return found;
  }

  async conversionBreakdown(
    scope: ConversionScope,
    range: Pick<RangeQuery, 'from' | 'to'>,
    dimension: Dimension,
    limit: number,
  ): Promise<ConversionBreakdownRow[]> {
    // Each event key once, with the best-known value of its copies (max: a known value beats '').
    const rows = await this.read(() =>
      this.executor.queryJsonEachRow<{ k_value: string; k_kind: Int64; k_currency: string; n_events: Int64; n_amount: Int64 }>(
        `SELECT k_value, k_kind, k_currency, count() AS n_events, sum(k_amount) AS n_amount FROM (` +
          `SELECT event_key, max(${CONVERSION_VALUE_OF[dimension]}) AS k_value, any(kind) AS k_kind, any(currency) AS k_currency, any(amount) AS k_amount` +
          ` FROM ${this.db}.conversions WHERE ${this.scopeWhere(scope)} AND ${conversionTimeWhere(range)} GROUP BY event_key) GROUP BY k_value, k_kind, k_currency`,
      ),
    );
    const values = new Map<string, { value: string; leads: number; sales: number; revenue: Record<string, number> }>();
    for (const r of rows) {
      let v = values.get(r.k_value);
      if (!v) values.set(r.k_value, (v = { value: r.k_value, leads: 0, sales: 0, revenue: {} }));
      addCounts(v, r);
    }
    return [...values.values()].sort((a, b) => b.sales - a.sales || b.leads - a.leads || a.value.localeCompare(b.value)).slice(0, positive(limit));
  }

  async conversionSeries(scope: ConversionScope, range: Pick<RangeQuery, 'from' | 'to' | 'granularity'>): Promise<ConversionPoint[]> {
    const bucket = { minute: 'toStartOfMinute', hour: 'toStartOfHour', day: 'toStartOfDay' }[granularity(range.granularity)];
    const rows = await this.read(() =>
      this.executor.queryJsonEachRow<{ k_ts: Int64; k_kind: Int64; k_currency: string; n_events: Int64; n_amount: Int64 }>(
        `SELECT toUnixTimestamp(${bucket}(k_at)) AS k_ts, k_kind, k_currency, count() AS n_events, sum(k_amount) AS n_amount FROM (` +
          `SELECT event_key, any(at) AS k_at, any(kind) AS k_kind, any(currency) AS k_currency, any(amount) AS k_amount` +
          ` FROM ${this.db}.conversions WHERE ${this.scopeWhere(scope)} AND ${conversionTimeWhere(range)} GROUP BY event_key) GROUP BY k_ts, k_kind, k_currency`,
      ),
    );
    const points = new Map<number, { time: number; leads: number; sales: number; revenue: Record<string, number> }>();
    for (const r of rows) {
      const time = Number(r.k_ts);
      let p = points.get(time);
      if (!p) points.set(time, (p = { time, leads: 0, sales: 0, revenue: {} }));
      addCounts(p, r);
    }
    return [...points.values()].sort((a, b) => a.time - b.time);
  }

  async scopeBreakdown(scope: ConversionScope, range: RangeQuery, dimension: Dimension, limit: number): Promise<BreakdownRow[]> {
    return this.breakdownWhere(this.scopeWhere(scope), range, dimension, limit);
  }

  async conversionsThrough(source: string, partition: number): Promise<bigint | undefined> {
    assertUInt(partition, 'partition', 0xffff_ffff, 'conversionsThrough');
    const rows = await this.executor.queryJsonEachRow<{ n_rows: Int64; through: Int64 }>(
      `SELECT count() AS n_rows, max(source_offset) AS through FROM ${this.db}.conversions WHERE source = ${sqlString(source)} AND source_partition = ${sqlNumber(partition)}`,
    );
    return rows.length && Number(rows[0].n_rows) > 0 ? BigInt(rows[0].through) : undefined;
  }

  async conversionTotals(scope: LinkScope, range: Pick<RangeQuery, 'from' | 'to'>): Promise<ConversionTotals> {
    const when = `at >= ${sqlDateTime(clampEpoch(Math.floor(range.from)))} AND at < ${sqlDateTime(clampEpoch(Math.ceil(range.to)))}`;
    // Each event key once (any of its rows: they are copies), then counted and summed per kind and
    // currency. Aliases differ from every column: 18.16 lets SELECT aliases leak into expressions.
    const rows = await this.read(() =>
      this.executor.queryJsonEachRow<{ k_kind: Int64; k_currency: string; n_events: Int64; n_amount: Int64 }>(
        `SELECT k_kind, k_currency, count() AS n_events, sum(k_amount) AS n_amount FROM (` +
          `SELECT event_key, any(kind) AS k_kind, any(currency) AS k_currency, any(amount) AS k_amount FROM ${this.db}.conversions` +
          ` WHERE ${this.linkWhere(scope)} AND ${when} GROUP BY event_key) GROUP BY k_kind, k_currency`,
      ),
    );
    let leads = 0;
    let sales = 0;
    const revenue: Record<string, number> = {};
    for (const r of rows) {
      if (Number(r.k_kind) === 1) leads += Number(r.n_events);
      else {
        sales += Number(r.n_events);
        revenue[r.k_currency] = (revenue[r.k_currency] ?? 0) + Number(r.n_amount);
      }
    }
    return { leads, sales, revenue };
  }

  async conversionsByLink(tenantId: string, domain: string | null, range: Pick<RangeQuery, 'from' | 'to'>, limit: number): Promise<LinkConversionRow[]> {
    const when = `at >= ${sqlDateTime(clampEpoch(Math.floor(range.from)))} AND at < ${sqlDateTime(clampEpoch(Math.ceil(range.to)))}`;
    const where = `tenant_id = ${sqlString(tenantOf(tenantId))}${domain === null ? '' : ` AND domain = ${sqlString(domain)}`} AND ${when}`;
    // As conversionTotals, per link: each event key once, then per link, kind and currency.
    const rows = await this.read(() =>
      this.executor.queryJsonEachRow<{ k_domain: string; k_code: string; k_kind: Int64; k_currency: string; n_events: Int64; n_amount: Int64 }>(
        `SELECT k_domain, k_code, k_kind, k_currency, count() AS n_events, sum(k_amount) AS n_amount FROM (` +
          `SELECT event_key, any(domain) AS k_domain, any(code) AS k_code, any(kind) AS k_kind, any(currency) AS k_currency, any(amount) AS k_amount` +
          ` FROM ${this.db}.conversions WHERE ${where} GROUP BY event_key) GROUP BY k_domain, k_code, k_kind, k_currency`,
      ),
    );
    const links = new Map<string, { domain: string; code: string; leads: number; sales: number; revenue: Record<string, number> }>();
    for (const r of rows) {
      const key = `${r.k_domain}\u0000${r.k_code}`;
      let l = links.get(key);
      if (!l) links.set(key, (l = { domain: r.k_domain, code: r.k_code, leads: 0, sales: 0, revenue: {} }));
      if (Number(r.k_kind) === 1) l.leads += Number(r.n_events);
      else {
        l.sales += Number(r.n_events);
        l.revenue[r.k_currency] = (l.revenue[r.k_currency] ?? 0) + Number(r.n_amount);
      }
    }
    return [...links.values()]
      .sort((a, b) => b.sales - a.sales || b.leads - a.leads || a.domain.localeCompare(b.domain) || a.code.localeCompare(b.code))
      .slice(0, positive(limit));
  }

  async series(scope: LinkScope, range: RangeQuery): Promise<SeriesResult> {
    return this.seriesWhere(this.linkWhere(scope), range);
  }

  async tenantSeries(tenantId: string, domain: string | null, range: RangeQuery): Promise<SeriesResult> {
    return this.seriesWhere(`tenant_id = ${sqlString(tenantOf(tenantId))}${domain === null ? '' : ` AND domain = ${sqlString(domain)}`}`, range);
  }

  /** A series and its totals over the rows `scope` (a SQL condition) selects. */
  private async seriesWhere(scope: string, range: RangeQuery): Promise<SeriesResult> {
    const where = `${scope} AND ${timeWhere(range)}`;
    const table = `${this.db}.link_${granularity(range.granularity)}`;
    // Aliases differ from every column (ts, n_*): 18.16 lets SELECT aliases leak into WHERE and
    // into other expressions, so `... AS t` would turn the filter into a number comparison.
    const [series, totals, bots] = await this.read(() =>
      Promise.all([
        this.executor.queryJsonEachRow<{ ts: Int64; n_clicks: Int64; n_visitors: Int64 }>(
          `SELECT toUnixTimestamp(t) AS ts, sumMerge(clicks) AS n_clicks, uniqCombinedMerge(visitors) AS n_visitors FROM ${table} WHERE ${where} AND ${botWhere(range)} GROUP BY ts ORDER BY ts`,
        ),
        // One HLL union over the whole range: a visitor seen in several buckets counts once.
        this.executor.queryJsonEachRow<{ n_clicks: Int64; n_visitors: Int64 }>(
          `SELECT sumMerge(clicks) AS n_clicks, uniqCombinedMerge(visitors) AS n_visitors FROM ${table} WHERE ${where} AND ${botWhere(range)}`,
        ),
        this.executor.queryJsonEachRow<{ ts: Int64; n_clicks: Int64 }>(
          `SELECT toUnixTimestamp(t) AS ts, sumMerge(clicks) AS n_clicks FROM ${table} WHERE ${where} AND bot = 1 GROUP BY ts ORDER BY ts`,
        ),
      ]),
    );
    const points = new Map<number, { clicks: number; visitors: number; botClicks: number }>();
    for (const r of series) points.set(Number(r.ts), { clicks: Number(r.n_clicks), visitors: Number(r.n_visitors), botClicks: 0 });
    let botClicks = 0;
    for (const r of bots) {
      const time = Number(r.ts);
      const n = Number(r.n_clicks);
      botClicks += n;
      const p = points.get(time);
      if (p) p.botClicks = n;
      else points.set(time, { clicks: 0, visitors: 0, botClicks: n });
    }
    const out: SeriesPoint[] = [...points].sort((a, b) => a[0] - b[0]).map(([time, p]) => ({ time, ...p }));
    // An aggregate without GROUP BY yields one row (zeros) even when nothing matches.
    return { series: out, totals: { clicks: Number(totals[0]?.n_clicks ?? 0), visitors: Number(totals[0]?.n_visitors ?? 0), botClicks } };
  }

  async breakdown(scope: LinkScope, range: RangeQuery, dimension: Dimension, limit: number): Promise<BreakdownRow[]> {
    return this.breakdownWhere(this.linkWhere(scope), range, dimension, limit);
  }

  private async breakdownWhere(scope: string, range: RangeQuery, dimension: Dimension, limit: number): Promise<BreakdownRow[]> {
    const rows = await this.read(() =>
      this.executor.queryJsonEachRow<{ value: string; n_clicks: Int64; n_visitors: Int64 }>(
        `SELECT value, sumMerge(clicks) AS n_clicks, uniqCombinedMerge(visitors) AS n_visitors FROM ${this.db}.dim_${granularity(range.granularity)}` +
          ` WHERE ${scope} AND dim = ${DIMENSION_ID[dimension]} AND ${timeWhere(range)} AND ${botWhere(range)}` +
          ` GROUP BY value ORDER BY n_clicks DESC, value LIMIT ${sqlNumber(positive(limit))}`,
      ),
    );
    return rows.map((r) => ({ value: r.value, clicks: Number(r.n_clicks), visitors: Number(r.n_visitors) }));
  }

  async topLinks(
    tenantId: string,
    domain: string | null,
    range: RangeQuery,
    limit: number,
    among?: readonly Omit<LinkScope, 'tenantId'>[],
  ): Promise<TopLinkRow[]> {
    if (among?.length === 0) return [];
    const onlyThese = among ? ` AND (domain, code) IN (${among.map((l) => `(${sqlString(l.domain)}, ${sqlString(l.code)})`).join(', ')})` : '';
    const rows = await this.read(() =>
      this.executor.queryJsonEachRow<{ domain: string; code: string; n_clicks: Int64; n_visitors: Int64 }>(
        `SELECT domain, code, sumMerge(clicks) AS n_clicks, uniqCombinedMerge(visitors) AS n_visitors FROM ${this.db}.link_${granularity(range.granularity)}` +
          ` WHERE tenant_id = ${sqlString(tenantOf(tenantId))}${domain === null ? '' : ` AND domain = ${sqlString(domain)}`}${onlyThese} AND ${timeWhere(range)} AND ${botWhere(range)}` +
          ` GROUP BY domain, code ORDER BY n_clicks DESC, domain, code LIMIT ${sqlNumber(positive(limit))}`,
      ),
    );
    return rows.map((r) => ({ domain: r.domain, code: r.code, clicks: Number(r.n_clicks), visitors: Number(r.n_visitors) }));
  }

  async orphans(q: OrphanQuery): Promise<OrphanResult> {
    const table = `${this.db}.link_${granularity(q.granularity)}`;
    if (q.domains.length === 0) return { series: [], codes: [], totals: { visits: 0, visitors: 0 } };
    // Orphan visits belong to no tenant (tenant_id ''); the caller names the domains it may see.
    const where = `tenant_id = '' AND domain IN (${q.domains.map(sqlString).join(', ')}) AND ${timeWhere(q)} AND ${botWhere(q)}`;
    const [series, codes, totals] = await this.read(() =>
      Promise.all([
        this.executor.queryJsonEachRow<{ ts: Int64; domain: string; n_visits: Int64; n_visitors: Int64 }>(
          `SELECT toUnixTimestamp(t) AS ts, domain, sumMerge(clicks) AS n_visits, uniqCombinedMerge(visitors) AS n_visitors FROM ${table} WHERE ${where} GROUP BY ts, domain ORDER BY ts, domain`,
        ),
        this.executor.queryJsonEachRow<{ domain: string; code: string; n_visits: Int64 }>(
          `SELECT domain, code, sumMerge(clicks) AS n_visits FROM ${table} WHERE ${where} GROUP BY domain, code ORDER BY n_visits DESC, domain, code LIMIT ${sqlNumber(positive(q.limit))}`,
        ),
        this.executor.queryJsonEachRow<{ n_visits: Int64; n_visitors: Int64 }>(
          `SELECT sumMerge(clicks) AS n_visits, uniqCombinedMerge(visitors) AS n_visitors FROM ${table} WHERE ${where}`,
        ),
      ]),
    );
    return {
      series: series.map((r) => ({ time: Number(r.ts), domain: r.domain, visits: Number(r.n_visits), visitors: Number(r.n_visitors) })),
      codes: codes.map((r) => ({ domain: r.domain, code: r.code, visits: Number(r.n_visits) })),
      totals: { visits: Number(totals[0]?.n_visits ?? 0), visitors: Number(totals[0]?.n_visitors ?? 0) },
    };
  }

  async visits(q: VisitQuery): Promise<VisitRow[]> {
    const limit = positive(q.limit);
    // Orphan visits belong to no tenant (''): only with the domain they were made on.
    const tenant = q.tenantId === '' && q.domain !== undefined ? '' : tenantOf(q.tenantId);
    const filters = [`tenant_id = ${sqlString(tenant)}`];
    if (q.domain !== undefined) filters.push(`domain = ${sqlString(q.domain)}`);
    if (q.code !== undefined) {
      if (q.domain === undefined) throw new TypeError('a visits query for one code names its domain');
      filters.push(`code = ${sqlString(q.code)}`);
    }
    if (q.links !== undefined) {
      if (q.links.length === 0) return [];
      filters.push(`(domain, code) IN (${q.links.map((l) => `(${sqlString(l.domain)}, ${sqlString(l.code)})`).join(', ')})`);
    }
    filters.push(q.bots === 'include' ? 'bot IN (0, 1)' : q.bots === 'only' ? 'bot = 1' : 'bot = 0');
    let upper = clampEpoch(Math.ceil(q.to));
    if (q.after) {
      const second = Math.floor(q.after.time / 1000);
      const ms = q.after.time - second * 1000;
      upper = Math.min(upper, second + 1);
      filters.push(
        `(t < ${sqlDateTime(second)} OR (t = ${sqlDateTime(second)} AND (ms < ${sqlNumber(ms)} OR (ms = ${sqlNumber(ms)} AND visit_id < ${sqlUInt(q.after.id)}))))`,
      );
    }
    const from = clampEpoch(Math.ceil(q.from));
    const out: VisitRow[] = [];
    let span = VISIT_WINDOW_FIRST_SECONDS;
    while (upper > from && out.length < limit) {
      const lower = Math.max(from, upper - span);
      const rows = await this.read(() =>
        this.executor.queryJsonEachRow<VisitOutput>(
          `SELECT toUnixTimestamp(t) AS ts, ms, visit_id, tenant_id, domain, code, link_id, country, region, city, referer, device, browser, os, variant,` +
            ` visit_source, bot, visitor, producer, seq FROM ${this.db}.visits WHERE ${filters.join(' AND ')}` +
            ` AND t >= ${sqlDateTime(lower)} AND t < ${sqlDateTime(upper)} ORDER BY t DESC, ms DESC, visit_id DESC LIMIT ${sqlNumber(limit - out.length)}`,
        ),
      );
      for (const r of rows) out.push(fromVisitOutput(r));
      upper = lower;
      span *= VISIT_WINDOW_GROWTH;
    }
    return out;
  }

  async deleteVisits(target: VisitDeletion): Promise<number> {
    let where: string;
    if (target.kind === 'link') {
      where = this.linkWhere(target);
    } else {
      if (target.domains.length === 0) return 0;
      where = `tenant_id = '' AND domain IN (${target.domains.map(sqlString).join(', ')})`;
    }
    const [counted] = await this.read(() => this.executor.queryJsonEachRow<{ n: Int64 }>(`SELECT count() AS n FROM ${this.db}.visits WHERE ${where}`));
    // A mutation per table (18.16 and chdb alike), the raw visits last: a failure midway leaves the
    // visits listed, and a retry deletes what is left.
    for (const table of DELETED_FROM) await this.read(() => this.executor.command(`ALTER TABLE ${this.db}.${table} DELETE WHERE ${where}`));
    return Number(counted?.n ?? 0);
  }

  async dropExpired(nowEpochSeconds: number, retention: Retention): Promise<string[]> {
    const dropped: string[] = [];
    for (const { table, unit, keep } of RETAINED) {
      const days = keep(retention);
      if (days <= 0) continue;
      const cutoff = nowEpochSeconds - days * DAY;
      const parts = await this.executor.queryJsonEachRow<{ partition: string }>(
        `SELECT DISTINCT partition FROM system.parts WHERE database = ${sqlString(this.db)} AND table = ${sqlString(table)} AND active`,
      );
      for (const { partition } of parts) {
        const end = partitionEnd(String(partition), unit);
        if (end === null || end > cutoff) continue;
        await this.executor.command(`ALTER TABLE ${this.db}.${table} DROP PARTITION ${partition}`);
        dropped.push(`${table}:${partition}`);
      }
    }
    return dropped;
  }

  async ping(): Promise<void> {
    await this.executor.ping();
  }

  async close(): Promise<void> {
    await this.executor.close();
  }

  private linkWhere(scope: LinkScope): string {
    return `tenant_id = ${sqlString(tenantOf(scope.tenantId))} AND domain = ${sqlString(scope.domain)} AND code = ${sqlString(scope.code)}`;
  }

  /** A link, a domain of the tenant or all its links: a prefix of every table's sorting key. */
  private scopeWhere(scope: ConversionScope): string {
    if (scope.code !== undefined) {
      if (scope.domain === null) throw new TypeError('a scope of one code names its domain');
      return this.linkWhere({ tenantId: scope.tenantId, domain: scope.domain, code: scope.code });
    }
    return `tenant_id = ${sqlString(tenantOf(scope.tenantId))}${scope.domain === null ? '' : ` AND domain = ${sqlString(scope.domain)}`}`;
  }

  /** A read the server cannot answer (down, unreachable) is 503 DEPENDENCY_UNAVAILABLE, not a 500. */
  private async read<T>(query: () => Promise<T>): Promise<T> {
    try {
      return await query();
    } catch (error) {
      if (error instanceof OlapError && error.clickhouseCode === undefined) {
        throw new DomainError(
          ErrorCode.DEPENDENCY_UNAVAILABLE,
          'the analytics store is unavailable; retry shortly',
          { retryAfterSeconds: 5 },
          { cause: error },
        );
      }
      throw error;
    }
  }
}

const granularity = (g: Granularity): Granularity => {
  if (g !== 'minute' && g !== 'hour' && g !== 'day') throw new TypeError(`unknown granularity ${String(g)}`);
  return g;
};

/** '' is the orphans' tenant: a tenant query must never select it. */
function tenantOf(tenantId: string): string {
  if (typeof tenantId !== 'string' || tenantId === '') throw new TypeError('a tenant id is required');
  return tenantId;
}

function positive(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError(`limit must be a positive integer, got ${String(limit)}`);
  return limit;
}

function timeWhere(range: RangeQuery): string {
  return `t >= ${sqlDateTime(clampEpoch(Math.ceil(range.from)))} AND t < ${sqlDateTime(clampEpoch(Math.ceil(range.to)))}`;
}

function botWhere(range: RangeQuery): string {
  return range.bots === 'include' ? 'bot IN (0, 1)' : range.bots === 'only' ? 'bot = 1' : 'bot = 0';
}

/** Epoch seconds at which a partition's period ends (YYYYMMDD, YYYYMM, YYYY), or null for a name it does not know. */
export function partitionEnd(partition: string, unit: 'day' | 'month' | 'year'): number | null {
  const m = /^(\d{4})(\d{2})?(\d{2})?$/.exec(partition);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2] ?? 1), Number(m[3] ?? 1)];
  if (unit === 'day' && m[3]) return Date.UTC(y, mo - 1, d + 1) / 1000;
  if (unit === 'month' && m[2] && !m[3]) return Date.UTC(y, mo, 1) / 1000;
  if (unit === 'year' && !m[2]) return Date.UTC(y + 1, 0, 1) / 1000;
  return null;
}

/** The bits of the tables named; all of them when none are. */
function targetBits(targets: readonly string[] | undefined): number {
  if (targets === undefined) return ALL_TARGETS;
  let bits = 0;
  for (const t of targets) {
    const bit = TARGET_BIT[t as ClickTarget];
    if (bit === undefined) throw new TypeError(`unknown target table ${JSON.stringify(t)}`);
    bits |= bit;
  }
  return bits;
}

/** Midnight (UTC) of the day of an instant, epoch seconds. */

/** A visit as the visits table gives it back (64-bit integers as decimal strings). */
interface VisitOutput {
  ts: Int64;
  ms: number;
  visit_id: Int64;
  tenant_id: string;
  domain: string;
  code: string;
  link_id: string;
  country: string;
  region: string;
  city: string;
  referer: string;
  device: string;
  browser: string;
  os: string;
  variant: string;
  visit_source: string;
  bot: number;
  visitor: Int64;
  producer: string;
  seq: Int64;
}

const orNull = (s: string): string | null => (s === '' ? null : s);

function fromVisitOutput(r: VisitOutput): VisitRow {
  return {
    id: String(r.visit_id),
    time: Number(r.ts) * 1000 + Number(r.ms),
    tenantId: r.tenant_id,
    domain: r.domain,
    code: r.code,
    linkId: r.link_id,
    country: orNull(r.country),
    region: orNull(r.region),
    city: orNull(r.city),
    refererHost: orNull(r.referer),
    device: r.device,
    browser: r.browser,
    os: r.os,
    variant: r.variant === '' ? null : Number(r.variant),
    source: r.visit_source as VisitRow['source'],
    bot: Number(r.bot) === 1,
    visitor: Number(r.visitor),
    producer: r.producer,
    seq: Number(r.seq),
  };
}

function toProgressRow(p: ConsumerProgress): InputRow {
  assertProgress(p);
  return { kind: ROW_KIND.progress, targets: 0, source: p.source, source_partition: p.partition, last_offset: p.lastOffset };
}

function toMarkRow(m: ProducerMark, day: number): InputRow {
  assertUInt(m.partition, 'partition', 0xffff_ffff, 'ProducerMark');
  assertUInt(m.lastSeq, 'lastSeq', Number.MAX_SAFE_INTEGER, 'ProducerMark');
  if (typeof m.source !== 'string' || m.source === '' || typeof m.producer !== 'string')
    throw new TypeError('ProducerMark.source and producer must be strings');
  return { kind: ROW_KIND.mark, targets: 0, minute: day, source: m.source, source_partition: m.partition, producer: m.producer, last_seq: m.lastSeq };
}

/** Clicks looked up per query by clickDimensions (each a condition of the WHERE). */
const LOOKUP_CHUNK = 200;

/** A click's dimensions as the visits and conversions tables give them back. */
interface DimensionOutput {
  click_id: string;
  country: string;
  region: string;
  city: string;
  referer: string;
  device: string;
  browser: string;
  os: string;
  variant: string;
  visit_source: string;
}

function dimensionsOf(r: DimensionOutput): ConversionDimensions {
  return {
    country: r.country,
    region: r.region,
    city: r.city,
    referer: r.referer,
    device: r.device,
    browser: r.browser,
    os: r.os,
    variant: r.variant,
    source: r.visit_source,
  };
}

/** The columns a conversion row keeps of its click (migration 0007). */
function dimensionColumns(clickId: string, d: ConversionDimensions): Record<string, string> {
  return {
    click_id: clickId,
    country: d.country,
    region: d.region,
    city: d.city,
    referer: d.referer,
    device: d.device,
    browser: d.browser,
    os: d.os,
    variant: d.variant,
    visit_source: d.source,
  };
}

/**
 * A conversion row's value of a dimension, the same text as the clicks' dim_* tables keep (the
 * breakdowns join on it): a city as cityValueOf writes it, '' when its country or city is unknown.
 */
const CONVERSION_VALUE_OF: Readonly<Record<Dimension, string>> = {
  countries: 'country',
  referers: 'referer',
  devices: 'device',
  browsers: 'browser',
  os: 'os',
  variants: 'variant',
  sources: 'visit_source',
  cities:
    `if(country = '' OR city = '', '', concat(country, '\\t', replaceRegexpAll(region, '[\\t\\r\\n]', ' '), '\\t', ` +
    `replaceRegexpAll(city, '[\\t\\r\\n]', ' ')))`,
};

function conversionTimeWhere(range: Pick<RangeQuery, 'from' | 'to'>): string {
  return `at >= ${sqlDateTime(clampEpoch(Math.floor(range.from)))} AND at < ${sqlDateTime(clampEpoch(Math.ceil(range.to)))}`;
}

/** Adds a row of (kind, currency, count, sum) to a total: kind 1 leads, 2 sales with their revenue. */
function addCounts(
  into: { leads: number; sales: number; revenue: Record<string, number> },
  r: { k_kind: Int64; k_currency: string; n_events: Int64; n_amount: Int64 },
): void {
  if (Number(r.k_kind) === 1) into.leads += Number(r.n_events);
  else {
    into.sales += Number(r.n_events);
    into.revenue[r.k_currency] = (into.revenue[r.k_currency] ?? 0) + Number(r.n_amount);
  }
}

/** DateTime holds 1970..2106; a bound outside it means "from the start" / "to the end". NaN stays NaN (refused). */
function clampEpoch(seconds: number): number {
  return Math.min(Math.max(seconds, 0), 0xffff_ffff);
}
