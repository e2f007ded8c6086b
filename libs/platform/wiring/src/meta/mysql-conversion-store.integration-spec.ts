import { requireEnv } from '@shortlink/testing';
import { describeConversionStoreContract } from '@shortlink/olap/contract';
import { MysqlMetaStore } from './mysql-meta-store';

// Runs against the MariaDB meta database of `npm run stack:up` (deploy/local/.run/stack.env); its SQLite twin is sqlite-conversion-store.spec.ts.
describeConversionStoreContract('mysql', async () => {
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  return { conversions: meta.conversions, close: () => meta.close() };
});
