// The people context's storage (members, sessions, second factors, SSO settings) on the meta
// database, MySQL and SQLite, under the contract suites of ./contract.
export { PEOPLE_MYSQL_MIGRATIONS } from './mysql-migrations';
export { MysqlPeopleStore } from './mysql-people-store';
export { PEOPLE_SQLITE_MIGRATIONS } from './sqlite-migrations';
export { SqlitePeopleStore } from './sqlite-people-store';
export { MysqlSsoStore, SqliteSsoStore } from './sso-stores';
