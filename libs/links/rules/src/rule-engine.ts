import { isIP } from 'net';
import type { LRUCache } from 'lru-cache';
import { boundedLru } from '@shortlink/core';
import { GeoLocator, GeoPlace, platformOf, UserAgentPlatform } from '@shortlink/visitors-domain';
import { normaliseLanguage, RedirectCondition, RedirectRule } from '@shortlink/links-domain';

/** What the conditions of redirect rules read of a request. */
export interface RuleRequest {
  /** The client address (X-Forwarded-For believed only from TRUSTED_PROXIES). */
  readonly address: string;
  readonly userAgent: string;
  /** The raw query string, without `?`; undefined when there is none. */
  readonly query: string | undefined;
  /** The Accept-Language header; undefined when there is none. */
  readonly acceptLanguage?: string;
}

/**
 * A link's rules taken apart once (per cached link, "Redirect rules"): each step a rule's test and
 * target, or a run of rules of one country condition each as one map lookup (what `geoTargets`
 * made), so 60 country targets cost one look-up as before.
 */
export type CompiledRules = readonly CompiledStep[];
type CompiledStep = { readonly test: Test; readonly url: string } | { readonly countries: ReadonlyMap<string, string> };
type Test = (facts: RequestFacts) => boolean;

/** Longest part of a user agent that is looked at: real agents are far shorter. */
export const MAX_AGENT = 512;
/** Languages accepted with at least this quality count (Shlink's threshold): a visitor's fallbacks do not pick a target. */
export const MIN_LANGUAGE_QUALITY = 0.9;
const NOWHERE: GeoPlace = Object.freeze({ country: null, region: null, city: null });

export interface RuleMatcherOptions {
  /** Distinct user agents whose platform is kept. */
  readonly userAgents?: number;
  /** Client addresses whose place is kept. */
  readonly addresses?: number;
  /** Distinct Accept-Language headers whose languages are kept. */
  readonly languageHeaders?: number;
}

/**
 * Evaluates redirect rules with no I/O (docs/design.md, "Redirect rules"): what a condition reads of
 * the request is worked out once per request, on first use, and the costly parts once per distinct
 * value in bounded LRUs: the user agent's platform (a ua-parser run), the address's place (a walk of
 * the in-memory IP database), the Accept-Language header's languages.
 */
export class RuleMatcher {
  private readonly platforms: LRUCache<string, UserAgentPlatform>;
  private readonly places: LRUCache<string, GeoPlace>;
  private readonly languageLists: LRUCache<string, readonly string[]>;

  constructor(
    private readonly geo: GeoLocator,
    options: RuleMatcherOptions = {},
  ) {
    this.platforms = boundedLru({ maxEntries: options.userAgents ?? 10_000 });
    this.places = boundedLru({ maxEntries: options.addresses ?? 10_000 });
    this.languageLists = boundedLru({ maxEntries: options.languageHeaders ?? 1_000 });
  }

  /**
   * One request's facts, reset for each: evaluation is synchronous, so a single holder serves every
   * request and a link with rules allocates nothing more on the hot path (docs/design.md, "Redirect rules").
   */
  private readonly facts = new RequestFacts(this);

  /** The target of the first rule whose conditions all hold; undefined when none does. */
  targetOf(rules: CompiledRules, req: RuleRequest, now: number): string | undefined {
    const facts = this.facts.reset(req, now);
    for (const step of rules) {
      if ('countries' in step) {
        const country = facts.place().country;
        const url = country === null ? undefined : step.countries.get(country);
        if (url !== undefined) return url;
      } else if (step.test(facts)) {
        return step.url;
      }
    }
    return undefined;
  }

  platformOf(userAgent: string): UserAgentPlatform {
    const key = userAgent.length > MAX_AGENT ? userAgent.slice(0, MAX_AGENT) : userAgent;
    let platform = this.platforms.get(key);
    if (platform === undefined) {
      platform = platformOf(key);
      this.platforms.set(key, platform);
    }
    return platform;
  }

  placeOf(address: string): GeoPlace {
    let place = this.places.get(address);
    if (place === undefined) {
      place = address === '' ? NOWHERE : this.geo.placeOf(address);
      this.places.set(address, place);
    }
    return place;
  }

  languagesOf(header: string): readonly string[] {
    let languages = this.languageLists.get(header);
    if (languages === undefined) {
      languages = acceptedLanguages(header);
      this.languageLists.set(header, languages);
    }
    return languages;
  }
}

