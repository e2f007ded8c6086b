import { InMemoryPeopleStore } from '@shortlink/people-domain/testing';
import type { Tenant } from '@shortlink/tenants-domain';
import { describePeopleStoreContract } from './contract/people-store.contract';

// The domain's specs run on the in-memory doubles (a domain lib may not depend on the adapters): the
// doubles keep the adapters' rules only if they pass the same contract suites (as libs/links/store's).

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
