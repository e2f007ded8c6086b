export { META_MYSQL_MIGRATIONS, META_SQLITE_MIGRATIONS } from './meta-migrations';
export { LazyMysqlMetaStore, MysqlMetaStore } from './mysql-meta-store';
export { SqliteMetaStore } from './sqlite-meta-store';
