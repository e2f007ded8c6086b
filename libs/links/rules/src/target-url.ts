import { Utm, UTM_KEYS } from '@shortlink/links-domain';

/**
 * The `Location` of a redirect (docs/design.md, "Link options"): the chosen target, its own query
 * kept as it is, the link's UTM parameters, then the visitor's query string when the link forwards
 * it. Precedence on a name present in more than one place: UTM > the target's own query > the
 * visitor's query (a visitor cannot override the tenant's campaign attribution or parameters).
 * Everything appended is percent-encoded, so the result holds only printable ASCII: no header
 * break can reach a response.
 */

/** Characters kept as they are in a query part: RFC 3986 unreserved, sub-delims but `&`, and `: @ / ?`. */
const KEPT = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$'()*+,;=:@/?") KEPT[c.charCodeAt(0)] = 1;
const HEX = '0123456789ABCDEF';
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

const byte = (b: number) => `%${HEX[b >> 4]}${HEX[b & 15]}`;

/**
 * One `name=value` pair of a visitor's query string, percent-encoded where it must be and left as
 * it is elsewhere (an existing `%XX` stays, so `a%20b` is not encoded twice). Node's parser lets
 * only printable ASCII into a request line; should another caller pass more, a character up to
 * U+00FF is taken as one latin1 byte and anything above as UTF-8.
 */
export function encodeQueryPart(raw: string): string {
  let out = '';
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 128 && KEPT[c]) continue;
    if (c === 37 /* % */ && i + 2 < raw.length && isHex(raw.charCodeAt(i + 1)) && isHex(raw.charCodeAt(i + 2))) continue;
    out += raw.slice(start, i);
    if (c < 256) out += byte(c);
    else {
      // A character beyond latin1 (only from a caller that decoded the line itself): its UTF-8 bytes.
      const cp = raw.codePointAt(i)!;
      out += Buffer.from(String.fromCodePoint(cp), 'utf8').reduce((s, b) => s + byte(b), '');
      if (cp > 0xffff) i++;
    }
    start = i + 1;
  }
  return start === 0 ? raw : out + raw.slice(start);
}

/** The name of a `name=value` pair as an application reads it (`+` is a space), for comparing names. */
export function queryNameOf(pair: string): string {
  const eq = pair.indexOf('=');
  const raw = (eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** A target taken apart once per link (docs/design.md, "Link options"), so a redirect only concatenates. */
export interface CompiledTarget {
  /** The target before its query, e.g. `https://example.com/a`. */
  readonly head: string;
  /** Its own pairs (those UTM overrides removed) followed by the UTM pairs; '' for none. */
  readonly query: string;
  /** `#fragment`, or ''. */
  readonly fragment: string;
  /** Names a forwarded pair may not take: the target's own and the UTM ones. */
  readonly taken: ReadonlySet<string>;
  /** The Location when nothing is forwarded. */
  readonly plain: string;
  /** Locations already made, by the visitor's query string (visitors' queries repeat); bounded, emptied when full. */
  readonly forwarded: Map<string, string>;
}

/** Visitor query strings whose Location a target keeps, and the longest one kept. */
const MAX_FORWARDED = 256;
const MAX_FORWARDED_QUERY = 256;

export const utmPairs = (utm: Utm | null | undefined): Array<[name: string, pair: string]> =>
  utm ? UTM_KEYS.filter((k) => utm[k] !== undefined).map((k) => [`utm_${k}`, `utm_${k}=${encodeURIComponent(utm[k]!)}`]) : [];

export function compileTarget(target: string, utm: Utm | null | undefined): CompiledTarget {
  const hash = target.indexOf('#');
  const beforeFragment = hash < 0 ? target : target.slice(0, hash);
  const fragment = hash < 0 ? '' : target.slice(hash);
  const q = beforeFragment.indexOf('?');
  const head = q < 0 ? beforeFragment : beforeFragment.slice(0, q);
  const own =
    q < 0
      ? []
      : beforeFragment
          .slice(q + 1)
          .split('&')
          .filter((p) => p !== '');
  const extra = utmPairs(utm);
  const utmNames = new Set(extra.map(([name]) => name));
  const kept = own.filter((p) => !utmNames.has(queryNameOf(p)));
  const pairs = [...kept, ...extra.map(([, pair]) => pair)];
  const query = pairs.join('&');
  const taken = new Set([...kept.map(queryNameOf), ...utmNames]);
  // A target with nothing appended stays exactly as stored (e.g. a trailing `?` is kept).
  const plain = extra.length === 0 ? target : `${head}${query ? `?${query}` : ''}${fragment}`;
  return { head, query, fragment, taken, plain, forwarded: new Map() };
}

/** The Location for `target` with the visitor's raw query string (without `?`) appended, if any. */
export function withForwardedQuery(target: CompiledTarget, visitorQuery: string | undefined): string {
  if (!visitorQuery) return target.plain;
  let location = target.forwarded.get(visitorQuery);
  if (location === undefined) {
    location = forwardedLocation(target, visitorQuery);
    if (visitorQuery.length <= MAX_FORWARDED_QUERY) {
      if (target.forwarded.size >= MAX_FORWARDED) target.forwarded.clear();
      target.forwarded.set(visitorQuery, location);
    }
  }
  return location;
}

function forwardedLocation(target: CompiledTarget, visitorQuery: string): string {
  let added = '';
  for (const pair of visitorQuery.split('&')) {
    if (pair === '' || (target.taken.size > 0 && target.taken.has(queryNameOf(pair)))) continue;
    added += added ? `&${encodeQueryPart(pair)}` : encodeQueryPart(pair);
  }
  if (!added) return target.plain;
  return `${target.head}?${target.query ? `${target.query}&` : ''}${added}${target.fragment}`;
}
