import { describeBatchRecordStoreContract, describeLinkStoreContract, describeOutboxContract } from '@shortlink/link-store/contract';
import { describeDomainOwnershipStoreContract, describeDomainSettingsStoreContract, describeTenantStoreContract } from '@shortlink/tenants-store/contract';
import { MysqlLinkShardStore } from '@shortlink/link-store';
import { MysqlMetaStore } from './mysql-meta-store';
import { requireEnv, scratchMysqlDatabases } from '@shortlink/testing';

// Runs against the MariaDB instances of `npm run stack:up` (deploy/local/.run/stack.env).
describeLinkStoreContract('mysql', async () => {
  const shardUrl = requireEnv('MYSQL_SHARDS').split(',')[0].split('=').slice(1).join('=');
  const shard = await MysqlLinkShardStore.open('s0', { url: shardUrl });
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  return {
    shard,
    meta,
    close: async () => {
      await shard.close();
      await meta.close();
    },
  };
});

// A database of its own: the suite takes over expired events, which on the stack's shards would be the apps'.
describeOutboxContract('mysql', async () => {
  const scratch = await scratchMysqlDatabases(['outbox']);
  const opened: MysqlLinkShardStore[] = [];
  return {
    open: async (stamp) => {
      const store = await MysqlLinkShardStore.open('s0', { url: scratch.urls[0], poolSize: 4 }, stamp);
      opened.push(store);
      return store;
    },
    close: async () => {
      for (const store of opened) await store.close();
      await scratch.drop();
    },
  };
});

describeTenantStoreContract('mysql', async () => {
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  return { tenants: meta.tenants, people: meta.people, close: () => meta.close() };
});

describeBatchRecordStoreContract('mysql', async () => {
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  return { batches: meta.batches, close: () => meta.close() };
});

describeDomainSettingsStoreContract('mysql', async () => {
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  return { settings: meta.domainSettings, tenants: meta.tenants, close: () => meta.close() };
});

describeDomainOwnershipStoreContract('mysql', async () => {
  const meta = await MysqlMetaStore.open({ url: requireEnv('MYSQL_META_URL') });
  return { ownership: meta.domainOwnership, tenants: meta.tenants, audit: meta.audit, close: () => meta.close() };
});
