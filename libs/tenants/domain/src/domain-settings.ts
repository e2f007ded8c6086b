import type { AuditEntry } from '@shortlink/audit-domain';
import { DomainError, ErrorCode } from '@shortlink/core';

/**
 * What the owner of a domain sets for its visitors (docs/design.md, "Domain settings"): where a
 * browser goes instead of a page, how the pages look, what crawlers may fetch, and the files that
 * make the owner's apps open its links. A domain without a stored row has DEFAULT_DOMAIN_SETTINGS.
 */
export interface Branding {
  /** Shown at the top of every page of the domain; null: no name. */
  readonly name: string | null;
  /**
   * The logo shown beside the name: a PNG, JPEG, GIF or WebP image as a `data:` URI (base64), at
   * most MAX_LOGO_BYTES. The pages carry it themselves, so a visitor's browser fetches nothing from
   * elsewhere, and a logo cannot break or change after it was set (docs/design.md, "Domain settings").
   */
  readonly logo: string | null;
  /** `#rrggbb`, lower case: the pages' accent (links, buttons, the top rule). */
  readonly accentColor: string | null;
}

export type RobotsPolicy = 'allow' | 'disallow';

/**
 * Strict-Transport-Security for the domain's answers over HTTPS (RFC 6797): browsers then use HTTPS
 * only, for `maxAge` seconds. `preload` asks for the browsers' preload lists, which require a year
 * and the subdomains (hstspreload.org).
 */
export interface Hsts {
  readonly maxAge: number;
  readonly includeSubDomains: boolean;
  readonly preload: boolean;
}
/** Two years: the longest the preload list asks for, and more than any browser needs. */
export const MAX_HSTS_SECONDS = 63_072_000;
const PRELOAD_MIN_SECONDS = 31_536_000;

/** The header's value. */
export const hstsHeader = (h: Hsts): string => `max-age=${h.maxAge}${h.includeSubDomains ? '; includeSubDomains' : ''}${h.preload ? '; preload' : ''}`;

/** A JSON document as a tenant gave it (already validated for its shape and size). */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };
export type JsonObject = { readonly [key: string]: JsonValue };

export interface DomainSettingsValues {
  /** Where a browser asking for an unknown (or disabled) code of this domain is sent; null: the 404 page. */
  readonly notFoundRedirect: string | null;
  /**
   * Where a browser asking for any other path of this domain that is no short URL (`/a.php`,
   * `/favicon.png`; Shlink's "regular 404") is sent; null: the 404 answer.
   */
  readonly pathNotFoundRedirect: string | null;
  /** Where `GET /` on this domain sends a browser; null: the 404 page. */
  readonly rootRedirect: string | null;
  /** Where an expired or exhausted link of this domain sends a browser; null: the 410 page. */
  readonly expiredRedirect: string | null;
  readonly branding: Branding | null;
  /** `GET /robots.txt`: `disallow` (the default) lets crawlers fetch only the links marked crawlable. */
  readonly robots: RobotsPolicy;
  /** Served as `/.well-known/apple-app-site-association` (universal links); null: 404. */
  readonly appleAppSiteAssociation: JsonObject | null;
  /** Served as `/.well-known/assetlinks.json` (Android app links); null: 404. */
  readonly androidAssetLinks: readonly JsonValue[] | null;
  /** Sent with every answer of the domain over HTTPS (docs/design.md, "Custom domains and TLS"); null: none. */
  readonly hsts: Hsts | null;
  /**
   * Conversion tracking for every link of the domain (docs/analytics.md, "Conversions"): each click
   * gets a click id, passed to the target as `conversionParam` (null: `sl_cid`). A link with its own
   * tracking keeps its own parameter.
   */
  readonly trackConversions: boolean;
  readonly conversionParam: string | null;
}

/** The query parameter of click ids unless a link or domain names another (the links' DEFAULT_CONVERSION_PARAM). */
export const DEFAULT_DOMAIN_CONVERSION_PARAM = 'sl_cid';
/** A parameter name as the links take it (links-domain's checkConversionParam). */
const CONVERSION_PARAM = /^[A-Za-z][A-Za-z0-9_.-]{0,39}$/;

