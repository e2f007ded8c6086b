import { isIP } from 'net';
import { DomainError, ErrorCode, parseIsoInstant } from '@shortlink/core';
import { COUNTRY_CODE, DeviceTarget, PlatformBrowser, PlatformSystem } from '@shortlink/visitors-domain';

/**
 * Redirect rules (docs/design.md, "Redirect rules"): an ordered list of targets, each with the
 * conditions a request must all meet; the first rule whose conditions all hold gives the target,
 * else the link's own URL (or its A/B variants). Country and device targets are rules of one
 * condition each, and `geoTargets` / `deviceTargets` remain the API's shorthand for them.
 */

/** The device classes a rule can name: iOS, Android, either of them, or neither (every other platform). */
export const RULE_DEVICES = ['ios', 'android', 'mobile', 'desktop'] as const;
export type RuleDevice = (typeof RULE_DEVICES)[number];
/** Operating systems a rule can name (ua-parser's families, as Shlink names them). */
export const RULE_SYSTEMS: readonly PlatformSystem[] = ['windows', 'macos', 'linux', 'chromeos', 'ios', 'android'];
export type RuleSystem = PlatformSystem;
/** Browsers a rule can name (Shlink's list). */
export const RULE_BROWSERS: readonly PlatformBrowser[] = ['chrome', 'firefox', 'edge', 'safari', 'opera', 'android_browser'];
export type RuleBrowser = PlatformBrowser;

export type RedirectCondition =
  /** The visitor accepts this language (`de`, or `de-AT` for that region only) with a quality of at least 0.9. */
  | { readonly type: 'language'; readonly value: string }
  /** The query string has the parameter `name`; with `value`, one occurrence of it equal to `value` ('' : present without a value). */
  | { readonly type: 'query-param'; readonly name: string; readonly value?: string }
  /** The client address is this address, in this CIDR block, or matches an IPv4 pattern with `*` octets. */
  | { readonly type: 'ip-address'; readonly value: string }
  /** Now is before (after) this instant (ISO 8601, stored as UTC). */
  | { readonly type: 'before-date'; readonly value: string }
  | { readonly type: 'after-date'; readonly value: string }
  | { readonly type: 'device'; readonly value: RuleDevice }
  | { readonly type: 'os'; readonly value: RuleSystem }
  | { readonly type: 'browser'; readonly value: RuleBrowser }
  /** ISO 3166-1 alpha-2, from the IP database. */
  | { readonly type: 'country'; readonly value: string }
  /** First-level subdivision and city names in the IP database's spelling, compared without case (GEO_DATABASE=city). */
  | { readonly type: 'region'; readonly value: string }
  | { readonly type: 'city'; readonly value: string };

export type RedirectConditionType = RedirectCondition['type'];

export interface RedirectRule {
  /** The target when every condition holds (through the URL policy like every target). */
  readonly url: string;
  readonly conditions: readonly RedirectCondition[];
}

export const RULE_LIMITS = {
  /** Enough for the old limit of 60 country targets plus device targets and rules of their own. */
  rules: 100,
  conditions: 10,
  name: 100,
  value: 500,
} as const;

export const CONDITION_TYPES: readonly RedirectConditionType[] = [
  'language',
  'query-param',
  'ip-address',
  'before-date',
  'after-date',
  'device',
  'os',
  'browser',
  'country',
  'region',
  'city',
];

const invalid = (field: string, why: string) => new DomainError(ErrorCode.VALIDATION_FAILED, `${field} ${why}`, { field });
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const printable = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max && !/[\u0000-\u001f\u007f]/.test(v);

/** `de`, `de-AT`, `zh-Hant`: a language and optionally a region or script, normalised to `de-AT` (case of BCP 47). */
const LANGUAGE = /^([A-Za-z]{2,3})(?:[-_]([A-Za-z0-9]{2,8}))?$/;
/** An IPv4 pattern of Shlink's: octets or `*` (`192.168.*.*`). */
const IPV4_WILDCARD = /^(\d{1,3}|\*)\.(\d{1,3}|\*)\.(\d{1,3}|\*)\.(\d{1,3}|\*)$/;

export function normaliseLanguage(value: string): string | null {
  const m = LANGUAGE.exec(value.trim());
  if (!m) return null;
  const sub = m[2];
  if (sub === undefined) return m[1].toLowerCase();
  return `${m[1].toLowerCase()}-${sub.length === 2 ? sub.toUpperCase() : sub[0].toUpperCase() + sub.slice(1).toLowerCase()}`;
}

