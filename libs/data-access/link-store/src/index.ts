export * from './sqlite/sqlite-link-shard-store';
export * from './sqlite/sqlite-meta-store';
export * from './mysql/mysql-link-shard-store';
export * from './mysql/mysql-meta-store';
export type { MysqlConnectionOptions } from './mysql/mysql-datasource';
export * from './mysql/lazy-mysql-stores';
export * from './sqlite/sqlite-ring-store';
export * from './mysql/mysql-ring-store';
