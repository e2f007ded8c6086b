import { requireEnv } from '@shortlink/testing';
import { describeAuditLogStoreContract, describeTransactionalAuditContract } from '@shortlink/audit-store/contract';
import { MysqlMetaStore } from './mysql-meta-store';

// Runs against the MariaDB meta database of `npm run stack:up` (deploy/local/.run/stack.env); its SQLite twin is sqlite-audit-log-store.spec.ts.
describeAuditLogStoreContract('mysql', async () => {
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  return { audit: meta.audit, close: () => meta.close() };
});

describeTransactionalAuditContract('mysql', async () => {
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  return { tenants: meta.tenants, settings: meta.domainSettings, audit: meta.audit, close: () => meta.close() };
});
