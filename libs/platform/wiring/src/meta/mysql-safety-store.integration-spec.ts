import { requireEnv } from '@shortlink/testing';
import { describeSafetyStoreContract } from '@shortlink/safety-store/contract';
import { MysqlMetaStore } from './mysql-meta-store';

// Runs against the MariaDB meta database of `npm run stack:up` (deploy/local/.run/stack.env); its SQLite twin is sqlite-safety-store.spec.ts.
describeSafetyStoreContract('mysql', async () => {
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  return { safety: meta.safety, close: () => meta.close() };
});
