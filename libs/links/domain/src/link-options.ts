import { DomainError, ErrorCode, parseIsoInstant } from '@shortlink/core';
import { COUNTRY_CODE, DeviceTarget } from '@shortlink/visitors-domain';
import { AppTargets, LinkSocial, LinkStatus, RedirectType, Utm, Variant } from './link';
import { MAX_URL_LENGTH } from '@shortlink/url-policy';

/** Latest accepted expiry: far enough for any real campaign, inside every store's date range. */
const MAX_EXPIRY_MS = Date.UTC(9999, 11, 31);
/** An expiry must leave at least this long, or the link would be dead on arrival (clock skew). */
const MIN_LIFETIME_MS = 1000;

export const LIMITS = {
  title: 200,
  tags: 10,
  tag: 50,
  maxClicks: 1_000_000_000,
  passwordMin: 4,
  passwordMax: 128,
  utmValue: 200,
  geoTargets: 60,
  variants: 10,
  variantWeight: 1000,
  clicksPerIpPerMinute: 10_000,
  passwordRememberHours: 720,
  socialTitle: 200,
  socialDescription: 500,
} as const;

/** How long a right password is remembered when the link's owner does not say (docs/design.md, "Link options"). */
export const DEFAULT_PASSWORD_REMEMBER_HOURS = 12;

export const UTM_KEYS = ['source', 'medium', 'campaign', 'term', 'content'] as const;
export const DEVICE_TARGETS: readonly DeviceTarget[] = ['ios', 'android', 'desktop'];

const invalid = (field: string, why: string) => new DomainError(ErrorCode.VALIDATION_FAILED, `${field} ${why}`, { field });
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** 302 unless asked for 301 (a 301 is cached by browsers, so later clicks never reach us). */
export function checkRedirectType(value: unknown): RedirectType {
  if (value === undefined || value === null) return 302;
  if (value === 301 || value === 302) return value;
  throw invalid('redirectType', 'must be 301 or 302');
}

/**
 * An ISO 8601 instant with an explicit zone (`2027-01-31T12:00:00Z`), in the future; null for none.
 * Stored to the millisecond; the redirect answers 410 LINK_EXPIRED from that instant on.
 */
export function checkExpiresAt(value: unknown, nowMs: number): Date | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !/T/.test(value)) throw invalid('expiresAt', 'must be an ISO 8601 date-time with a zone, e.g. "2027-01-31T12:00:00Z"');
  const ms = parseIsoInstant(value);
  if (ms === null)
    throw invalid(
      'expiresAt',
      /(Z|[+-]\d{2}:\d{2})$/.test(value)
        ? 'is not a valid date-time before the year 10000'
        : 'must be an ISO 8601 date-time with a zone, e.g. "2027-01-31T12:00:00Z"',
    );
  if (ms > MAX_EXPIRY_MS) throw invalid('expiresAt', 'is not a valid date-time before the year 10000');
  if (ms < nowMs + MIN_LIFETIME_MS) throw invalid('expiresAt', 'must be in the future');
  return new Date(ms);
}

export function checkTitle(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalid('title', 'must be a string');
  const title = value.trim();
  if (title.length > LIMITS.title) throw invalid('title', `must be at most ${LIMITS.title} characters`);
  // Titles end up in HTML pages and CSV exports; control characters have no place in them.
  if (/[\u0000-\u001f\u007f]/.test(title)) throw invalid('title', 'must not contain control characters');
  return title === '' ? null : title;
}

const TAG = /^[\p{L}\p{N}][\p{L}\p{N} _.:/-]{0,49}$/u;

/** At most 10 tags of 1-50 letters, digits, spaces and `_ . : / -`; duplicates removed, order kept. */
export function checkTags(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid('tags', 'must be an array of strings');
  const tags: string[] = [];
  for (const t of value) {
    if (typeof t !== 'string' || !TAG.test(t.trim()))
      throw invalid('tags', `must be 1-${LIMITS.tag} letters, digits, spaces or "_ . : / -", starting with a letter or digit`);
    const tag = t.trim();
    if (!tags.includes(tag)) tags.push(tag);
  }
  if (tags.length > LIMITS.tags) throw invalid('tags', `may hold at most ${LIMITS.tags} tags`);
  return tags;
}

