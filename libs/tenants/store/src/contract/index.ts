export { describeDomainOwnershipStoreContract } from './domain-ownership-store.contract';
export { describeDomainSettingsStoreContract } from './domain-settings-store.contract';
export { describeTenantStoreContract } from './tenant-store.contract';
