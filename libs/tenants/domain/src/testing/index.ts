// The domain's test double, for specs only: the data-access specs run the adapters' contract suite on it too.
export { InMemoryTenantStore, type KeyPeopleDirectory } from './in-memory-tenant-store';
export { InMemoryDomainSettingsStore } from './in-memory-domain-settings-store';