const positiveInt =
  (field: string, max: number) =>
  (value: unknown): number | null => {
    if (value === undefined || value === null) return null;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) throw invalid(field, `must be an integer from 1 to ${max}`);
    return value;
  };

export const checkMaxClicks = positiveInt('maxClicks', LIMITS.maxClicks);
export const checkClicksPerIpPerMinute = positiveInt('clicksPerIpPerMinute', LIMITS.clicksPerIpPerMinute);

/** Hours a right password is remembered, 0 (never) to 720 (30 days); null: the default (12 h). */
export function checkPasswordRememberHours(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > LIMITS.passwordRememberHours)
    throw invalid('passwordRememberHours', `must be an integer from 0 to ${LIMITS.passwordRememberHours}`);
  return value;
}

/** The password as given (it is hashed before it is stored); null for none. */
export function checkPassword(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length < LIMITS.passwordMin || value.length > LIMITS.passwordMax)
    throw invalid('password', `must be a string of ${LIMITS.passwordMin} to ${LIMITS.passwordMax} characters`);
  return value;
}

/**
 * The bounds of an imported argon2id hash's cost (docs/design.md, "Import and export"). The verifier
 * runs a hash with the parameters written in it, so a hash with a huge memory or pass count would
 * make every password check at the redirect cost seconds or gigabytes. Our own hashes use 19 MiB and
 * 2 passes (the argon2 library's OWASP defaults); an import may bring up to four times that work.
 */
export const PASSWORD_HASH_BOUNDS = { maxMemoryKiB: 65_536, maxPasses: 10, maxLanes: 4, maxWork: 4 * 19_456 * 2 } as const;

/** `$argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>`, salt 8-64 and hash 16-64 bytes as unpadded base64. */
const ARGON2ID_PHC = /^\$argon2id\$v=19\$m=([1-9]\d{0,6}),t=([1-9]\d{0,2}),p=([1-9]\d{0,2})\$([A-Za-z0-9+/]{11,86})\$([A-Za-z0-9+/]{22,86})$/;

/**
 * An argon2id hash carried over from an export, as the PHC string the verifier checks; null for
 * none. Refused unless it is exactly that shape, version 19, with a bounded cost. The value is never
 * echoed in the error (it is a credential).
 */
export function checkPasswordHash(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const m = typeof value === 'string' ? ARGON2ID_PHC.exec(value) : null;
  const [memory, passes, lanes] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
  const b = PASSWORD_HASH_BOUNDS;
  if (!m || m[4].length % 4 === 1 || m[5].length % 4 === 1)
    throw invalid('passwordHash', 'must be an argon2id hash in PHC form ($argon2id$v=19$m=…,t=…,p=…$salt$hash)');
  if (memory < 8 * lanes || memory > b.maxMemoryKiB || passes > b.maxPasses || lanes > b.maxLanes || memory * passes > b.maxWork) {
    throw invalid('passwordHash', `must cost at most m=${b.maxMemoryKiB} KiB, t=${b.maxPasses}, p=${b.maxLanes} and m×t ≤ ${b.maxWork} (m ≥ 8×p)`);
  }
  return value as string;
}

export function checkUtm(value: unknown): Utm | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw invalid('utm', `must be an object with any of ${UTM_KEYS.join(', ')}`);
  const utm: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    if (!(UTM_KEYS as readonly string[]).includes(key)) throw invalid('utm', `has an unknown key "${key}" (allowed: ${UTM_KEYS.join(', ')})`);
    if (v === null || v === undefined) continue;
    if (typeof v !== 'string' || v.trim() === '' || v.length > LIMITS.utmValue || /[\u0000-\u001f\u007f]/.test(v))
      throw invalid(`utm.${key}`, `must be 1-${LIMITS.utmValue} printable characters`);
    utm[key] = v.trim();
  }
  return Object.keys(utm).length ? utm : null;
}

export function checkForwardQuery(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value !== 'boolean') throw invalid('forwardQuery', 'must be true or false');
  return value;
}

/** Whether the redirect gives each click a click id for conversions (docs/analytics.md, "Conversions"); default false. */
export function checkTrackConversions(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid('trackConversions', 'must be true or false');
  return value;
}

/** The query parameter that carries the click id when none is set (as ad platforms pass `gclid`). */
export const DEFAULT_CONVERSION_PARAM = 'sl_cid';
const CONVERSION_PARAM = /^[A-Za-z][A-Za-z0-9_.-]{0,39}$/;

