import { InMemoryAuditLogStore } from '@shortlink/audit-domain/testing';
import { IdBlock } from '@shortlink/links-domain';
import { InMemoryLinkShard } from '@shortlink/links-domain/testing';
import { InMemoryBatchRecords } from '@shortlink/link-batch/testing';
import { InMemoryMovableShard, InMemoryRingStore } from '@shortlink/sharding-domain/testing';
import { InMemoryPeopleStore } from '@shortlink/people-domain/testing';
import type { Tenant } from '@shortlink/tenants-domain';
import { InMemoryDomainOwnershipStore, InMemoryDomainSettingsStore, InMemoryTenantStore } from '@shortlink/tenants-domain/testing';
import { describeAuditLogStoreContract, describeTransactionalAuditContract } from './contract/audit-log-store.contract';
import { describeBatchRecordStoreContract } from './contract/batch-record-store.contract';
import { describeDomainOwnershipStoreContract } from './contract/domain-ownership-store.contract';
import { describeDomainSettingsStoreContract } from './contract/domain-settings-store.contract';
import { describeLinkStoreContract } from './contract/link-store.contract';
import { describeOutboxContract } from './contract/outbox.contract';
import { describePeopleStoreContract } from './contract/people-store.contract';
import { describeRingStoreContract, describeShardMoveContract } from './contract/resharding.contract';
import { describeTenantStoreContract } from './contract/tenant-store.contract';

/**
 * The domain's specs (the resharder, the batch creator, the link and tenant services) run on these doubles, since a domain lib
 * may not depend on the adapters: the doubles keep the adapters' rules only if they pass the same contract suites.
 */

/** The id counter the domain's specs hand out blocks with. */
const counter = () => {
  let next = 1n;
  return { allocateBlock: async (_: string, size: number): Promise<IdBlock> => ({ start: next, end: (next += BigInt(size)) }), close: async () => undefined };
};

describeLinkStoreContract('in-memory double', async () => ({ shard: new InMemoryLinkShard('s0'), meta: counter(), close: async () => undefined }));
describeLinkStoreContract('in-memory movable double', async () => ({ shard: new InMemoryMovableShard('s0'), meta: counter(), close: async () => undefined }));
describeOutboxContract('in-memory double', async () => ({ open: async (stamp) => new InMemoryMovableShard('s0', { stamp }), close: async () => undefined }));
describeShardMoveContract('in-memory double', async () => ({
  a: new InMemoryMovableShard('a'),
  b: new InMemoryMovableShard('b'),
  close: async () => undefined,
}));
describeRingStoreContract('in-memory double', async () => ({ ring: new InMemoryRingStore(), close: async () => undefined }));
describeBatchRecordStoreContract('in-memory double', async () => ({ batches: new InMemoryBatchRecords(), close: async () => undefined }));
describeTenantStoreContract('in-memory double', async () => {
  const tenants = new InMemoryTenantStore();
  const people = new InMemoryPeopleStore((id) => tenants.tenants.get(id) ?? null);
  tenants.people = people;
  return { tenants, people, close: async () => undefined };
});
describeDomainSettingsStoreContract('in-memory double', async () => {
  const settings = new InMemoryDomainSettingsStore();
  return { settings, tenants: new InMemoryTenantStore(settings), close: async () => undefined };
});
describeAuditLogStoreContract('in-memory double', async () => ({ audit: new InMemoryAuditLogStore(), close: async () => undefined }));
describeTransactionalAuditContract('in-memory double', async () => {
  const tenants = new InMemoryTenantStore();
  return { tenants, settings: new InMemoryDomainSettingsStore(tenants.audit), audit: tenants.audit, close: async () => undefined };
});
describePeopleStoreContract('in-memory double', async () => {
  const tenants = new Map<string, Tenant>();
  const people = new InMemoryPeopleStore((id) => tenants.get(id) ?? null);
  return {
    people,
    addTenant: async (tenant) => void tenants.set(tenant.id, tenant),
    actionsOf: async (tenantId) => people.entries.filter((e) => e.log === tenantId).map((e) => e.action),
    close: async () => undefined,
  };
});
describeDomainOwnershipStoreContract('in-memory double', async () => {
  const tenants = new InMemoryTenantStore();
  return { ownership: new InMemoryDomainOwnershipStore(tenants), tenants, audit: tenants.audit, close: async () => undefined };
});
