export * from './olap-executor';
export * from './sql-literals';
export * from './migrations';
export * from './click-aggregate-store';
export { ClickHouseExecutor } from './clickhouse/clickhouse-executor';
export type { ClickHouseExecutorOptions } from './clickhouse/clickhouse-executor';
export { ChdbExecutor } from './chdb/chdb-executor';