/** The query parameter name of the click id: a letter, then up to 39 letters, digits or `_ . -`; null: the default `sl_cid`. */
export function checkConversionParam(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !CONVERSION_PARAM.test(value))
    throw invalid('conversionParam', 'must be a letter followed by at most 39 letters, digits or "_ . -"');
  return value === DEFAULT_CONVERSION_PARAM ? null : value;
}

/** Whether the domain's robots.txt lets crawlers fetch the link (docs/design.md, "Domain settings"); default false. */
export function checkCrawlable(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid('crawlable', 'must be true or false');
  return value;
}

/** Checks a target URL of an option (the URL policy, DNS included when it is on); resolves to the normalised URL. */
export type UrlCheck = (url: unknown, field: string) => Promise<string>;

/**
 * The results of an option's entries, checked side by side (a DNS answer each, when it is on); the
 * first failing entry in order is the error, as if they were checked one after the other.
 */
async function inOrder<T>(entries: ReadonlyArray<Promise<T>>): Promise<T[]> {
  const settled = await Promise.allSettled(entries);
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

export async function checkGeoTargets(value: unknown, url: UrlCheck): Promise<Record<string, string> | null> {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw invalid('geoTargets', 'must be an object of ISO 3166-1 alpha-2 country code -> URL');
  const entries = Object.entries(value);
  if (entries.length > LIMITS.geoTargets) throw invalid('geoTargets', `may name at most ${LIMITS.geoTargets} countries`);
  const checked = await inOrder(
    entries.map(async ([country, target]) => {
      const cc = country.toUpperCase();
      if (!COUNTRY_CODE.test(cc)) throw invalid('geoTargets', `has "${country}", not an ISO 3166-1 alpha-2 country code`);
      return [cc, await url(target, `geoTargets.${cc}`)] as const;
    }),
  );
  return entries.length ? Object.fromEntries(checked) : null;
}

export async function checkDeviceTargets(value: unknown, url: UrlCheck): Promise<Partial<Record<DeviceTarget, string>> | null> {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw invalid('deviceTargets', `must be an object with any of ${DEVICE_TARGETS.join(', ')}`);
  const checked = await inOrder(
    Object.entries(value).map(async ([device, target]) => {
      if (!(DEVICE_TARGETS as readonly string[]).includes(device))
        throw invalid('deviceTargets', `has an unknown device "${device}" (allowed: ${DEVICE_TARGETS.join(', ')})`);
      return [device, await url(target, `deviceTargets.${device}`)] as const;
    }),
  );
  return checked.length ? (Object.fromEntries(checked) as Partial<Record<DeviceTarget, string>>) : null;
}

export async function checkVariants(value: unknown, url: UrlCheck): Promise<Variant[] | null> {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length === 0 || value.length > LIMITS.variants)
    throw invalid('variants', `must be 1 to ${LIMITS.variants} of {url, weight}`);
  return inOrder(
    value.map(async (v: unknown, i) => {
      if (!isObject(v) || Object.keys(v).some((k) => k !== 'url' && k !== 'weight')) throw invalid(`variants.${i}`, 'must be {url, weight}');
      const weight = v.weight;
      if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1 || weight > LIMITS.variantWeight)
        throw invalid(`variants.${i}.weight`, `must be an integer from 1 to ${LIMITS.variantWeight}`);
      return { url: await url(v.url, `variants.${i}.url`), weight };
    }),
  );
}

/** A printable text of 1 to `max` characters (trimmed), without control characters; null for none. */
const socialText = (value: unknown, field: string, max: number): string | null => {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.trim().length > max || /[\u0000-\u001f\u007f]/.test(value))
    throw invalid(field, `must be a string of at most ${max} printable characters`);
  return value.trim() === '' ? null : value.trim();
};

/**
 * The card unfurling bots get (docs/design.md, "Link options"): `{title, description?, image?}`;
 * the title is required, the image passes the URL policy like every target. null for none.
 */
export async function checkSocial(value: unknown, url: UrlCheck): Promise<LinkSocial | null> {
  if (value === undefined || value === null) return null;
  if (!isObject(value) || Object.keys(value).some((k) => k !== 'title' && k !== 'description' && k !== 'image'))
    throw invalid('social', 'must be {title, description, image}');
  const title = socialText(value.title, 'social.title', LIMITS.socialTitle);
  if (title === null) throw invalid('social.title', `is required, 1 to ${LIMITS.socialTitle} characters`);
  const description = socialText(value.description, 'social.description', LIMITS.socialDescription);
  const image = value.image === undefined || value.image === null ? null : await url(value.image, 'social.image');
  return { title, description, image };
}

