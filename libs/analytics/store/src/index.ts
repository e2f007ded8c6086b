export { ChdbExecutor } from './chdb/chdb-executor';
export { SqlClickAggregateStore } from './click-aggregate-store';
export { ClickHouseExecutor } from './clickhouse/clickhouse-executor';
