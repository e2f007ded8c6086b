// The webhooks context's storage (webhooks and their deliveries) on the meta database, MySQL and
// SQLite, under the contract suite of ./contract.
export { WEBHOOKS_MYSQL_MIGRATIONS } from './mysql-migrations';
export { SqlWebhookStore } from './sql-webhook-store';
export { WEBHOOKS_SQLITE_MIGRATIONS } from './sqlite-migrations';
export { mysqlWebhookStore, sqliteWebhookStore } from './webhook-stores';
