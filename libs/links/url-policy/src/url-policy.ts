import { isIP } from 'net';
import { domainToUnicode } from 'url';
import { DomainError, ErrorCode } from '@shortlink/core';
import { HostResolver, isPublicAddress } from './addresses';

export const MAX_URL_LENGTH = 2048;

/** Why a URL is refused: the `reason` of a 400 URL_NOT_ALLOWED (stable, documented). */
export type UrlRefusal =
  | 'credentials'
  | 'ip-literal'
  | 'local-host'
  | 'private-address'
  | 'shortener'
  | 'redirect-loop'
  | 'control-characters'
  | 'unresolvable'
  /** An app target's scheme that runs code or reads local data (`javascript:`, `data:`, `file:`, …; docs/design.md, "Link options"). */
  | 'dangerous-scheme';

/** What the policy found worth a warning page: the link is stored, but flagged. */
export interface UrlFlag {
  readonly reason: 'homograph' | 'suspicious-keywords' | 'suspicious-shape';
  readonly detail: string;
}

export interface CheckedUrl {
  /** Normalised: percent-encoded, IDN host in punycode. */
  readonly url: string;
  readonly host: string;
  readonly flags: readonly UrlFlag[];
}

/** Domains refused as targets (a file and the admin API); a listed domain covers its subdomains. */
export interface DomainBlockList {
  /** The listed domain that covers `host`, or null. */
  blocking(host: string): string | null;
}

/** Domains this platform serves besides the configured ones: the tenants' own, added at run time. */
export interface ServedDomains {
  /** Whether `host` (lower case, punycode, no port, no trailing dot) is one of them: exactly, not its subdomains. */
  isServed(host: string): boolean;
}

/** The DNS answers of one request's targets, by host: each host is resolved once per request. */
export type HostLookups = Map<string, Promise<string[]>>;

export interface UrlPolicyOptions {
  /** Our own short domains (configured): a target on them, or on a subdomain, would be a redirect loop. */
  readonly shortDomains: readonly string[];
  /** The tenants' domains: a target on one is a loop, or a chain through another tenant's link. */
  readonly servedDomains?: ServedDomains;
  readonly blockList?: DomainBlockList;
  /** With URL_DNS_CHECK=true: names resolving to private, loopback, link-local, ... addresses are refused. */
  readonly resolver?: HostResolver | null;
  /** Known shorteners; a link to them hides the real target (and can chain into a loop). */
  readonly shorteners?: readonly string[];
}

/** Public shorteners (docs/design.md, "URL safety"); a subdomain of one counts too. */
export const KNOWN_SHORTENERS: readonly string[] = [
  'bit.ly',
  'bitly.com',
  'tinyurl.com',
  't.co',
  'goo.gl',
  'ow.ly',
  'is.gd',
  'buff.ly',
  'rebrand.ly',
  'cutt.ly',
  'shorturl.at',
  'tiny.cc',
  'rb.gy',
  'bl.ink',
  'short.io',
  'dub.sh',
  'dub.co',
  'kutt.it',
  'v.gd',
  'lnkd.in',
  'trib.al',
  'soo.gd',
  's.id',
  'shorte.st',
  'adf.ly',
  'tr.im',
  'x.co',
  'qr.ae',
  'clck.ru',
  'u.to',
  'chilp.it',
  'po.st',
  'mcaf.ee',
  'su.pr',
  'yourls.org',
  'shlink.io',
  'spoo.me',
  'tiny.one',
  't.ly',
  'urlz.fr',
];

/** Host names that never leave the client's own network. */
const LOCAL_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'home.arpa', 'lan', 'intranet', 'corp'];

/** Words that phishing links put in their path or host; a hit flags the link, it does not refuse it. */
const SUSPICIOUS_WORDS =
  /(login|signin|sign-in|verify|verification|account|password|passwd|wallet|seed-?phrase|banking|paypal|appleid|secure-?update|unlock|suspend|invoice|gift-?card|free-?money|airdrop)/i;

