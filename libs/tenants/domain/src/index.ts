// The tenants domain: tenants and their domains, API keys and their verification, plans (rate windows, batch slots).
export { ApiKeyService } from './api-keys';
export { BatchSlots, LocalSlots, SLOT_STORE, type SlotStore } from './concurrency-slots';
export { type Actor, ApiKeyVerifier, type Principal } from './credentials';
export {
  applySettingsEdit,
  type Branding,
  checkAndroidAssetLinks,
  checkAppleAppSiteAssociation,
  DEFAULT_DOMAIN_SETTINGS,
  defaultSettingsOf,
  DOMAIN_SETTING_FIELDS,
  DOMAIN_SETTINGS_STORE,
  type DomainSettings,
  type DomainSettingsEdit,
  type DomainSettingsStore,
  type DomainSettingsValues,
  type JsonObject,
  type JsonValue,
  MAX_LOGO_BYTES,
  MAX_WELL_KNOWN_BYTES,
  type RobotsPolicy,
  type SettingsUrlCheck,
  storedBranding,
} from './domain-settings';
export { DomainSettingsDirectory, type DomainSettingsDirectoryOptions } from './domain-settings-directory';
export { type DomainSettingsChanges, DomainSettingsService, type DomainSettingsServiceOptions, type OwnedDomainSettings } from './domain-settings-service';
export { type KeyCap, type KeyWithTenant, type NewApiKey, TENANT_STORE, type TenantChange, type TenantChangeAudit, type TenantStore } from './ports';
export {
  BUCKETS_PER_WINDOW,
  LocalRateWindows,
  PlanRateLimiter,
  RATE_WINDOW_STORE,
  type RateDecision,
  type RateWindowStore,
  type WindowHit,
} from './rate-limits';
export { type ApiKey, hashApiKey, type Plan, type Scope, SCOPES, type Tenant, type TenantStatus } from './tenant';
export { TenantDirectory } from './tenant-directory';
export { TenantService } from './tenant-service';
