import { OlapError, OlapExecutor } from './olap-executor';
import { sqlDateTime, sqlIdentifier, sqlString } from './sql-literals';

/**
 * One schema step. Numbered names sort in the order they run; a released migration is never
 * edited, a change is a new entry at the end. Statements must run on ClickHouse 18.16 and on chdb
 * (new MergeTree syntax; no TTL, CODEC, LowCardinality, SimpleAggregateFunction, Map, query
 * params) and be safe to run again (IF NOT EXISTS): two processes may migrate at once, and a
 * crash can land between a step's statements and its `_migrations` row.
 */
export interface OlapMigration {
  readonly name: string;
  statements(database: string): readonly string[];
}

export const CLICK_MIGRATIONS: readonly OlapMigration[] = [
  {
    name: '0001_clicks_minute',
    statements: (db) => [
      // Rows as the consumer writes them: one per link, minute and visitor. Null keeps nothing;
      // the view below folds each insert into the aggregate table.
      `CREATE TABLE IF NOT EXISTS ${db}.clicks_minute_input (
        tenant_id String,
        domain String,
        code String,
        minute DateTime('UTC'),
        visitor UInt64,
        clicks UInt64,
        source_partition UInt32,
        source_offset UInt64
      ) ENGINE = Null`,
      `CREATE TABLE IF NOT EXISTS ${db}.clicks_minute (
        tenant_id String,
        domain String,
        code String,
        minute DateTime('UTC'),
        source_partition UInt32,
        clicks AggregateFunction(sum, UInt64),
        visitors AggregateFunction(uniqCombined, UInt64),
        max_offset AggregateFunction(max, UInt64)
      ) ENGINE = AggregatingMergeTree()
      PARTITION BY toYYYYMM(minute)
      ORDER BY (tenant_id, domain, code, minute, source_partition)`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.clicks_minute_mv TO ${db}.clicks_minute AS
      SELECT
        tenant_id, domain, code, minute, source_partition,
        sumState(clicks) AS clicks,
        uniqCombinedState(visitor) AS visitors,
        maxState(source_offset) AS max_offset
      FROM ${db}.clicks_minute_input
      GROUP BY tenant_id, domain, code, minute, source_partition`,
    ],
  },
  {
    // Progress moves out of the aggregates into its own table, kept per source: offsets of a new
    // in-process log start at 0 again and must not read as a replay of an earlier one. Rows and
    // progress still arrive in ONE insert (into a Null table; a view routes each kind), so a
    // consumer that crashes leaves both or neither.
    name: '0002_consumer_progress',
    statements: (db) => [
      `CREATE TABLE IF NOT EXISTS ${db}.clicks_input (
        kind UInt8,
        tenant_id String,
        domain String,
        code String,
        minute DateTime('UTC'),
        visitor UInt64,
        clicks UInt64,
        source String,
        source_partition UInt32,
        last_offset UInt64
      ) ENGINE = Null`,
      `CREATE TABLE IF NOT EXISTS ${db}.consumer_progress (
        source String,
        source_partition UInt32,
        last_offset AggregateFunction(max, UInt64)
      ) ENGINE = AggregatingMergeTree()
      ORDER BY (source, source_partition)`,
      // New aggregate rows carry no offset (source_partition 0, max_offset 0; 18.16 wants every
      // column of the target): only rows written before this migration still say how far a Kafka
      // topic was read.
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.clicks_minute_from_input TO ${db}.clicks_minute AS
      SELECT
        tenant_id, domain, code, minute, toUInt32(0) AS source_partition,
        sumState(clicks) AS clicks,
        uniqCombinedState(visitor) AS visitors,
        maxState(toUInt64(0)) AS max_offset
      FROM ${db}.clicks_input
      WHERE kind = ${ROW_KIND.aggregate}
      GROUP BY tenant_id, domain, code, minute`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.consumer_progress_from_input TO ${db}.consumer_progress AS
      SELECT source, source_partition, maxState(last_offset) AS last_offset
      FROM ${db}.clicks_input
      WHERE kind = ${ROW_KIND.progress}
      GROUP BY source, source_partition`,
      `DROP TABLE IF EXISTS ${db}.clicks_minute_mv`,
      `DROP TABLE IF EXISTS ${db}.clicks_minute_input`,
    ],
  },
  {
    // docs/analytics.md: bots apart, breakdowns, hour and day rollups, orphan visits,
    // producer marks for event-id de-duplication, and retention by dropping partitions. One Null
    // table takes each insert (aggregate rows, the progress row, the producers' marks); a view per
    // target table folds it. Minute tables are partitioned by day, hour tables by month, day tables
    // by year, so old data leaves with ALTER TABLE ... DROP PARTITION on 18.16 and chdb alike.
    name: '0003_rollups_dimensions_marks',
    statements: (db) => [
      `CREATE TABLE IF NOT EXISTS ${db}.events_input (
        kind UInt8,
        tenant_id String,
        domain String,
        code String,
        minute DateTime('UTC'),
        bot UInt8,
        visitor UInt64,
        clicks UInt64,
        dims Array(UInt8),
        dim_values Array(String),
        dim_clicks Array(UInt64),
        source String,
        source_partition UInt32,
        last_offset UInt64,
        producer String,
        last_seq UInt64
      ) ENGINE = Null`,
      ...(['minute', 'hour', 'day'] as const).flatMap((g) => [
        `CREATE TABLE IF NOT EXISTS ${db}.link_${g} (
          tenant_id String,
          domain String,
          code String,
          t DateTime('UTC'),
          bot UInt8,
          clicks AggregateFunction(sum, UInt64),
          visitors AggregateFunction(uniqCombined, UInt64)
        ) ENGINE = AggregatingMergeTree()
        PARTITION BY ${PARTITION_OF[g]}
        ORDER BY (tenant_id, domain, code, t, bot)`,
        `CREATE TABLE IF NOT EXISTS ${db}.dim_${g} (
          tenant_id String,
          domain String,
          code String,
          dim UInt8,
          t DateTime('UTC'),
          bot UInt8,
          value String,
          clicks AggregateFunction(sum, UInt64),
          visitors AggregateFunction(uniqCombined, UInt64)
        ) ENGINE = AggregatingMergeTree()
        PARTITION BY ${PARTITION_OF[g]}
        ORDER BY (tenant_id, domain, code, dim, t, bot, value)`,
        `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.link_${g}_mv TO ${db}.link_${g} AS
        SELECT tenant_id, domain, code, ${BUCKET_OF[g]} AS t, bot, sumState(clicks) AS clicks, uniqCombinedState(visitor) AS visitors
        FROM ${db}.events_input
        WHERE kind = ${ROW_KIND.aggregate}
        GROUP BY tenant_id, domain, code, t, bot`,
        `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.dim_${g}_mv TO ${db}.dim_${g} AS
        SELECT tenant_id, domain, code, dim, ${BUCKET_OF[g]} AS t, bot, value, sumState(dim_click) AS clicks, uniqCombinedState(visitor) AS visitors
        FROM ${db}.events_input
        ARRAY JOIN dims AS dim, dim_values AS value, dim_clicks AS dim_click
        WHERE kind = ${ROW_KIND.aggregate}
        GROUP BY tenant_id, domain, code, dim, t, bot, value`,
      ]),
      `CREATE TABLE IF NOT EXISTS ${db}.producer_marks (
        source String,
        source_partition UInt32,
        producer String,
        day Date,
        last_seq AggregateFunction(max, UInt64)
      ) ENGINE = AggregatingMergeTree()
      PARTITION BY toYYYYMM(day)
      ORDER BY (source, source_partition, producer, day)`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.consumer_progress_from_events TO ${db}.consumer_progress AS
      SELECT source, source_partition, maxState(last_offset) AS last_offset
      FROM ${db}.events_input
      WHERE kind = ${ROW_KIND.progress}
      GROUP BY source, source_partition`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.producer_marks_from_events TO ${db}.producer_marks AS
      SELECT source, source_partition, producer, toDate(minute) AS day, maxState(last_seq) AS last_seq
      FROM ${db}.events_input
      WHERE kind = ${ROW_KIND.mark}
      GROUP BY source, source_partition, producer, day`,
      // Aggregates of the earlier schema become human clicks of the new tables, once (a second run
      // finds link_minute filled and copies nothing).
      `INSERT INTO ${db}.link_minute SELECT tenant_id, domain, code, minute, toUInt8(0), clicks, visitors FROM ${db}.clicks_minute
      WHERE (SELECT count() FROM ${db}.link_minute) = 0`,
      ...(['hour', 'day'] as const).map(
        (
          g,
        ) => `INSERT INTO ${db}.link_${g} SELECT tenant_id, domain, code, ${BUCKET_OF[g].replace('minute', 'm')} AS t, toUInt8(0) AS bot, sumMergeState(clicks) AS clicks, uniqCombinedMergeState(visitors) AS visitors
        FROM (SELECT tenant_id, domain, code, minute AS m, clicks, visitors FROM ${db}.clicks_minute WHERE (SELECT count() FROM ${db}.link_${g}) = 0)
        GROUP BY tenant_id, domain, code, t`,
      ),
      `DROP TABLE IF EXISTS ${db}.clicks_minute_from_input`,
      `DROP TABLE IF EXISTS ${db}.consumer_progress_from_input`,
      `DROP TABLE IF EXISTS ${db}.clicks_input`,
    ],
  },
  {
    // docs/analytics.md, "Raw visits" and "Exactly once": the raw visits, one row
    // per click, and a ledger in every table. Each table keeps, per source, partition and UTC day,
    // the last offset it received, in ledger rows of tenant LEDGER_TENANT written by the same insert
    // into the same partition as that day's rows: one part holds both, so a server killed mid-insert
    // leaves a table with a day's rows and their ledger entry, or neither. The consumer reads the
    // ledgers and writes each table only what it lacks; `targets` (a bit per table) routes a row to
    // the tables it is for. A new Null table and new views replace events_input and its views (a Null
    // table's columns are altered by no migration, and each view must name every column of its target).
    name: '0004_visits_and_ledgers',
    statements: (db) => [
      `CREATE TABLE IF NOT EXISTS ${db}.visits (
        tenant_id String,
        domain String,
        code String,
        t DateTime('UTC'),
        ms UInt16,
        visit_id UInt64,
        link_id String,
        country String,
        region String,
        city String,
        referer String,
        device String,
        browser String,
        os String,
        variant String,
        visit_source String,
        bot UInt8,
        visitor UInt64,
        producer String,
        seq UInt64,
        ledger_offset UInt64
      ) ENGINE = MergeTree()
      PARTITION BY toYYYYMMDD(t)
      ORDER BY (tenant_id, domain, code, t, ms, visit_id)`,
      ...(['minute', 'hour', 'day'] as const).flatMap((g) => [
        `ALTER TABLE ${db}.link_${g} ADD COLUMN ledger_offset AggregateFunction(max, UInt64)`,
        `ALTER TABLE ${db}.dim_${g} ADD COLUMN ledger_offset AggregateFunction(max, UInt64)`,
      ]),
      `CREATE TABLE IF NOT EXISTS ${db}.clicks_input (
        kind UInt8,
        targets UInt16,
        tenant_id String,
        domain String,
        code String,
        minute DateTime('UTC'),
        bot UInt8,
        visitor UInt64,
        clicks UInt64,
        dims Array(UInt8),
        dim_values Array(String),
        dim_clicks Array(UInt64),
        source String,
        source_partition UInt32,
        last_offset UInt64,
        producer String,
        last_seq UInt64,
        at DateTime('UTC'),
        at_ms UInt16,
        visit_id UInt64,
        link_id String,
        country String,
        region String,
        city String,
        referer String,
        device String,
        browser String,
        os String,
        variant String,
        visit_source String,
        seq UInt64
      ) ENGINE = Null`,
      ...(['minute', 'hour', 'day'] as const).flatMap((g) => [
        `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.link_${g}_from_clicks TO ${db}.link_${g} AS
        SELECT tenant_id, domain, code, ${BUCKET_OF[g]} AS t, bot, sumState(clicks) AS clicks, uniqCombinedState(visitor) AS visitors, maxState(last_offset) AS ledger_offset
        FROM ${db}.clicks_input
        WHERE kind IN (${ROW_KIND.aggregate}, ${ROW_KIND.ledger}) AND bitAnd(targets, ${TARGET_BIT[`link_${g}`]}) != 0
        GROUP BY tenant_id, domain, code, t, bot`,
        `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.dim_${g}_from_clicks TO ${db}.dim_${g} AS
        SELECT tenant_id, domain, code, dim, ${BUCKET_OF[g]} AS t, bot, value, sumState(dim_click) AS clicks, uniqCombinedState(visitor) AS visitors,
          maxState(last_offset) AS ledger_offset
        FROM ${db}.clicks_input
        ARRAY JOIN dims AS dim, dim_values AS value, dim_clicks AS dim_click
        WHERE kind IN (${ROW_KIND.aggregate}, ${ROW_KIND.ledger}) AND bitAnd(targets, ${TARGET_BIT[`dim_${g}`]}) != 0
        GROUP BY tenant_id, domain, code, dim, t, bot, value`,
      ]),
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.visits_from_clicks TO ${db}.visits AS
      SELECT tenant_id, domain, code, at AS t, at_ms AS ms, visit_id, link_id, country, region, city, referer, device, browser, os, variant, visit_source,
        bot, visitor, producer, seq, last_offset AS ledger_offset
      FROM ${db}.clicks_input
      WHERE kind IN (${ROW_KIND.visit}, ${ROW_KIND.ledger}) AND bitAnd(targets, ${TARGET_BIT.visits}) != 0`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.consumer_progress_from_clicks TO ${db}.consumer_progress AS
      SELECT source, source_partition, maxState(last_offset) AS last_offset
      FROM ${db}.clicks_input
      WHERE kind = ${ROW_KIND.progress}
      GROUP BY source, source_partition`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.producer_marks_from_clicks TO ${db}.producer_marks AS
      SELECT source, source_partition, producer, toDate(minute) AS day, maxState(last_seq) AS last_seq
      FROM ${db}.clicks_input
      WHERE kind = ${ROW_KIND.mark}
      GROUP BY source, source_partition, producer, day`,
      ...(['minute', 'hour', 'day'] as const).flatMap((g) => [`DROP TABLE IF EXISTS ${db}.link_${g}_mv`, `DROP TABLE IF EXISTS ${db}.dim_${g}_mv`]),
      `DROP TABLE IF EXISTS ${db}.consumer_progress_from_events`,
      `DROP TABLE IF EXISTS ${db}.producer_marks_from_events`,
      `DROP TABLE IF EXISTS ${db}.events_input`,
    ],
  },
  {
    // docs/design.md, "Analytics": the consumer folds a write into a row per link, minute
    // and bot flag with its distinct visitors as an array, naming the dimension values every one of
    // its clicks has, and a row per value of a dimension that has several; it sends them in RowBinary
    // to a narrow Null table of their own, and the raw visits straight into `visits`. Views turn a
    // row's visitors into an HLL state with `arrayReduce('uniqCombinedState', ...)` (no row per
    // visitor), and the dimension views ARRAY JOIN a row's values: the state is made once per row and
    // shared by its values. No view groups (a write has one row per key and minute; the tables merge
    // rows of a key later). Ledger rows go along as before (one value: dimension 0), in each insert
    // for the tables it reaches. The views of 0004 stay for the progress and the producer marks.
    name: '0005_rollup_input',
    statements: (db) => [
      `CREATE TABLE IF NOT EXISTS ${db}.rollup_input (
        kind UInt8,
        targets UInt16,
        tenant_id String,
        domain String,
        code String,
        minute DateTime('UTC'),
        bot UInt8,
        dims Array(UInt8),
        dim_values Array(String),
        click_count UInt64,
        visitor_ids Array(UInt64),
        last_offset UInt64
      ) ENGINE = Null`,
      ...(['minute', 'hour', 'day'] as const).flatMap((g) => {
        // Aliases name target columns only: none is a column of rollup_input (18.16 lets aliases leak into expressions).
        const states = `arrayReduce('sumState', [click_count]) AS clicks, arrayReduce('uniqCombinedState', visitor_ids) AS visitors, arrayReduce('maxState', [last_offset]) AS ledger_offset`;
        return [
          `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.link_${g}_from_rollups TO ${db}.link_${g} AS
          SELECT tenant_id, domain, code, ${BUCKET_OF[g]} AS t, bot, ${states}
          FROM ${db}.rollup_input
          WHERE kind IN (${ROW_KIND.aggregate}, ${ROW_KIND.ledger}) AND bitAnd(targets, ${TARGET_BIT[`link_${g}`]}) != 0`,
          `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.dim_${g}_from_rollups TO ${db}.dim_${g} AS
          SELECT tenant_id, domain, code, dim, ${BUCKET_OF[g]} AS t, bot, value, ${states}
          FROM ${db}.rollup_input
          ARRAY JOIN dims AS dim, dim_values AS value
          WHERE kind IN (${ROW_KIND.aggregate}, ${ROW_KIND.values}, ${ROW_KIND.ledger}) AND bitAnd(targets, ${TARGET_BIT[`dim_${g}`]}) != 0`,
        ];
      }),
    ],
  },
  {
    // Conversions (docs/analytics.md, "Conversions"): a row per lead or sale as the consumer read it
    // from the conversions topic, with its source, partition and offset (the table is its own ledger:
    // no partition key, so one insert is one part, held whole or not at all). Reads count each
    // event_key once: a replay, a resend or a retried report adds rows, never counts.
    name: '0006_conversions',
    statements: (db) => [
      `CREATE TABLE IF NOT EXISTS ${db}.conversions (
        tenant_id String,
        domain String,
        code String,
        link_id String,
        kind UInt8,
        event_key String,
        event_id String,
        customer_id String,
        event_name String,
        amount Int64,
        currency String,
        at DateTime('UTC'),
        source String,
        source_partition UInt32,
        source_offset UInt64
      ) ENGINE = MergeTree()
      ORDER BY (tenant_id, domain, code, at)`,
    ],
  },
  {
    // Conversions by the dimensions of their clicks (docs/design.md, "Conversions"): the raw visits
    // keep the click id the redirect passed on, and a lead or sale row carries the dimensions of its
    // click, copied by the consumer from that visit when it writes the row. Columns only: both tables
    // are written with their column lists, and a row written before reads '' (unknown).
    name: '0007_conversion_dimensions',
    statements: (db) => [
      `ALTER TABLE ${db}.visits ADD COLUMN click_id String`,
      ...CONVERSION_DIMENSION_COLUMNS.map((column) => `ALTER TABLE ${db}.conversions ADD COLUMN ${column} String`),
    ],
  },
];

