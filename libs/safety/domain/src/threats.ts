import { createHash } from 'crypto';
import { domainToASCII } from 'url';
import type { ReputationVerdict, VerdictState } from '@shortlink/url-policy';

/** The published formats a threat feed is read in (docs/design.md, "Trust and safety"). */
export const FEED_FORMATS = ['urlhaus', 'phishtank', 'openphish', 'hosts'] as const;
export type FeedFormat = (typeof FEED_FORMATS)[number];

/** One entry of a feed: a whole host (and its subdomains), or one URL. */
export type ThreatEntry =
  { readonly kind: 'host'; readonly host: string; readonly threat: string } | { readonly kind: 'url'; readonly url: string; readonly threat: string };

/** A URL as feeds and targets are compared: host (lower case, punycode, no trailing dot, no default port) + path + query; the scheme and fragment do not count. */
export interface UrlKey {
  readonly host: string;
  /** `host[:port]/path?query`. */
  readonly key: string;
  /** The path is `/` with no query: the entry names the whole host (not its subdomains). */
  readonly wholeHost: boolean;
}

/** The key of a URL, or null when it is not an http(s) URL with a host name (IP literals never match a target: the URL policy refuses them). */
export function urlKeyOf(raw: string): UrlKey | null {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const host = url.hostname.toLowerCase().replace(/\.+$/, '');
  if (!host || host.startsWith('[') || /^\d+\.\d+\.\d+\.\d+$/.test(host)) return null;
  const port = url.port ? `:${url.port}` : '';
  const path = url.pathname || '/';
  return { host, key: `${host}${port}${path}${url.search}`, wholeHost: path === '/' && url.search === '' && port === '' };
}

/** A host name as feeds and the index of targets compare it, or null when it is not one. */
export function normalHost(raw: string): string | null {
  const text = raw.trim().toLowerCase().replace(/\.+$/, '');
  if (!text || text.length > 253 || /[\s/:@]/.test(text) || /^\d+\.\d+\.\d+\.\d+$/.test(text)) return null;
  const ascii = domainToASCII(text);
  if (!ascii || !ascii.includes('.')) return null;
  return ascii;
}

/** The labels of a host from the top: `a.b.example.com` -> `com.example.b.a` (the index of targets by host reads a prefix of it: the host and its subdomains). */
export const reversedHost = (host: string): string => host.split('.').reverse().join('.');

/** What a feed says of what it lists, and how strongly the platform acts on it. */
export interface FeedSpec {
  readonly format: FeedFormat;
  /** A file path, or an http(s) URL fetched through the pinned client. */
  readonly location: string;
  /** What a hit does: `banned` (451) for the malware and phishing feeds, `flagged` (warning page) for host lists, unless configured. */
  readonly action: VerdictState;
}

/** `feed:<format>`: the moderation source of a feed's verdicts. */
export const feedSource = (format: FeedFormat): string => `feed:${format}`;

/** The default action of a format: lists of malware and phishing URLs ban; host lists (DNS blockers') flag. */
export const defaultAction = (format: FeedFormat): VerdictState => (format === 'hosts' ? 'flagged' : 'banned');

/**
 * The entries of one feed, indexed for a target's look-up (by host and by URL key), with a digest
 * of what it lists: two loads with the same digest list the same threats.
 */
export class ThreatIndex {
  /** Host entries: the host and every subdomain of it. */
  private readonly hosts = new Map<string, string>();
  /** URL entries by host, then by key; a whole-host URL entry under the key `host` + '/'. */
  private readonly urls = new Map<string, Map<string, string>>();
  private count = 0;

  constructor(
    readonly spec: FeedSpec,
    entries: Iterable<ThreatEntry>,
  ) {
    for (const entry of entries) this.add(entry);
  }

  get size(): number {
    return this.count;
  }

  /**
   * The entries as comparable keys (`h <host>` for a host entry, `u <key>` for a URL one, with the
   * threat): what a load adds is the keys the previous load had not.
   */
  entryKeys(): Set<string> {
    const keys = new Set<string>();
    for (const [host, threat] of this.hosts) keys.add(`h ${host} ${threat}`);
    for (const [host, byKey] of this.urls) for (const [key, threat] of byKey) keys.add(`u ${host} ${key} ${threat}`);
    return keys;
  }

  /** The hosts of entries this index has and `previous` has not (all of them without a previous one). */
  hostsAddedSince(previous: ThreatIndex | null): { readonly covering: string[]; readonly exact: string[] } {
    if (previous === null || previous.spec.action !== this.spec.action) return this.hostsListed();
    const before = previous.entryKeys();
    const covering = new Set<string>();
    const exact = new Set<string>();
    for (const key of this.entryKeys()) {
      if (before.has(key)) continue;
      const [kind, host] = key.split(' ', 2);
      (kind === 'h' ? covering : exact).add(host);
    }
    for (const host of covering) exact.delete(host);
    return { covering: [...covering], exact: [...exact] };
  }

  /** Two loads with the same digest list the same threats with the same action. */
  get digest(): string {
    this.digestValue ??= createHash('sha256')
      .update(`${this.spec.action}\n${[...this.entryKeys()].sort().join('\n')}`)
      .digest('hex');
    return this.digestValue;
  }
  private digestValue: string | undefined;

  /** The hosts the feed names: each host entry (covering its subdomains) and the host of each URL entry (that host only). */
  hostsListed(): { readonly covering: string[]; readonly exact: string[] } {
    return { covering: [...this.hosts.keys()], exact: [...this.urls.keys()].filter((h) => !this.hosts.has(h)) };
  }

  /** What the feed holds against a target (its URL and host as the URL policy normalised them), or null. */
  threatOf(url: string, host: string): string | null {
    for (let suffix = host; ;) {
      const listed = this.hosts.get(suffix);
      if (listed !== undefined) return listed;
      const dot = suffix.indexOf('.');
      if (dot < 0) break;
      suffix = suffix.slice(dot + 1);
    }
    const byKey = this.urls.get(host);
    if (byKey === undefined) return null;
    const key = urlKeyOf(url);
    return (key && byKey.get(key.key)) ?? byKey.get(`${host}/`) ?? null;
  }

  private add(entry: ThreatEntry): void {
    if (entry.kind === 'host') {
      const host = normalHost(entry.host);
      if (host === null || this.hosts.has(host)) return;
      this.hosts.set(host, entry.threat);
      this.count++;
      return;
    }
    const key = urlKeyOf(entry.url);
    if (key === null) return;
    const byKey = this.urls.get(key.host) ?? new Map<string, string>();
    const at = key.wholeHost ? `${key.host}/` : key.key;
    if (byKey.has(at)) return;
    byKey.set(at, entry.threat);
    this.urls.set(key.host, byKey);
    this.count++;
  }
}

/** The verdict of a feed's threat: what the feed's action says, with the threat and the target named. */
export function verdictOf(spec: FeedSpec, threat: string, target: string): ReputationVerdict {
  return { state: spec.action, source: feedSource(spec.format), reason: `${threat}: ${target.length > 200 ? `${target.slice(0, 200)}…` : target}` };
}
