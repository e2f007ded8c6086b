// The SQL base of the stores (MySQL and SQLite): opening a database and running its migrations,
// opening on first use, the row helpers every context's adapters share.
export { inMigrationOrder, mysqlSequence, sqliteSequence } from './migration-order';
export { mysqlGrantToFirstKeys, mysqlWithdrawFromKeys, sqliteGrantToFirstKeys } from './key-scopes';
export { forwardWhenOpen, LazyOpen } from './lazy-open';
export { isMysqlDuplicate, type MysqlConnectionOptions, type MysqlDb, openMysql } from './mysql-datasource';
export { migrateSqlite, openSqlite, type SqliteDb } from './sqlite-database';
export { type SqlDialect, type SqlExecutor, toDate } from './sql-values';