/** An address, a CIDR block or an IPv4 wildcard pattern, as stored; null when it is none of them. */
export function normaliseAddressPattern(value: string): string | null {
  const text = value.trim();
  const slash = text.indexOf('/');
  if (slash >= 0) {
    const address = text.slice(0, slash);
    const bits = text.slice(slash + 1);
    const family = isIP(address);
    if (family === 0 || !/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128)) return null;
    return `${address.toLowerCase()}/${Number(bits)}`;
  }
  if (isIP(text) !== 0) return text.toLowerCase();
  const m = IPV4_WILDCARD.exec(text);
  if (m && text.includes('*') && m.slice(1).every((o) => o === '*' || Number(o) <= 255)) return text;
  return null;
}

function checkCondition(value: unknown, at: string): RedirectCondition {
  if (!isObject(value)) throw invalid(at, 'must be an object with a type');
  const type = value.type;
  if (typeof type !== 'string' || !(CONDITION_TYPES as readonly string[]).includes(type))
    throw invalid(`${at}.type`, `must be one of ${CONDITION_TYPES.join(', ')}`);
  const keys = type === 'query-param' ? ['type', 'name', 'value'] : ['type', 'value'];
  const unknown = Object.keys(value).find((k) => !keys.includes(k));
  if (unknown !== undefined) throw invalid(`${at}.${unknown}`, `is not a field of a ${type} condition (${keys.join(', ')})`);
  const v = value.value;
  const oneOf = <T extends string>(list: readonly T[]): T => {
    const text = typeof v === 'string' ? v.trim().toLowerCase() : undefined;
    if (text === undefined || !(list as readonly string[]).includes(text)) throw invalid(`${at}.value`, `must be one of ${list.join(', ')}`);
    return text as T;
  };
  const name = (): string => {
    if (!printable(v, RULE_LIMITS.name) || v.trim() === '') throw invalid(`${at}.value`, `must be 1-${RULE_LIMITS.name} printable characters`);
    return v.trim();
  };
  switch (type) {
    case 'language': {
      const language = typeof v === 'string' ? normaliseLanguage(v) : null;
      if (language === null) throw invalid(`${at}.value`, 'must be a language tag such as "de" or "de-AT"');
      return { type, value: language };
    }
    case 'query-param': {
      const param = value.name;
      if (!printable(param, RULE_LIMITS.name) || param === '') throw invalid(`${at}.name`, `must be 1-${RULE_LIMITS.name} printable characters`);
      if (v === undefined || v === null) return { type, name: param };
      if (!printable(v, RULE_LIMITS.value)) throw invalid(`${at}.value`, `must be at most ${RULE_LIMITS.value} printable characters`);
      return { type, name: param, value: v };
    }
    case 'ip-address': {
      const pattern = typeof v === 'string' ? normaliseAddressPattern(v) : null;
      if (pattern === null) throw invalid(`${at}.value`, 'must be an IP address, a CIDR block (10.0.0.0/8) or an IPv4 pattern with * octets (192.168.*.*)');
      return { type, value: pattern };
    }
    case 'before-date':
    case 'after-date': {
      const ms = typeof v === 'string' ? parseIsoInstant(v) : null;
      if (ms === null) throw invalid(`${at}.value`, 'must be an ISO 8601 date-time with a zone, e.g. "2027-01-31T12:00:00Z"');
      return { type, value: new Date(ms).toISOString() };
    }
    case 'device':
      return { type, value: oneOf(RULE_DEVICES) };
    case 'os':
      return { type, value: oneOf(RULE_SYSTEMS) };
    case 'browser':
      return { type, value: oneOf(RULE_BROWSERS) };
    case 'country': {
      const cc = typeof v === 'string' ? v.trim().toUpperCase() : '';
      if (!COUNTRY_CODE.test(cc)) throw invalid(`${at}.value`, 'must be an ISO 3166-1 alpha-2 country code');
      return { type, value: cc };
    }
    case 'region':
    case 'city':
      return { type, value: name() };
  }
  throw invalid(`${at}.type`, `must be one of ${CONDITION_TYPES.join(', ')}`);
}

/** Checks a target URL of an option (the URL policy, DNS included when it is on); resolves to the normalised URL. */
export type RuleUrlCheck = (url: unknown, field: string) => Promise<string>;

/**
 * `redirectRules`: at most 100 rules `{url, conditions}` of 1-10 conditions each; every URL through
 * the URL policy (checked side by side, the first failing one in order is the error). null: none.
 */