const refuse = (reason: UrlRefusal, detail: string) => new DomainError(ErrorCode.URL_NOT_ALLOWED, detail, { reason });

/** `sub.example.com` is covered by `example.com` in a list. */
export function coveredBy(host: string, domains: Iterable<string>): string | null {
  for (const d of domains) if (host === d || host.endsWith(`.${d}`)) return d;
  return null;
}

/** A refusal as plain data: it crosses a thread (structured clone) and becomes the same DomainError. */
export interface TargetError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: Record<string, unknown>;
}

const errorOf = (e: TargetError) => new DomainError(e.code, e.message, e.details);
const refusal = (reason: UrlRefusal, detail: string): TargetError => ({ code: ErrorCode.URL_NOT_ALLOWED, message: detail, details: { reason } });
const invalidity = (detail: string, details: Record<string, unknown> = {}): TargetError => ({ code: ErrorCode.INVALID_URL, message: detail, details });
const tooLongError = (field: string): TargetError =>
  invalidity(`${field} is longer than ${MAX_URL_LENGTH} characters once normalised (percent-encoded)`, { maxLength: MAX_URL_LENGTH, field });

/**
 * A target as far as the policy's fixed lists take it (plain data; docs/design.md, "Batch creation"):
 * refused before the lists that change are asked (`error`), or parsed, with what the later checks
 * need: `loop` (one of our short domains), the known shortener it is on, and `late`, the refusal that
 * comes after the block list's.
 */
export type ParsedTarget =
  | { readonly error: TargetError }
  | {
      readonly url: string;
      readonly host: string;
      readonly flags: readonly UrlFlag[];
      readonly loop: boolean;
      readonly shortener: string | null;
      readonly late: TargetError | null;
    };

/** The pure part of the URL policy (no tenants' domains, no block list, no DNS), in the order `inspect` checks. */
export function parseTarget(raw: unknown, field: string, shortDomains: readonly string[], shorteners: readonly string[]): ParsedTarget {
  if (typeof raw !== 'string' || raw.trim() === '') return { error: invalidity(`${field} must be a non-empty string`, { field }) };
  const text = raw.trim();
  // Normalising percent-encodes: each non-ASCII character becomes up to 12 characters. Bound
  // the work first; the limit itself applies to the stored (normalised) form below.
  if (text.length > MAX_URL_LENGTH * 12) return { error: tooLongError(field) };
  // Tabs and line breaks are silently dropped by the URL parser; in a target they mean an
  // attempt to smuggle a header or hide part of the URL. Refuse instead of repairing.
  if (/[\u0000-\u001f\u007f]/.test(text)) return { error: refusal('control-characters', `${field} contains control characters`) };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: invalidity(`${field} is not an absolute URL`, { field }) };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { error: invalidity(`only http and https URLs can be shortened, not ${url.protocol}`, { field }) };
  if (!url.hostname) return { error: invalidity(`${field} has no host`, { field }) };
  if (url.username || url.password) return { error: refusal('credentials', `${field}: URLs with embedded credentials are not accepted`) };
  // The WHATWG parser already turns decimal, hex, octal and short IPv4 forms into dotted quads.
  // Every trailing dot goes before the checks: `127.0.0.1..` and `bit.ly..` are those hosts.
  const hostname = url.hostname.toLowerCase();
  const host = hostname.replace(/\.+$/, '');
  if (host === '' || host.split('.').includes('')) return { error: invalidity(`${field} has no valid host name (an empty label)`, { field }) };
  if (host.startsWith('[') || isIP(host) !== 0) return { error: refusal('ip-literal', `${field}: links to IP addresses are not accepted; use a host name`) };
  if (!host.includes('.') || LOCAL_SUFFIXES.some((s) => host === s || host.endsWith(`.${s}`)))
    return { error: refusal('local-host', `${field}: ${host} is not a public host name`) };
  const loop = coveredBy(host, shortDomains) !== null;
  const shortener = coveredBy(host, shorteners);
  // One trailing dot is a fully qualified name; more are an empty label, which no resolver accepts.
  if (hostname.length - host.length > 1)
    return { url: '', host, flags: [], loop, shortener, late: invalidity(`${field}: the host name ends in more than one dot`, { field }) };
  const normalised = url.toString();
  if (normalised.length > MAX_URL_LENGTH) return { url: '', host, flags: [], loop, shortener, late: tooLongError(field) };
  return { url: normalised, host, flags: flagsOf(url, host), loop, shortener, late: null };
}

