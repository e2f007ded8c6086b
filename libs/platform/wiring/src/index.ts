export { portsModule, SharedPorts, withPorts } from './ports-module';
export { ringStoreFor, ShardCatalog } from './ports/links.port';
export { runApp } from './run-app';
export { LazyMysqlMetaStore, META_MYSQL_MIGRATIONS, META_SQLITE_MIGRATIONS, MysqlMetaStore, SqliteMetaStore } from './meta';
