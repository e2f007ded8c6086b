import { DEFAULT_DOMAIN_SETTINGS, DomainSettings, DomainSettingsValues, storedBranding } from '@shortlink/tenants-domain';
import { toDate } from '@shortlink/sql';

export interface DomainSettingsRow {
  domain: string;
  settings: string;
  version: number | string;
  updated_at: Date | number | string;
}

export const DOMAIN_SETTINGS_COLUMNS = 'domain, settings, version, updated_at';

/** The `settings` column: the values that differ from the defaults, as JSON (`{}` after a reset). */
export function settingsJson(settings: DomainSettingsValues): string {
  const differing = Object.entries(settings).filter(
    ([field, value]) => field in DEFAULT_DOMAIN_SETTINGS && value !== (DEFAULT_DOMAIN_SETTINGS as never)[field],
  );
  return JSON.stringify(Object.fromEntries(differing));
}

export function settingsFromRow(row: DomainSettingsRow): DomainSettings {
  const stored = JSON.parse(row.settings) as Partial<DomainSettingsValues>;
  const branding = storedBranding(stored.branding);
  return { ...DEFAULT_DOMAIN_SETTINGS, ...stored, branding, domain: row.domain, version: Number(row.version), updatedAt: toDate(row.updated_at) };
}

/**
 * A domain taken from its tenant keeps its row, back to the defaults under a newer version: whoever
 * gets the domain next never inherits its redirects, branding or app files, and the redirect instances
 * (which keep the newest version they saw) take the reset (docs/design.md, "Domain settings").
 */
export const RESET_DOMAIN_SETTINGS = "UPDATE domain_settings SET settings = '{}', version = version + 1, updated_at = ? WHERE domain = ?";