/** The columns of a conversion row that say which click it came from and that click's dimensions (migration 0007). */
export const CONVERSION_DIMENSION_COLUMNS = ['click_id', 'country', 'region', 'city', 'referer', 'device', 'browser', 'os', 'variant', 'visit_source'] as const;

/** Partition key per granularity: the unit retention drops. */
const PARTITION_OF = { minute: 'toYYYYMMDD(t)', hour: 'toYYYYMM(t)', day: 'toYear(t)' } as const;
/** Start of the bucket a minute falls in. */
const BUCKET_OF = { minute: 'minute', hour: 'toStartOfHour(minute)', day: 'toStartOfDay(minute)' } as const;

/**
 * Kinds of rows in the Null input table (`clicks_input` since 0004, `events_input` from 0003,
 * `clicks_input` of 0002; `rollup_input` since 0005): aggregates (a link's own row), the progress of a
 * batch, producer marks, ledger entries, raw visits, rows of dimension values only (0005).
 */
export const ROW_KIND = { aggregate: 0, progress: 1, mark: 2, ledger: 3, visit: 4, values: 5 } as const;

/** The tables a write of the consumer reaches (since 0004), each with its bit in `clicks_input.targets`. */
export const TARGET_BIT = {
  link_minute: 1,
  link_hour: 2,
  link_day: 4,
  dim_minute: 8,
  dim_hour: 16,
  dim_day: 32,
  visits: 64,
} as const;
export type ClickTarget = keyof typeof TARGET_BIT;