/** The parameter a domain's clicks carry their click id in, or undefined when the domain does not track conversions. */
export const domainConversionParam = (s: DomainSettingsValues | undefined): string | undefined =>
  s?.trackConversions ? (s.conversionParam ?? DEFAULT_DOMAIN_CONVERSION_PARAM) : undefined;

export interface DomainSettings extends DomainSettingsValues {
  readonly domain: string;
  /** 0 while nothing was ever stored; grows by one with every change (the ETag, and the guard of concurrent edits). */
  readonly version: number;
  readonly updatedAt: Date | null;
}

export const DEFAULT_DOMAIN_SETTINGS: DomainSettingsValues = {
  notFoundRedirect: null,
  pathNotFoundRedirect: null,
  rootRedirect: null,
  expiredRedirect: null,
  branding: null,
  robots: 'disallow',
  appleAppSiteAssociation: null,
  androidAssetLinks: null,
  hsts: null,
  trackConversions: false,
  conversionParam: null,
};

export const defaultSettingsOf = (domain: string): DomainSettings => ({ domain, ...DEFAULT_DOMAIN_SETTINGS, version: 0, updatedAt: null });

/** The fields a PATCH may change; absent: unchanged, null: back to the default. */
export const DOMAIN_SETTING_FIELDS = [
  'notFoundRedirect',
  'pathNotFoundRedirect',
  'rootRedirect',
  'expiredRedirect',
  'branding',
  'robots',
  'appleAppSiteAssociation',
  'androidAssetLinks',
  'hsts',
  'trackConversions',
  'conversionParam',
] as const satisfies ReadonlyArray<keyof DomainSettingsValues>;
export type DomainSettingsEdit = Partial<Record<(typeof DOMAIN_SETTING_FIELDS)[number], unknown>>;

