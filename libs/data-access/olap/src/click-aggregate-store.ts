import type { ClickAggregateStore, ConsumerProgress, LinkStats, MinuteVisitorRow, StatsQuery } from '@shortlink/clicks-domain';
import { CLICK_MIGRATIONS, OlapMigration, ROW_KIND, runOlapMigrations } from './migrations';
import { OlapExecutor } from './olap-executor';
import { sqlDateTime, sqlIdentifier, sqlString } from './sql-literals';

const UINT64_MAX = 0xffff_ffff_ffff_ffffn;

/** JSONEachRow as both engines accept it for clicks_input: every column in every row. */
interface InputRow {
  kind: number;
  tenant_id: string;
  domain: string;
  code: string;
  /** Epoch seconds: a JSON number reads as a unix time into DateTime on 18.16 and on chdb. */
  minute: number;
  visitor: number;
  clicks: number;
  source: string;
  source_partition: number;
  /** Decimal string: both engines read a quoted UInt64, and it keeps offsets past 2^53 exact. */
  last_offset: string;
}

/** 64-bit results arrive as decimal strings (quoted on both engines); UInt32 as numbers. */
type Int64 = string | number;

/**
 * ClickAggregateStore over SQL that runs unchanged on ClickHouse 18.16 and on chdb; the engine
 * is the executor's business. Rows go into a Null table whose materialized view folds them into
 * an AggregatingMergeTree (sum of clicks, HLL of visitors, max source offset) per
 * link, minute and source partition; reads merge the states.
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

  async write(rows: readonly MinuteVisitorRow[], progress?: ConsumerProgress): Promise<void> {
    const input = rows.map(toInputRow);
    if (progress) input.push(toProgressRow(progress));
    if (input.length === 0) return;
    await this.executor.insertJsonEachRow(`${this.db}.clicks_input`, input);
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

  async stats(q: StatsQuery): Promise<LinkStats> {
    const where =
      `tenant_id = ${sqlString(q.tenantId)} AND domain = ${sqlString(q.domain)} AND code = ${sqlString(q.code)}` +
      ` AND minute >= ${sqlDateTime(clampEpoch(Math.ceil(q.from)))} AND minute < ${sqlDateTime(clampEpoch(Math.ceil(q.to)))}`;
    // Aliases differ from every column (ts, n_*): 18.16 lets SELECT aliases leak into WHERE and
    // into other expressions, so `... AS minute` would turn the filter into a number comparison.
    const [series, totals] = await Promise.all([
      this.executor.queryJsonEachRow<{ ts: Int64; n_clicks: Int64; n_visitors: Int64 }>(
        `SELECT toUnixTimestamp(minute) AS ts, sumMerge(clicks) AS n_clicks, uniqCombinedMerge(visitors) AS n_visitors` +
          ` FROM ${this.db}.clicks_minute WHERE ${where} GROUP BY ts ORDER BY ts`,
      ),
      // One HLL union over the whole range: a visitor seen in several minutes counts once.
      this.executor.queryJsonEachRow<{ n_clicks: Int64; n_visitors: Int64 }>(
        `SELECT sumMerge(clicks) AS n_clicks, uniqCombinedMerge(visitors) AS n_visitors` +
          ` FROM ${this.db}.clicks_minute WHERE ${where}`,
      ),
    ]);
    return {
      series: series.map((r) => ({ minute: Number(r.ts), clicks: Number(r.n_clicks), visitors: Number(r.n_visitors) })),
      // An aggregate without GROUP BY yields one row (zeros) even when nothing matches.
      totals: { clicks: Number(totals[0]?.n_clicks ?? 0), visitors: Number(totals[0]?.n_visitors ?? 0) },
    };
  }

  async ping(): Promise<void> {
    await this.executor.ping();
  }

  async close(): Promise<void> {
    await this.executor.close();
  }
}

function toInputRow(r: MinuteVisitorRow): InputRow {
  assertUInt(r.minute, 'minute', 0xffff_ffff);
  assertUInt(r.visitor, 'visitor');
  assertUInt(r.clicks, 'clicks');
  for (const key of ['tenantId', 'domain', 'code'] as const) {
    if (typeof r[key] !== 'string') throw new TypeError(`MinuteVisitorRow.${key} must be a string`);
  }
  return { kind: ROW_KIND.aggregate, tenant_id: r.tenantId, domain: r.domain, code: r.code, minute: r.minute, visitor: r.visitor, clicks: r.clicks, source: '', source_partition: 0, last_offset: '0' };
}

function toProgressRow(p: ConsumerProgress): InputRow {
  assertUInt(p.partition, 'partition', 0xffff_ffff, 'ConsumerProgress');
  if (typeof p.lastOffset !== 'string' || !/^[0-9]+$/.test(p.lastOffset) || BigInt(p.lastOffset) > UINT64_MAX) {
    throw new TypeError(`ConsumerProgress.lastOffset must be a non-negative decimal integer string, got ${JSON.stringify(p.lastOffset)}`);
  }
  if (typeof p.source !== 'string' || p.source === '') throw new TypeError('ConsumerProgress.source must be a non-empty string');
  return { kind: ROW_KIND.progress, tenant_id: '', domain: '', code: '', minute: 0, visitor: 0, clicks: 0, source: p.source, source_partition: p.partition, last_offset: p.lastOffset };
}

/** DateTime holds 1970..2106; a bound outside it means "from the start" / "to the end". NaN stays NaN (refused). */
function clampEpoch(seconds: number): number {
  return Math.min(Math.max(seconds, 0), 0xffff_ffff);
}

function assertUInt(value: number, field: string, max = Number.MAX_SAFE_INTEGER, type = 'MinuteVisitorRow'): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > max) {
    throw new TypeError(`${type}.${field} must be an integer in [0, ${max}], got ${String(value)}`);
  }
}