/**
 * The tenant of ledger rows: no tenant has it (ids are never empty and never start with NUL), and ''
 * is the orphans'. A ledger row's domain is the source, its code the partition, its time the day.
 */
export const LEDGER_TENANT = '\u0000ledger';

/**
 * Applies the migrations not yet recorded in `<database>._migrations`, in order. Creates the
 * database and the bookkeeping table first, so it runs on an empty server; idempotent.
 */
export async function runOlapMigrations(
  executor: OlapExecutor,
  database: string,
  migrations: readonly OlapMigration[],
  now: () => number = () => Math.floor(Date.now() / 1000),
): Promise<string[]> {
  const db = sqlIdentifier(database);
  assertOrdered(migrations);
  await executor.command(`CREATE DATABASE IF NOT EXISTS ${db}`);
  await executor.command(`CREATE TABLE IF NOT EXISTS ${db}._migrations (name String, applied_at DateTime) ENGINE = MergeTree() ORDER BY name`);
  const done = new Set((await executor.queryJsonEachRow<{ name: string }>(`SELECT DISTINCT name FROM ${db}._migrations`)).map((r) => r.name));
  const applied: string[] = [];
  for (const migration of migrations) {
    if (done.has(migration.name)) continue;
    for (const statement of migration.statements(db)) await runStatement(executor, statement);
    await executor.command(`INSERT INTO ${db}._migrations (name, applied_at) SELECT ${sqlString(migration.name)}, ${sqlDateTime(now())}`);
    applied.push(migration.name);
  }
  return applied;
}

/** Error codes of "column already exists": 44 on 18.16, 15 (DUPLICATE_COLUMN) on chdb. */
const DUPLICATE_COLUMN = new Set([15, 44]);

/**
 * Runs one statement of a migration. 18.16 has no `ADD COLUMN IF NOT EXISTS`: an ADD COLUMN that
 * finds its column (a migration run again after a crash between its statements) is done.
 */
async function runStatement(executor: OlapExecutor, statement: string): Promise<void> {
  try {
    await executor.command(statement);
  } catch (error) {
    const addsColumn = /^\s*ALTER TABLE \S+ ADD COLUMN /.test(statement);
    if (addsColumn && error instanceof OlapError && error.clickhouseCode !== undefined && DUPLICATE_COLUMN.has(error.clickhouseCode)) return;
    throw error;
  }
}

function assertOrdered(migrations: readonly OlapMigration[]): void {
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i - 1].name >= migrations[i].name) {
      throw new Error(`OLAP migrations out of order: ${migrations[i - 1].name} before ${migrations[i].name}`);
    }
  }
}