export async function checkRedirectRules(value: unknown, url: RuleUrlCheck): Promise<RedirectRule[] | null> {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw invalid('redirectRules', 'must be an array of {url, conditions}');
  if (value.length > RULE_LIMITS.rules) throw invalid('redirectRules', `may hold at most ${RULE_LIMITS.rules} rules`);
  const shapes = value.map((rule: unknown, i) => {
    const at = `redirectRules.${i}`;
    if (!isObject(rule) || Object.keys(rule).some((k) => k !== 'url' && k !== 'conditions')) throw invalid(at, 'must be {url, conditions}');
    const conditions = rule.conditions;
    if (!Array.isArray(conditions) || conditions.length === 0 || conditions.length > RULE_LIMITS.conditions)
      throw invalid(
        `${at}.conditions`,
        `must be 1 to ${RULE_LIMITS.conditions} conditions (a rule without one would always win: change the link's url instead)`,
      );
    return { url: rule.url, conditions: conditions.map((c: unknown, j) => checkCondition(c, `${at}.conditions.${j}`)) };
  });
  const settled = await Promise.allSettled(shapes.map((rule, i) => url(rule.url, `redirectRules.${i}.url`)));
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  const rules = shapes.map((rule, i) => ({ url: (settled[i] as PromiseFulfilledResult<string>).value, conditions: rule.conditions }));
  return rules.length ? rules : null;
}

// ---- the shorthand of the API: a country or a device target is a rule of one condition

const isCountryRule = (rule: RedirectRule): boolean => rule.conditions.length === 1 && rule.conditions[0].type === 'country';
const DEVICE_TARGETS: readonly DeviceTarget[] = ['ios', 'android', 'desktop'];
const isDeviceRule = (rule: RedirectRule): boolean =>
  rule.conditions.length === 1 && rule.conditions[0].type === 'device' && (DEVICE_TARGETS as readonly string[]).includes(rule.conditions[0].value);
const keyOf = (rule: RedirectRule): string => rule.conditions[0].value as string;

/** `geoTargets`: the rules of one country condition, as country -> URL (the first rule of a country wins); null: none. */
export function geoTargetsOf(rules: readonly RedirectRule[] | null): Readonly<Record<string, string>> | null {
  const geo: Record<string, string> = {};
  for (const rule of rules ?? []) if (isCountryRule(rule) && !(keyOf(rule) in geo)) geo[keyOf(rule)] = rule.url;
  return Object.keys(geo).length ? geo : null;
}

/** `deviceTargets`: the rules of one `ios`, `android` or `desktop` device condition, as device -> URL; null: none. */
export function deviceTargetsOf(rules: readonly RedirectRule[] | null): Readonly<Partial<Record<DeviceTarget, string>>> | null {
  const devices: Partial<Record<DeviceTarget, string>> = {};
  for (const rule of rules ?? []) if (isDeviceRule(rule) && !(keyOf(rule) in devices)) devices[keyOf(rule) as DeviceTarget] = rule.url;
  return Object.keys(devices).length ? devices : null;
}

/**
 * The rules after a shorthand was set (`geoTargets` or `deviceTargets`): the rules of that kind
 * whose key is still named keep their place with the new URL, the others go, and keys not held yet
 * come right after the last rule of that kind (none: country rules before the first device rule,
 * device rules at the end). Sending back what was read changes nothing.
 */
export function withShorthand(
  rules: readonly RedirectRule[] | null,
  kind: 'country' | 'device',
  targets: Readonly<Record<string, string>> | null,
): RedirectRule[] | null {
  const current = rules ?? [];
  const ofKind = kind === 'country' ? isCountryRule : isDeviceRule;
  const wanted = new Map(Object.entries(targets ?? {}));
  const kept: RedirectRule[] = [];
  let insertAt = -1;
  for (const rule of current) {
    if (!ofKind(rule)) {
      kept.push(rule);
      continue;
    }
    const url = wanted.get(keyOf(rule));
    wanted.delete(keyOf(rule));
    if (url !== undefined) kept.push({ url, conditions: rule.conditions });
    insertAt = kept.length;
  }
  if (insertAt < 0) insertAt = kind === 'country' ? firstIndex(kept, isDeviceRule) : kept.length;
  const added = [...wanted].map(([key, url]) => ({ url, conditions: [{ type: kind, value: key } as RedirectCondition] }));
  const next = [...kept.slice(0, insertAt), ...added, ...kept.slice(insertAt)];
  return next.length ? next : null;
}

const firstIndex = (rules: readonly RedirectRule[], test: (rule: RedirectRule) => boolean): number => {
  const i = rules.findIndex(test);
  return i < 0 ? rules.length : i;
};

/**
 * The rules of a link stored (or cached) before redirect rules existed: its country targets, then
 * its device targets, the order they were looked at in (docs/design.md, "Redirect rules").
 */
export function rulesFromTargets(
  geoTargets: Readonly<Record<string, string>> | null | undefined,
  deviceTargets: Readonly<Partial<Record<DeviceTarget, string>>> | null | undefined,
): RedirectRule[] | null {
  const rules: RedirectRule[] = [];
  for (const [country, url] of Object.entries(geoTargets ?? {})) rules.push({ url, conditions: [{ type: 'country', value: country }] });
  for (const device of DEVICE_TARGETS) {
    const url = deviceTargets?.[device];
    if (url !== undefined) rules.push({ url, conditions: [{ type: 'device', value: device }] });
  }
  return rules.length ? rules : null;
}