/**
 * The URL safety policy of every target a link can send to (docs/design.md, "URL safety"):
 * http/https, at most 2048 characters once normalised, no credentials, no control characters, no
 * IP literal in any spelling, no local or private host, no known shortener and none of our own
 * domains, nothing on the block list. Suspicious URLs pass but are flagged (a warning page).
 */
export class UrlPolicy {
  private readonly shortDomains: readonly string[];
  private readonly shorteners: readonly string[];

  constructor(private readonly options: UrlPolicyOptions) {
    this.shortDomains = options.shortDomains.map((d) => d.toLowerCase().replace(/:\d+$/, ''));
    this.shorteners = options.shorteners ?? KNOWN_SHORTENERS;
  }

  /** The same policy, also refusing targets on the domains `served` names (docs/design.md, "URL safety"). */
  alsoServing(served: ServedDomains): UrlPolicy {
    return new UrlPolicy({ ...this.options, servedDomains: served });
  }

  /** The synchronous part: everything but DNS. */
  inspect(raw: unknown, field = 'url'): CheckedUrl {
    return this.inspected(parseTarget(raw, field, this.shortDomains, this.shorteners), field);
  }

  /** What `parseTarget` needs of this policy: its fixed lists (a worker thread parses with them; docs/design.md, "Batch creation"). */
  fixedLists(): { readonly shortDomains: readonly string[]; readonly shorteners: readonly string[] } {
    return { shortDomains: this.shortDomains, shorteners: this.shorteners };
  }

  /**
   * The checks of a target `parseTarget` parsed with this policy's fixed lists (perhaps on another
   * thread): the tenants' domains and the block list, which change, in their place among the
   * others, so a target is refused for the same reason as by `inspect`.
   */
  inspected(parsed: ParsedTarget, field = 'url'): CheckedUrl {
    if ('error' in parsed) throw errorOf(parsed.error);
    const { host } = parsed;
    if (parsed.loop || this.options.servedDomains?.isServed(host)) throw refuse('redirect-loop', `${field} points back at this shortener`);
    if (parsed.shortener) throw refuse('shortener', `${field} points at another URL shortener (${parsed.shortener}); link to the final target`);
    const blocked = this.options.blockList?.blocking(host);
    if (blocked) throw new DomainError(ErrorCode.DOMAIN_BLOCKED, `${field}: ${blocked} is on the block list`, { domain: blocked, field });
    if (parsed.late) throw errorOf(parsed.late);
    return { url: parsed.url, host, flags: parsed.flags };
  }

  /**
   * inspect() plus, with URL_DNS_CHECK=true, the addresses the host resolves to: the one check of
   * every target a link has (url and the targets of its options). `lookups` shares the answers
   * between the targets of one request, so that a host named by many targets is resolved once.
   */
  async check(raw: unknown, field = 'url', lookups: HostLookups = new Map()): Promise<CheckedUrl> {
    return this.checkInspected(this.inspect(raw, field), field, lookups);
  }

  /** check() of a target parsed beforehand (`parseTarget`, with `fixedLists()`). */
  async checkParsed(parsed: ParsedTarget, field = 'url', lookups: HostLookups = new Map()): Promise<CheckedUrl> {
    return this.checkInspected(this.inspected(parsed, field), field, lookups);
  }

