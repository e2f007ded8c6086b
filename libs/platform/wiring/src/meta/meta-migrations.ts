import { AUDIT_MYSQL_MIGRATIONS, AUDIT_SQLITE_MIGRATIONS } from '@shortlink/audit-store';
import { LINKS_MYSQL_MIGRATIONS, LINKS_SQLITE_MIGRATIONS } from '@shortlink/link-store';
import { CONVERSIONS_MYSQL_MIGRATIONS, CONVERSIONS_SQLITE_MIGRATIONS } from '@shortlink/olap';
import { PEOPLE_MYSQL_MIGRATIONS, PEOPLE_SQLITE_MIGRATIONS } from '@shortlink/people-store';
import { SAFETY_MYSQL_MIGRATIONS, SAFETY_SQLITE_MIGRATIONS } from '@shortlink/safety-store';
import { inMigrationOrder, mysqlSequence, sqliteSequence } from '@shortlink/sql';
import { TENANTS_MYSQL_MIGRATIONS, TENANTS_SQLITE_MIGRATIONS } from '@shortlink/tenants-store';
import { WEBHOOKS_MYSQL_MIGRATIONS, WEBHOOKS_SQLITE_MIGRATIONS } from '@shortlink/webhooks-store';

/**
 * The meta database's migrations: every context's, in the one order a database has always been
 * migrated in (recorded by name: docs/design.md, "Migrations"), for MySQL and for SQLite.
 */
export const META_MYSQL_MIGRATIONS = inMigrationOrder(
  [
    TENANTS_MYSQL_MIGRATIONS,
    LINKS_MYSQL_MIGRATIONS,
    AUDIT_MYSQL_MIGRATIONS,
    PEOPLE_MYSQL_MIGRATIONS,
    WEBHOOKS_MYSQL_MIGRATIONS,
    SAFETY_MYSQL_MIGRATIONS,
    CONVERSIONS_MYSQL_MIGRATIONS,
  ],
  mysqlSequence,
);

export const META_SQLITE_MIGRATIONS = inMigrationOrder(
  [
    TENANTS_SQLITE_MIGRATIONS,
    LINKS_SQLITE_MIGRATIONS,
    AUDIT_SQLITE_MIGRATIONS,
    PEOPLE_SQLITE_MIGRATIONS,
    WEBHOOKS_SQLITE_MIGRATIONS,
    SAFETY_SQLITE_MIGRATIONS,
    CONVERSIONS_SQLITE_MIGRATIONS,
  ],
  sqliteSequence,
);
