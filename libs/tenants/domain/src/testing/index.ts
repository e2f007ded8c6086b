// The domain's test doubles, for specs only: the data-access specs run the adapters' contract suites on them too.
export { InMemoryTenantStore, type KeyPeopleDirectory } from './in-memory-tenant-store';
export { InMemoryDomainSettingsStore } from './in-memory-domain-settings-store';
export { InMemoryDomainOwnershipStore } from './in-memory-domain-ownership-store';