/** Largest well-known document, as served (JSON text): Apple reads at most 128 KB; a few KB is usual. */
export const MAX_WELL_KNOWN_BYTES = 64 * 1024;
export const MAX_BRANDING_NAME = 100;
/** Largest logo, decoded: a logo 36 px high is a few KB; every instance holds every domain's settings. */
export const MAX_LOGO_BYTES = 32 * 1024;
/** The image types a logo may be, told by their first bytes (never SVG: a document that can carry script). */
const LOGO_TYPES: ReadonlyArray<{ type: string; magic: (b: Buffer) => boolean }> = [
  { type: 'image/png', magic: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { type: 'image/jpeg', magic: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { type: 'image/gif', magic: (b) => /^GIF8[79]a$/.test(b.subarray(0, 6).toString('latin1')) },
  { type: 'image/webp', magic: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP' },
];

/**
 * The URL policy of every target a setting names (`libs/links/domain/src/url-policy.ts`, DNS
 * included when it is on), bound by the app: the normalised URL, or a DomainError.
 */
export type SettingsUrlCheck = (raw: unknown, field: string) => Promise<string>;

/** Meta database: one row per domain with settings (docs/design.md, "Domain settings"). */
export interface DomainSettingsStore {
  find(domain: string): Promise<DomainSettings | null>;
  findMany(domains: readonly string[]): Promise<DomainSettings[]>;
  /** Every stored domain and its version: what a redirect instance compares with what it holds. */
  versions(): Promise<Array<{ readonly domain: string; readonly version: number }>>;
  /**
   * Stores `settings` if the stored version is still `expectedVersion` (0: none stored); false when it changed meanwhile.
   * `audit`, when given, is written in the same transaction: both are stored, or neither (docs/design.md, "Audit log").
   */
  save(settings: DomainSettings, expectedVersion: number, audit?: AuditEntry): Promise<boolean>;
}

export const DOMAIN_SETTINGS_STORE = Symbol('DOMAIN_SETTINGS_STORE');

const invalid = (field: string, why: string) => new DomainError(ErrorCode.VALIDATION_FAILED, `${field} ${why}`, { field });
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (edit: object, field: string) => Object.prototype.hasOwnProperty.call(edit, field) && (edit as Record<string, unknown>)[field] !== undefined;

/** `#rrggbb`, any case; stored in lower case (it is written into the pages' stylesheet, so nothing else may pass). */
const ACCENT = /^#[0-9a-fA-F]{6}$/;

/**
 * The settings after an edit: each target through the URL policy, the branding and the well-known
 * documents checked for their shape and size. Absent fields are kept, null ones reset.
 */
export async function applySettingsEdit(current: DomainSettingsValues, edit: DomainSettingsEdit, checkUrl: SettingsUrlCheck): Promise<DomainSettingsValues> {
  const next: { -readonly [K in keyof DomainSettingsValues]: DomainSettingsValues[K] } = { ...current };
  for (const field of ['notFoundRedirect', 'pathNotFoundRedirect', 'rootRedirect', 'expiredRedirect'] as const) {
    if (has(edit, field)) next[field] = edit[field] === null ? null : await checkUrl(edit[field], field);
  }
  if (has(edit, 'branding')) next.branding = edit.branding === null ? null : await checkBranding(edit.branding);
  if (has(edit, 'robots')) {
    if (edit.robots !== null && edit.robots !== 'allow' && edit.robots !== 'disallow') throw invalid('robots', 'must be "allow" or "disallow"');
    next.robots = edit.robots ?? 'disallow';
  }
  if (has(edit, 'appleAppSiteAssociation'))
    next.appleAppSiteAssociation = edit.appleAppSiteAssociation === null ? null : checkAppleAppSiteAssociation(edit.appleAppSiteAssociation);
  if (has(edit, 'androidAssetLinks')) next.androidAssetLinks = edit.androidAssetLinks === null ? null : checkAndroidAssetLinks(edit.androidAssetLinks);
  if (has(edit, 'hsts')) next.hsts = edit.hsts === null ? null : checkHsts(edit.hsts);
  if (has(edit, 'trackConversions')) {
    if (edit.trackConversions !== null && typeof edit.trackConversions !== 'boolean') throw invalid('trackConversions', 'must be true or false');
    next.trackConversions = edit.trackConversions ?? false;
  }
  if (has(edit, 'conversionParam')) {
    if (edit.conversionParam !== null && (typeof edit.conversionParam !== 'string' || !CONVERSION_PARAM.test(edit.conversionParam)))
      throw invalid('conversionParam', 'must be a query parameter name: a letter, then up to 39 of A-Za-z0-9_.-');
    next.conversionParam = edit.conversionParam === DEFAULT_DOMAIN_CONVERSION_PARAM ? null : (edit.conversionParam as string | null);
  }
  return next;
}

/** `{maxAge, includeSubDomains?, preload?}`: whole seconds up to two years; preload only with a year and the subdomains. */
export function checkHsts(value: unknown): Hsts {
  if (!isObject(value)) throw invalid('hsts', 'must be an object with maxAge (seconds), includeSubDomains and preload');
  const unknown = Object.keys(value).find((k) => !['maxAge', 'includeSubDomains', 'preload'].includes(k));
  if (unknown) throw invalid(`hsts.${unknown}`, 'is not an HSTS field (maxAge, includeSubDomains, preload)');
  const { maxAge, includeSubDomains = false, preload = false } = value;
  if (typeof maxAge !== 'number' || !Number.isInteger(maxAge) || maxAge < 0 || maxAge > MAX_HSTS_SECONDS)
    throw invalid('hsts.maxAge', `must be whole seconds from 0 (HSTS off in browsers that had it) to ${MAX_HSTS_SECONDS}`);
  if (typeof includeSubDomains !== 'boolean') throw invalid('hsts.includeSubDomains', 'must be true or false');
  if (typeof preload !== 'boolean') throw invalid('hsts.preload', 'must be true or false');
  if (preload && (!includeSubDomains || maxAge < PRELOAD_MIN_SECONDS))
    throw invalid('hsts.preload', `needs includeSubDomains and a maxAge of at least ${PRELOAD_MIN_SECONDS} (a year), as the preload lists require`);
  return { maxAge, includeSubDomains, preload };
}

async function checkBranding(value: unknown): Promise<Branding | null> {
  if (!isObject(value)) throw invalid('branding', 'must be an object with name, logo and accentColor (each optional)');
  if (value.logoUrl !== undefined)
    throw invalid('branding.logoUrl', 'is no longer taken: send the image itself as branding.logo, a data: URI (visitors then fetch nothing from elsewhere)');
  const unknown = Object.keys(value).find((k) => !['name', 'logo', 'accentColor'].includes(k));
  if (unknown) throw invalid(`branding.${unknown}`, 'is not a branding field (name, logo, accentColor)');
  let name: string | null = null;
  if (value.name != null) {
    if (typeof value.name !== 'string' || value.name.trim() === '' || value.name.trim().length > MAX_BRANDING_NAME || /[\u0000-\u001f\u007f]/.test(value.name))
      throw invalid('branding.name', `must be 1-${MAX_BRANDING_NAME} printable characters`);
    name = value.name.trim();
  }
  const logo = value.logo == null ? null : checkLogo(value.logo);
  let accentColor: string | null = null;
  if (value.accentColor != null) {
    if (typeof value.accentColor !== 'string' || !ACCENT.test(value.accentColor)) throw invalid('branding.accentColor', 'must be a colour as #rrggbb');
    accentColor = value.accentColor.toLowerCase();
  }
  return name === null && logo === null && accentColor === null ? null : { name, logo, accentColor };
}

/** A logo as `data:image/<png|jpeg|gif|webp>;base64,…`, its bytes of the type it names, at most MAX_LOGO_BYTES; written back in canonical base64. */
function checkLogo(value: unknown): string {
  const field = 'branding.logo';
  const m = typeof value === 'string' ? /^data:(image\/[a-z]+);base64,([A-Za-z0-9+/]*={0,2})$/.exec(value.replace(/\s+/g, '')) : null;
  if (!m) throw invalid(field, 'must be a PNG, JPEG, GIF or WebP image as a data: URI (data:image/png;base64,…)');
  const bytes = Buffer.from(m[2], 'base64');
  if (bytes.length > MAX_LOGO_BYTES) throw invalid(field, `must be at most ${MAX_LOGO_BYTES / 1024} KB (this one is ${Math.ceil(bytes.length / 1024)} KB)`);
  const kind = LOGO_TYPES.find((t) => t.magic(bytes));
  if (!kind) throw invalid(field, 'must be a PNG, JPEG, GIF or WebP image (SVG is not taken: it may carry script)');
  if (kind.type !== m[1]) throw invalid(field, `says ${m[1]} but is ${kind.type}`);
  return `data:${kind.type};base64,${bytes.toString('base64')}`;
}

/** Branding as a stored row has it: only its known fields (a logo URL of before logos were carried is dropped). */
export function storedBranding(value: unknown): Branding | null {
  if (!isObject(value)) return null;
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  const branding = { name: text(value.name), logo: text(value.logo), accentColor: text(value.accentColor) };
  return branding.name === null && branding.logo === null && branding.accentColor === null ? null : branding;
}

/** A document within MAX_WELL_KNOWN_BYTES once written as JSON. */
function bounded(field: string, value: unknown): void {
  if (Buffer.byteLength(JSON.stringify(value)) > MAX_WELL_KNOWN_BYTES) throw invalid(field, `must be at most ${MAX_WELL_KNOWN_BYTES} bytes as JSON`);
}

const stringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string' && s.length > 0 && s.length <= 1024);

/** Sections of an apple-app-site-association file (Apple's "Supporting associated domains"). */
const AASA_SECTIONS = ['applinks', 'webcredentials', 'appclips', 'activitycontinuation'];
/** An app id: team id, a dot, bundle id (`ABCDE12345.com.example.app`). */
const APP_ID = /^[A-Z0-9]{10}\.[A-Za-z0-9.-]{1,200}$/;

/**
 * The apple-app-site-association document: an object of the sections Apple reads. `applinks.details`
 * names apps by `appID` or `appIDs` with their `paths` or `components`; the other sections list app ids
 * in `apps`. Anything else is refused, so that what is served is what iOS expects.
 */
export function checkAppleAppSiteAssociation(value: unknown): JsonObject {
  const field = 'appleAppSiteAssociation';
  if (!isObject(value)) throw invalid(field, 'must be a JSON object (the apple-app-site-association file)');
  const sections = Object.keys(value);
  if (sections.length === 0) throw invalid(field, `must have at least one of ${AASA_SECTIONS.join(', ')}`);
  for (const section of sections) {
    if (!AASA_SECTIONS.includes(section)) throw invalid(`${field}.${section}`, `is not a section of the file (${AASA_SECTIONS.join(', ')})`);
    const body = value[section];
    if (!isObject(body)) throw invalid(`${field}.${section}`, 'must be an object');
    if (section === 'applinks') {
      if (body.apps !== undefined && !(Array.isArray(body.apps) && body.apps.length === 0))
        throw invalid(`${field}.applinks.apps`, 'must be an empty array when given (as Apple requires)');
      if (!Array.isArray(body.details) || body.details.length === 0 || body.details.length > 100)
        throw invalid(`${field}.applinks.details`, 'must be an array of 1-100 entries');
      body.details.forEach((detail, i) => {
        const at = `${field}.applinks.details[${i}]`;
        if (!isObject(detail)) throw invalid(at, 'must be an object');
        const ids = detail.appIDs ?? (detail.appID === undefined ? undefined : [detail.appID]);
        if (!stringArray(ids) || ids.length === 0 || !ids.every((id) => APP_ID.test(id)))
          throw invalid(at, 'must name its app as appID or appIDs: "<team id>.<bundle id>"');
        if (detail.paths !== undefined && !stringArray(detail.paths)) throw invalid(`${at}.paths`, 'must be an array of strings');
        if (detail.components !== undefined && !(Array.isArray(detail.components) && detail.components.every(isObject)))
          throw invalid(`${at}.components`, 'must be an array of objects');
        if (detail.paths === undefined && detail.components === undefined) throw invalid(at, 'must have paths or components');
      });
    } else if (!stringArray(body.apps) || !body.apps.every((id) => APP_ID.test(id))) {
      throw invalid(`${field}.${section}.apps`, 'must be an array of app ids "<team id>.<bundle id>"');
    }
  }
  bounded(field, value);
  return value as JsonObject;
}

const FINGERPRINT = /^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$/;
const PACKAGE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;

/**
 * The Digital Asset Links statements of `/.well-known/assetlinks.json`: an array of
 * `{relation: [...], target: {namespace: "android_app", package_name, sha256_cert_fingerprints}}`
 * (or a `web` target with its `site`).
 */
export function checkAndroidAssetLinks(value: unknown): JsonValue[] {
  const field = 'androidAssetLinks';
  if (!Array.isArray(value) || value.length === 0 || value.length > 100)
    throw invalid(field, 'must be an array of 1-100 statements (the assetlinks.json file)');
  value.forEach((statement, i) => {
    const at = `${field}[${i}]`;
    if (!isObject(statement)) throw invalid(at, 'must be an object with relation and target');
    if (!stringArray(statement.relation) || statement.relation.length === 0) throw invalid(`${at}.relation`, 'must be a non-empty array of strings');
    const target = statement.target;
    if (!isObject(target)) throw invalid(`${at}.target`, 'must be an object');
    if (target.namespace === 'android_app') {
      if (typeof target.package_name !== 'string' || !PACKAGE.test(target.package_name))
        throw invalid(`${at}.target.package_name`, 'must be an Android package name');
      const prints = target.sha256_cert_fingerprints;
      if (!stringArray(prints) || prints.length === 0 || !prints.every((p) => FINGERPRINT.test(p)))
        throw invalid(`${at}.target.sha256_cert_fingerprints`, 'must be SHA-256 fingerprints as 32 hex pairs joined by ":"');
    } else if (target.namespace === 'web') {
      if (typeof target.site !== 'string' || !/^https?:\/\/[^\s/]+$/.test(target.site))
        throw invalid(`${at}.target.site`, 'must be an origin such as https://example.com');
    } else {
      throw invalid(`${at}.target.namespace`, 'must be "android_app" or "web"');
    }
  });
  bounded(field, value);
  return value as JsonValue[];
}
