// The tenants domain: tenants and their domains (with the proof of their ownership), API keys and their verification, plans (rate windows, batch slots).
export { ApiKeyService, type IssuedKey, type ListedKey } from './api-keys';
export {
  isRole,
  KEY_CEILING,
  type KeyPerson,
  type KeyStanding,
  keyStanding,
  type Manager,
  managerOf,
  mayManageKey,
  mayManageRole,
  mayTransferKeys,
  type Role,
  ROLE_SCOPES,
  ROLES,
  TENANT_KEY_SCOPES,
} from './authority';
export { BatchSlots, LocalSlots, SLOT_STORE, type SlotStore } from './concurrency-slots';
export { type Actor, ApiKeyVerifier, keyPrincipal, type Principal } from './credentials';
export {
  applySettingsEdit,
  type Branding,
  checkAndroidAssetLinks,
  checkAppleAppSiteAssociation,
  checkHsts,
  DEFAULT_DOMAIN_SETTINGS,
  defaultSettingsOf,
  DOMAIN_SETTING_FIELDS,
  DOMAIN_SETTINGS_STORE,
  type DomainSettings,
  type DomainSettingsEdit,
  type DomainSettingsStore,
  type DomainSettingsValues,
  type Hsts,
  hstsHeader,
  domainConversionParam,
  DEFAULT_DOMAIN_CONVERSION_PARAM,
  type JsonObject,
  type JsonValue,
  MAX_LOGO_BYTES,
  MAX_WELL_KNOWN_BYTES,
  type RobotsPolicy,
  type SettingsUrlCheck,
  storedBranding,
} from './domain-settings';
export { DomainSettingsDirectory, type DomainSettingsDirectoryOptions } from './domain-settings-directory';
export {
  type CertificateState,
  CHALLENGE_PATH_PREFIX,
  challengePath,
  type CheckPolicy,
  checkOwnership,
  type ClaimResult,
  DOMAIN_OWNERSHIP_EVENTS,
  DOMAIN_OWNERSHIP_STORE,
  DOMAIN_PROBES,
  DOMAIN_STATUSES,
  type DomainEntry,
  type DomainOwnershipEvents,
  type DomainOwnershipStore,
  type DomainProbes,
  type DomainStatus,
  OWNERSHIP_METHODS,
  type OwnershipCheck,
  type OwnershipMethod,
  type OwnershipState,
  operatorAssignedDomain,
  ProbeFailure,
  type ServedCertificate,
  stateAfterCheck,
  type TenantDomain,
  txtRecordName,
  txtRecordValue,
  type VerifiedBy,
} from './domain-ownership';
export { type DomainOwnershipOptions, DomainOwnershipService, type OwnershipObserver } from './domain-ownership-service';
export { type DomainSettingsChanges, DomainSettingsService, type DomainSettingsServiceOptions, type OwnedDomainSettings } from './domain-settings-service';
export {
  type KeyCap,
  type KeyTransferDecision,
  type KeyTransferOutcome,
  type KeyWithTenant,
  type NewApiKey,
  TENANT_STORE,
  type TenantChange,
  type TenantChangeAudit,
  type TenantStore,
} from './ports';
export {
  BUCKETS_PER_WINDOW,
  LocalRateWindows,
  PlanRateLimiter,
  RATE_WINDOW_STORE,
  type RateDecision,
  type RateWindowStore,
  type WindowHit,
} from './rate-limits';
export { type ApiKey, FIRST_KEY_SCOPES, hashApiKey, NEW_KEY_SCOPES, type Plan, type Scope, SCOPES, type Tenant, type TenantStatus } from './tenant';
export { TenantDirectory } from './tenant-directory';
export { checkDomain, TenantService } from './tenant-service';
export { PeriodicRead, type PeriodicReadOptions } from './periodic-read';
