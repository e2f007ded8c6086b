import { OlapExecutor } from './olap-executor';
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
    // Issue 13 (docs/analytics.md): bots apart, breakdowns, hour and day rollups, orphan visits,
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
];

/** Partition key per granularity: the unit retention drops. */
const PARTITION_OF = { minute: 'toYYYYMMDD(t)', hour: 'toYYYYMM(t)', day: 'toYear(t)' } as const;
/** Start of the bucket a minute falls in. */
const BUCKET_OF = { minute: 'minute', hour: 'toStartOfHour(minute)', day: 'toStartOfDay(minute)' } as const;

/** Kinds of rows in `events_input` (and `clicks_input` before 0003): aggregates, the progress of the insert, producer marks. */
export const ROW_KIND = { aggregate: 0, progress: 1, mark: 2 } as const;

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
    for (const statement of migration.statements(db)) await executor.command(statement);
    await executor.command(`INSERT INTO ${db}._migrations (name, applied_at) SELECT ${sqlString(migration.name)}, ${sqlDateTime(now())}`);
    applied.push(migration.name);
  }
  return applied;
}

function assertOrdered(migrations: readonly OlapMigration[]): void {
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i - 1].name >= migrations[i].name) {
      throw new Error(`OLAP migrations out of order: ${migrations[i - 1].name} before ${migrations[i].name}`);
    }
  }
}
