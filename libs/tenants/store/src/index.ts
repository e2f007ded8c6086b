// The tenants context's storage (tenants, API keys, their domains' settings and ownership) on the
// meta database, MySQL and SQLite, under the contract suites of ./contract.
export { MysqlDomainOwnershipStore } from './mysql-domain-ownership-store';
export { MysqlDomainSettingsStore } from './mysql-domain-settings-store';
export { TENANTS_MYSQL_MIGRATIONS } from './mysql-migrations';
export { MysqlTenantStore } from './mysql-tenant-store';
export { SqliteDomainOwnershipStore } from './sqlite-domain-ownership-store';
export { SqliteDomainSettingsStore } from './sqlite-domain-settings-store';
export { TENANTS_SQLITE_MIGRATIONS } from './sqlite-migrations';
export { SqliteTenantStore } from './sqlite-tenant-store';
