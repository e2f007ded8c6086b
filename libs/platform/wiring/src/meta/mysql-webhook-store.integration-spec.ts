import { requireEnv } from '@shortlink/testing';
import { describeWebhookStoreContract } from '@shortlink/webhooks-store/contract';
import { MysqlMetaStore } from './mysql-meta-store';

// Runs against the MariaDB meta database of `npm run stack:up` (deploy/local/.run/stack.env); its SQLite twin is sqlite-webhook-store.spec.ts.
describeWebhookStoreContract('mysql', async () => {
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  return { webhooks: meta.webhooks, close: () => meta.close() };
});