/** One request's facts, each read on first use (`reset` starts the next request). */
class RequestFacts {
  req: RuleRequest = { address: '', userAgent: '', query: undefined };
  now = 0;
  private platformValue: UserAgentPlatform | undefined;
  private placeValue: GeoPlace | undefined;
  private languagesValue: readonly string[] | undefined;
  private paramsValue: URLSearchParams | undefined;
  /** The client's IPv4 address as a number; -1: not IPv4; undefined: not read yet. */
  private ipv4Value: number | undefined;
  /** The client's IPv6 address as eight 16-bit groups; null: not IPv6; undefined: not read yet. */
  private ipv6Value: readonly number[] | null | undefined;

  constructor(private readonly matcher: RuleMatcher) {}

  reset(req: RuleRequest, now: number): this {
    this.req = req;
    this.now = now;
    this.platformValue = undefined;
    this.placeValue = undefined;
    this.languagesValue = undefined;
    this.paramsValue = undefined;
    this.ipv4Value = undefined;
    this.ipv6Value = undefined;
    return this;
  }

  platform(): UserAgentPlatform {
    return (this.platformValue ??= this.matcher.platformOf(this.req.userAgent));
  }

  place(): GeoPlace {
    return (this.placeValue ??= this.matcher.placeOf(this.req.address));
  }

  languages(): readonly string[] {
    const header = this.req.acceptLanguage;
    return (this.languagesValue ??= header === undefined || header === '' ? [] : this.matcher.languagesOf(header));
  }

  params(): URLSearchParams {
    return (this.paramsValue ??= new URLSearchParams(this.req.query ?? ''));
  }

  /** The client's IPv4 address as a number (an IPv4 client on a dual-stack socket, `::ffff:a.b.c.d`, too); -1 when it is not IPv4. */
  ipv4(): number {
    if (this.ipv4Value === undefined) {
      const address = this.req.address;
      this.ipv4Value = ipv4Number(address, address.length > 7 && address.charCodeAt(0) === 58 && /^::ffff:/i.test(address) ? 7 : 0);
    }
    return this.ipv4Value;
  }

  /** The client's IPv6 address as eight groups; null when it is not IPv6 (or is an IPv4 one in IPv6 form). */
  ipv6(): readonly number[] | null {
    if (this.ipv6Value === undefined) this.ipv6Value = this.ipv4() >= 0 ? null : ipv6Groups(this.req.address);
    return this.ipv6Value;
  }
}

/**
 * An IPv4 address (dotted quad, from `start`) as an unsigned 32-bit number, -1 when it is none: a
 * loop over the characters, because Node's BlockList.check costs about 2 µs a call (docs/design.md,
 * "Redirect rules").
 */
export function ipv4Number(text: string, start = 0): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || octet > 255 || ++dots > 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (++digits > 3) return -1;
      octet = octet * 10 + (c - 48);
    } else return -1;
  }
  if (dots !== 3 || digits === 0 || octet > 255) return -1;
  return value * 256 + octet;
}

