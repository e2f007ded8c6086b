// The safety context's storage (link targets, checks, reports, the moderation queue, feeds, leases)
// on the meta database, MySQL and SQLite, under the contract suite of ./contract.
export { SAFETY_MYSQL_MIGRATIONS } from './mysql-migrations';
export { mysqlSafetyStore, sqliteSafetyStore } from './safety-stores';
export { SqlSafetyStore } from './sql-safety-store';
export { SAFETY_SQLITE_MIGRATIONS } from './sqlite-migrations';
