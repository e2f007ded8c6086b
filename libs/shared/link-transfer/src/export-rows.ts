/**
 * The rows of an export (no Node module: the console writes the same CSV in the browser; the CLI
 * through csv-export.ts).
 */

/**
 * The columns of an export: every field a link has, our import's columns first, so an export
 * imports again as it is (docs/design.md, "Import and export"). A password leaves as its argon2id
 * hash; the options that are objects (redirect rules, geo and device targets, variants) as JSON. The
 * geo and device targets are the shorthand of some of the rules: an import applies the rules, then
 * the shorthand, which changes nothing.
 */
export const EXPORT_COLUMNS = [
  'url',
  'alias',
  'domain',
  'title',
  'tags',
  'expiresAt',
  'redirectType',
  'maxClicks',
  'status',
  'passwordProtected',
  'passwordHash',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'forwardQuery',
  'geoTargets',
  'deviceTargets',
  'redirectRules',
  'variants',
  'clicksPerIpPerMinute',
  'passwordRememberHours',
  'social',
  'appTargets',
  'shortUrl',
  'createdAt',
] as const;

/** A link as the API shows it (GET /api/v1/export/links adds passwordHash). */
export interface ExportedLink {
  code: string;
  domain: string;
  shortUrl: string;
  url: string;
  title: string | null;
  tags: string[];
  expiresAt: string | null;
  redirectType: number;
  maxClicks: number | null;
  status: string;
  createdAt: string;
  passwordProtected: boolean;
  passwordHash?: string | null;
  utm: Partial<Record<'source' | 'medium' | 'campaign' | 'term' | 'content', string>> | null;
  forwardQuery: boolean;
  geoTargets: Record<string, string> | null;
  deviceTargets: Record<string, string> | null;
  /** Absent in exports made before redirect rules. */
  redirectRules?: Array<{ url: string; conditions: Array<Record<string, string>> }> | null;
  variants: Array<{ url: string; weight: number }> | null;
  clicksPerIpPerMinute: number | null;
  passwordRememberHours?: number | null;
  social?: { title: string; description: string | null; image: string | null } | null;
  appTargets?: { ios?: string; android?: string } | null;
}

/** One link as a row of EXPORT_COLUMNS. */
export function exportRow(l: ExportedLink): unknown[] {
  const utm = l.utm ?? {};
  const asJson = (v: unknown) => (v === null || v === undefined ? '' : JSON.stringify(v));
  return [
    l.url,
    l.code,
    l.domain,
    l.title ?? '',
    l.tags.join('|'),
    l.expiresAt ?? '',
    l.redirectType,
    l.maxClicks ?? '',
    l.status,
    l.passwordProtected,
    l.passwordHash ?? '',
    utm.source ?? '',
    utm.medium ?? '',
    utm.campaign ?? '',
    utm.term ?? '',
    utm.content ?? '',
    l.forwardQuery,
    asJson(l.geoTargets),
    asJson(l.deviceTargets),
    asJson(l.redirectRules),
    asJson(l.variants),
    l.clicksPerIpPerMinute ?? '',
    l.passwordRememberHours ?? '',
    asJson(l.social),
    asJson(l.appTargets),
    l.shortUrl,
    l.createdAt,
  ];
}
