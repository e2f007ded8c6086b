export { ChdbExecutor } from './chdb/chdb-executor';
export { SqlClickAggregateStore } from './click-aggregate-store';
export { ClickHouseExecutor } from './clickhouse/clickhouse-executor';
export { CONVERSIONS_MYSQL_MIGRATIONS } from './conversions/mysql-migrations';
export { mysqlConversionStore, SqlConversionStore, sqliteConversionStore } from './conversions/sql-conversion-store';
export { CONVERSIONS_SQLITE_MIGRATIONS } from './conversions/sqlite-migrations';
