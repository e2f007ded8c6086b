import { requireEnv } from '@shortlink/testing';
import { describeSsoStoreContract, metaFixture } from '@shortlink/people-store/contract';
import { MysqlMetaStore } from './mysql-meta-store';

// Runs against the MariaDB meta database of `npm run stack:up` (deploy/local/.run/stack.env); its SQLite twin is sqlite-sso-store.spec.ts.
describeSsoStoreContract('mysql', async () => {
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  return { ...metaFixture(meta.people, meta.tenants, meta.audit, () => meta.close()), sso: meta.sso };
});
