// The audit context's storage (the audit log) on the meta database, MySQL and SQLite, under the
// contract suites of ./contract; the stores of other contexts write their entries in their own
// transactions with insertAuditEntries*.
export { insertAuditEntriesMysql, MysqlAuditLogStore } from './mysql-audit-log-store';
export { AUDIT_MYSQL_MIGRATIONS } from './mysql-migrations';
export { insertAuditEntriesSqlite, SqliteAuditLogStore } from './sqlite-audit-log-store';
export { AUDIT_SQLITE_MIGRATIONS } from './sqlite-migrations';