export const APP_DEVICES = ['ios', 'android'] as const;

/**
 * Schemes no app target may use (docs/design.md, "Link options"): they run code or read local data
 * in the browser (`javascript:`, `data:`, `vbscript:`, `file:`, `blob:`, `about:`, …), or carry a
 * fallback of their own that would pass by the URL policy (Android's `intent:`). http and https go
 * through the URL policy like every target.
 */
const REFUSED_SCHEMES: ReadonlySet<string> = new Set([
  'javascript',
  'data',
  'vbscript',
  'file',
  'blob',
  'about',
  'filesystem',
  'view-source',
  'jar',
  'intent',
  'chrome',
  'chrome-extension',
  'moz-extension',
  'resource',
  'content',
  'ftp',
  'ws',
  'wss',
]);
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

const refusedScheme = (field: string, scheme: string) =>
  new DomainError(ErrorCode.URL_NOT_ALLOWED, `${field}: the ${scheme}: scheme cannot open an app`, { reason: 'dangerous-scheme', field });

/**
 * One app target: an https universal link / app link through the URL policy (the OS opens them
 * only over https), or an app URL scheme (`myapp://product/42`): printable, at most 2048 characters
 * once normalised, without credentials, and not one of REFUSED_SCHEMES. A custom scheme is accepted
 * here only, never as a link's target.
 */
async function checkAppTarget(value: unknown, field: string, url: UrlCheck): Promise<string> {
  if (typeof value !== 'string' || value.trim() === '') throw new DomainError(ErrorCode.INVALID_URL, `${field} must be a non-empty string`, { field });
  const text = value.trim();
  const scheme = SCHEME.exec(text)?.[1].toLowerCase();
  if (scheme === undefined) throw new DomainError(ErrorCode.INVALID_URL, `${field} must be an app URL (myapp://…) or an https link`, { field });
  if (scheme === 'https') return url(text, field);
  if (scheme === 'http') throw new DomainError(ErrorCode.INVALID_URL, `${field}: a universal link or app link is https`, { field });
  if (REFUSED_SCHEMES.has(scheme)) throw refusedScheme(field, scheme);
  if (/[\u0000-\u001f\u007f]/.test(text))
    throw new DomainError(ErrorCode.URL_NOT_ALLOWED, `${field} contains control characters`, { reason: 'control-characters', field });
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new DomainError(ErrorCode.INVALID_URL, `${field} is not a valid app URL`, { field });
  }
  if (parsed.username || parsed.password)
    throw new DomainError(ErrorCode.URL_NOT_ALLOWED, `${field}: URLs with embedded credentials are not accepted`, { reason: 'credentials', field });
  const normalised = parsed.toString();
  if (normalised.length > MAX_URL_LENGTH || normalised === `${scheme}:`)
    throw new DomainError(ErrorCode.INVALID_URL, `${field} must be an app URL of at most ${MAX_URL_LENGTH} characters`, { field });
  return normalised;
}

/** `appTargets: {ios, android}` (docs/design.md, "Link options"); null for none. */
export async function checkAppTargets(value: unknown, url: UrlCheck): Promise<AppTargets | null> {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw invalid('appTargets', `must be an object with any of ${APP_DEVICES.join(', ')}`);
  const checked = await inOrder(
    Object.entries(value)
      .filter(([, target]) => target !== null && target !== undefined)
      .map(async ([device, target]) => {
        if (!(APP_DEVICES as readonly string[]).includes(device))
          throw invalid('appTargets', `has an unknown device "${device}" (allowed: ${APP_DEVICES.join(', ')})`);
        return [device, await checkAppTarget(target, `appTargets.${device}`, url)] as const;
      }),
  );
  return checked.length ? (Object.fromEntries(checked) as AppTargets) : null;
}

/** What a PATCH may set as `status`: `expired` belongs to the expiry job. */
export function checkStatus(value: unknown): Exclude<LinkStatus, 'expired'> {
  if (value !== 'active' && value !== 'disabled') throw invalid('status', 'must be "active" or "disabled"');
  return value;
}