/** An IPv6 address (a zone id left out) as eight 16-bit groups, null when it is none; a trailing IPv4 part is two groups. */
export function ipv6Groups(text: string): number[] | null {
  const zone = text.indexOf('%');
  const address = zone >= 0 ? text.slice(0, zone) : text;
  if (isIP(address) !== 6) return null;
  const halves = address.split('::');
  const partsOf = (half: string): number[] => {
    if (half === '') return [];
    const groups: number[] = [];
    for (const part of half.split(':')) {
      if (part.includes('.')) {
        const v4 = ipv4Number(part);
        groups.push(Math.floor(v4 / 65536), v4 % 65536);
      } else groups.push(parseInt(part, 16));
    }
    return groups;
  };
  const head = partsOf(halves[0]);
  if (halves.length === 1) return head;
  const tail = partsOf(halves[1]);
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/**
 * The languages of an Accept-Language header accepted with a quality of at least 0.9, as
 * normalised tags (`de-AT`, `en`), most wanted first; `*` and malformed entries are left out.
 */
export function acceptedLanguages(header: string): string[] {
  const accepted: Array<{ tag: string; q: number; at: number }> = [];
  const parts = header.slice(0, 1024).split(',');
  for (let at = 0; at < parts.length && at < 32; at++) {
    const [range, ...params] = parts[at].split(';');
    const tag = range.trim();
    if (!/^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/.test(tag)) continue;
    let q = 1;
    for (const param of params) {
      const m = /^\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/i.exec(param);
      if (m) q = Number(m[1]);
    }
    if (q >= MIN_LANGUAGE_QUALITY) accepted.push({ tag, q, at });
  }
  accepted.sort((a, b) => b.q - a.q || a.at - b.at);
  // The language and its first subtag, cased as rules store them (`de-AT`, `zh-Hant`).
  return accepted.flatMap(({ tag }) => normaliseLanguage(tag.split('-').slice(0, 2).join('-')) ?? []);
}

/** The rules as steps (see CompiledRules). */
export function compileRules(rules: readonly RedirectRule[]): CompiledRules {
  const steps: CompiledStep[] = [];
  let run: Map<string, string> | null = null;
  for (const rule of rules) {
    const [only] = rule.conditions;
    if (rule.conditions.length === 1 && only.type === 'country') {
      if (run === null) steps.push({ countries: (run = new Map()) });
      if (!run.has(only.value)) run.set(only.value, rule.url);
      continue;
    }
    run = null;
    const tests = rule.conditions.map(testOf);
    steps.push({ url: rule.url, test: tests.length === 1 ? tests[0] : (facts) => tests.every((t) => t(facts)) });
  }
  return steps;
}

const lower = (value: string | null): string | null => (value === null ? null : value.toLowerCase());

function testOf(condition: RedirectCondition): Test {
  switch (condition.type) {
    case 'language': {
      const [language, region] = condition.value.split('-');
      const wanted = region === undefined ? null : condition.value;
      // `de` takes every German (`de`, `de-AT`); `de-AT` only that one.
      return (f) => f.languages().some((tag) => (wanted === null ? tag === language || tag.startsWith(`${language}-`) : tag === wanted));
    }
    case 'query-param': {
      const { name, value } = condition;
      return value === undefined
        ? (f) => f.req.query !== undefined && f.params().has(name)
        : (f) => f.req.query !== undefined && f.params().getAll(name).includes(value);
    }
    case 'ip-address':
      return addressTest(condition.value);
    case 'before-date': {
      const at = Date.parse(condition.value);
      return (f) => f.now < at;
    }
    case 'after-date': {
      const at = Date.parse(condition.value);
      return (f) => f.now > at;
    }
    case 'device': {
      const device = condition.value;
      if (device === 'mobile') return (f) => isMobile(f.platform());
      if (device === 'desktop') return (f) => !isMobile(f.platform());
      return (f) => f.platform().os === device;
    }
    case 'os': {
      const os = condition.value;
      return (f) => f.platform().os === os;
    }
    case 'browser': {
      const browser = condition.value;
      return (f) => f.platform().browser === browser;
    }
    case 'country': {
      const country = condition.value;
      return (f) => f.place().country === country;
    }
    case 'region': {
      const region = condition.value.toLowerCase();
      return (f) => lower(f.place().region) === region;
    }
    case 'city': {
      const city = condition.value.toLowerCase();
      return (f) => lower(f.place().city) === city;
    }
  }
}

/** iOS and Android are mobile (tablets follow their OS, as device targets always did); every other platform is desktop. */
const isMobile = (p: UserAgentPlatform): boolean => p.os === 'ios' || p.os === 'android';

/** An address, a CIDR block, or an IPv4 pattern with `*` octets; a family matches only its own. */
function addressTest(pattern: string): Test {
  if (pattern.includes('*')) {
    const octets = pattern.split('.').map((o) => (o === '*' ? -1 : Number(o)));
    return (f) => {
      const ip = f.ipv4();
      return ip >= 0 && octets.every((o, i) => o < 0 || o === Math.floor(ip / 256 ** (3 - i)) % 256);
    };
  }
  const [address, bitsText] = pattern.split('/');
  const v4 = ipv4Number(address);
  if (v4 >= 0) {
    const bits = bitsText === undefined ? 32 : Number(bitsText);
    // The block's size; the address and the network are equal once divided by it (no 32-bit sign trouble).
    const size = 2 ** (32 - bits);
    const network = Math.floor(v4 / size);
    return (f) => {
      const ip = f.ipv4();
      return ip >= 0 && Math.floor(ip / size) === network;
    };
  }
  const groups = ipv6Groups(address)!;
  const bits = bitsText === undefined ? 128 : Number(bitsText);
  return (f) => {
    const client = f.ipv6();
    if (client === null) return false;
    for (let i = 0, left = bits; left > 0; i++, left -= 16) {
      const shift = left >= 16 ? 0 : 16 - left;
      if (client[i] >> shift !== groups[i] >> shift) return false;
    }
    return true;
  };
}