  private async checkInspected(checked: CheckedUrl, field: string, lookups: HostLookups): Promise<CheckedUrl> {
    const resolver = this.options.resolver;
    if (resolver) {
      let lookup = lookups.get(checked.host);
      if (!lookup) {
        lookup = resolver.addresses(checked.host);
        lookups.set(checked.host, lookup);
      }
      let addresses: string[];
      try {
        addresses = await lookup;
      } catch {
        throw refuse('unresolvable', `${field}: ${checked.host} does not resolve`);
      }
      const inner = addresses.find((a) => !isPublicAddress(a));
      if (addresses.length === 0) throw refuse('unresolvable', `${field}: ${checked.host} does not resolve`);
      if (inner) throw refuse('private-address', `${field}: ${checked.host} resolves to a non-public address`);
    }
    return checked;
  }
}

/** Scripts a host label is written in, for homograph detection. */
function scriptsOf(label: string): Set<string> {
  const scripts = new Set<string>();
  for (const ch of label) {
    if (/[0-9\-]/.test(ch)) continue;
    if (/\p{Script=Latin}/u.test(ch)) scripts.add('Latin');
    else if (/\p{Script=Cyrillic}/u.test(ch)) scripts.add('Cyrillic');
    else if (/\p{Script=Greek}/u.test(ch)) scripts.add('Greek');
    else if (/\p{Script=Armenian}/u.test(ch)) scripts.add('Armenian');
    else if (/\p{Script=Han}|\p{Script=Hiragana}|\p{Script=Katakana}|\p{Script=Hangul}/u.test(ch)) scripts.add('CJK');
    else scripts.add('Other');
  }
  return scripts;
}

/** Brands phishing impersonates: their name in a host they do not own is a warning sign. */
const BRANDS = [
  'paypal',
  'apple',
  'google',
  'microsoft',
  'amazon',
  'netflix',
  'facebook',
  'instagram',
  'whatsapp',
  'binance',
  'coinbase',
  'metamask',
  'dhl',
  'fedex',
  'ups',
  'chase',
  'wellsfargo',
  'office365',
  'outlook',
];

function flagsOf(url: URL, host: string): UrlFlag[] {
  const flags: UrlFlag[] = [];
  const unicode = domainToUnicode(host);
  for (const label of unicode.split('.')) {
    const scripts = scriptsOf(label);
    // Latin mixed with a look-alike script in one label is the classic homograph (аpple.com).
    if (scripts.size > 1 && scripts.has('Latin') && (scripts.has('Cyrillic') || scripts.has('Greek') || scripts.has('Armenian'))) {
      flags.push({ reason: 'homograph', detail: `host label "${label}" mixes ${[...scripts].join(' and ')} letters` });
      break;
    }
  }
  // A keyword alone is common on honest sites (github.com/login); it flags only together with a
  // sign of impersonation: a brand name outside its own domain, plain http, or a deep host.
  const labels = host.split('.');
  const registrable = labels.slice(-2).join('.');
  const brand = BRANDS.find((b) => host.includes(b) && !registrable.startsWith(`${b}.`));
  const word = SUSPICIOUS_WORDS.exec(`${host}${url.pathname}`);
  if (word && (brand || url.protocol === 'http:' || labels.length > 4)) {
    flags.push({
      reason: 'suspicious-keywords',
      detail: `"${word[1]}" with ${brand ? `the brand "${brand}" outside its domain` : url.protocol === 'http:' ? 'plain http' : 'a deeply nested host'}`,
    });
  }
  if (labels.length > 5 || host.length > 60 || /@|https?:\/\//i.test(url.pathname)) {
    flags.push({ reason: 'suspicious-shape', detail: 'a deeply nested or very long host name, or a URL inside the path' });
  }
  return flags;
}
