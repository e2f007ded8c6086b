import { InMemoryDomainOwnershipStore, InMemoryDomainSettingsStore, InMemoryTenantStore } from '@shortlink/tenants-domain/testing';
import { InMemoryPeopleStore } from '@shortlink/people-domain/testing';
import { describeTransactionalAuditContract } from '@shortlink/audit-store/contract';
import { describeDomainOwnershipStoreContract } from './contract/domain-ownership-store.contract';
import { describeDomainSettingsStoreContract } from './contract/domain-settings-store.contract';
import { describeTenantStoreContract } from './contract/tenant-store.contract';

// The domain's specs run on the in-memory doubles (a domain lib may not depend on the adapters): the
// doubles keep the adapters' rules only if they pass the same contract suites (as libs/links/store's).

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
describeTransactionalAuditContract('in-memory double', async () => {
  const tenants = new InMemoryTenantStore();
  return { tenants, settings: new InMemoryDomainSettingsStore(tenants.audit), audit: tenants.audit, close: async () => undefined };
});
describeDomainOwnershipStoreContract('in-memory double', async () => {
  const tenants = new InMemoryTenantStore();
  return { ownership: new InMemoryDomainOwnershipStore(tenants), tenants, audit: tenants.audit, close: async () => undefined };
});
