export { LazyMysqlLinkShardStore, LazyMysqlMetaStore } from './mysql/lazy-mysql-stores';
export { MysqlLinkShardStore } from './mysql/mysql-link-shard-store';
export { MysqlMetaStore } from './mysql/mysql-meta-store';
export { MysqlRingStore } from './mysql/mysql-ring-store';
export { SqliteLinkShardStore } from './sqlite/sqlite-link-shard-store';
export { SqliteMetaStore } from './sqlite/sqlite-meta-store';
export { SqliteRingStore } from './sqlite/sqlite-ring-store';
