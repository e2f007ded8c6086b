import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { describeBatchRecordStoreContract, describeLinkStoreContract, describeOutboxContract } from '@shortlink/link-store/contract';
import { describeDomainOwnershipStoreContract, describeDomainSettingsStoreContract, describeTenantStoreContract } from '@shortlink/tenants-store/contract';
import { SqliteLinkShardStore } from '@shortlink/link-store';
import { SqliteMetaStore } from './sqlite-meta-store';

describeLinkStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-'));
  const shard = new SqliteLinkShardStore('s0', join(dir, 'shards', 's0.sqlite'));
  const meta = new SqliteMetaStore(join(dir, 'meta.sqlite'));
  return {
    shard,
    meta,
    close: async () => {
      await shard.close();
      await meta.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeOutboxContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-'));
  const opened: SqliteLinkShardStore[] = [];
  return {
    open: async (stamp) => {
      const store = new SqliteLinkShardStore('s0', join(dir, 'shards', 's0.sqlite'), stamp);
      opened.push(store);
      return store;
    },
    close: async () => {
      for (const store of opened) await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeTenantStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-'));
  const meta = new SqliteMetaStore(join(dir, 'meta.sqlite'));
  return {
    tenants: meta.tenants,
    people: meta.people,
    close: async () => {
      await meta.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeBatchRecordStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-'));
  const meta = new SqliteMetaStore(join(dir, 'meta.sqlite'));
  return {
    batches: meta.batches,
    close: async () => {
      await meta.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeDomainSettingsStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-'));
  const meta = new SqliteMetaStore(join(dir, 'meta.sqlite'));
  return {
    settings: meta.domainSettings,
    tenants: meta.tenants,
    close: async () => {
      await meta.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('sqlite shard files', () => {
  it('keep their links across a reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-'));
    const file = join(dir, 's1.sqlite');
    const first = new SqliteLinkShardStore('s1', file);
    const { aLink } = await import('@shortlink/link-store/contract');
    const link = aLink();
    await first.insert(link);
    await first.close();
    const again = new SqliteLinkShardStore('s1', file);
    expect(await again.findByCode(link)).toEqual(link);
    await again.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describeDomainOwnershipStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-sqlite-'));
  const meta = new SqliteMetaStore(join(dir, 'meta.sqlite'));
  return {
    ownership: meta.domainOwnership,
    tenants: meta.tenants,
    audit: meta.audit,
    close: async () => {
      await meta.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
