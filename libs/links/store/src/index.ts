// The links context's storage: the link shards (links, tags, retired codes, the outbox, moves), and
// on the meta database the id sequences, batch records and the shard ring; MySQL and SQLite.
export { MysqlBatchRecordStore } from './batches/mysql-batch-record-store';
export { SqliteBatchRecordStore } from './batches/sqlite-batch-record-store';
export { LazyMysqlLinkShardStore } from './mysql/lazy-mysql-stores';
export { LINKS_MYSQL_MIGRATIONS } from './mysql/migrations';
export { MysqlLinkShardStore } from './mysql/mysql-link-shard-store';
export { MysqlRingStore } from './mysql/mysql-ring-store';
export { MysqlSequenceStore, SqliteSequenceStore } from './sequences';
export { LINKS_SQLITE_MIGRATIONS } from './sqlite/migrations';
export { SqliteLinkShardStore } from './sqlite/sqlite-link-shard-store';
export { SqliteRingStore } from './sqlite/sqlite-ring-store';
