/**
 * Content negotiation of what a browser may be shown instead of problem+json (docs/design.md,
 * "Pages"): whether a request prefers HTML (RFC 9110 §12.5.1, Accept), and in which of the
 * languages we ship (§12.5.4, Accept-Language, RFC 4647 lookup). The redirect's refusals and pages
 * and the SSO callback's failures negotiate; a redirect never reads these headers.
 */

/** Entries of a header read at most: a browser sends a handful; the rest of a long header is ignored. */
const MAX_ENTRIES = 32;

interface Weighted {
  readonly value: string;
  readonly q: number;
  /** Position in the header: ties keep the client's order. */
  readonly at: number;
}

/** `a;q=0.5, b` → entries with their weights (q absent: 1; malformed q: the entry is dropped), lower case. */
function weighted(header: string | undefined): Weighted[] {
  if (!header) return [];
  const entries: Weighted[] = [];
  const parts = header.split(',', MAX_ENTRIES);
  for (let at = 0; at < parts.length; at++) {
    const [head, ...params] = parts[at].split(';');
    const value = head.trim().toLowerCase();
    if (!value) continue;
    let q = 1;
    for (const param of params) {
      const [name, raw] = param.split('=');
      if (name.trim().toLowerCase() !== 'q') continue;
      // RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
      const text = (raw ?? '').trim();
      q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(text) ? Number(text) : NaN;
    }
    if (!Number.isNaN(q)) entries.push({ value, q, at });
  }
  return entries;
}

/**
 * The weight `accept` gives `type` (`text/html`): that of the most specific range that matches it
 * (`text/html` over `text/*` over `*\/*`), 0 when none does. No Accept at all accepts anything (1).
 */
function weightOf(ranges: readonly Weighted[], type: string): number {
  const [major] = type.split('/');
  let best = -1;
  let q = 0;
  for (const r of ranges) {
    const specificity = r.value === type ? 3 : r.value === `${major}/*` ? 2 : r.value === '*/*' ? 1 : 0;
    if (specificity > best && specificity > 0) {
      best = specificity;
      q = r.q;
    }
  }
  return q;
}

/**
 * True when the client prefers HTML to JSON: `text/html` weighs more than both
 * `application/problem+json` and `application/json`. On a tie our answer stays problem+json, so a
 * client sending no Accept, `*\/*` (curl, fetch) or JSON keeps problem+json as before pages existed;
 * a browser (`text/html,…,*\/*;q=0.8`) gets the page.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = weighted(accept);
  const html = weightOf(ranges, 'text/html');
  return html > 0 && html > weightOf(ranges, 'application/problem+json') && html > weightOf(ranges, 'application/json');
}

/**
 * The language of a page: the first of `available` (primary subtags, lower case) that the visitor's
 * ranges ask for, by weight, then by their order; a range matches its own tag and what it falls back
 * to (`de-CH` → `de`). `*` takes the first language not refused with q=0. Nothing asked for: `available[0]`.
 */
export function pageLanguage<L extends string>(acceptLanguage: string | undefined, available: readonly L[]): L {
  const ranges = weighted(acceptLanguage).sort((a, b) => b.q - a.q || a.at - b.at);
  const primary = (range: string) => range.split('-')[0];
  // `fr;q=0` refuses French; `fr-CA;q=0` refuses only a French we do not ship.
  const refused = new Set(ranges.filter((r) => r.q === 0 && r.value !== '*' && !r.value.includes('-')).map((r) => r.value));
  for (const range of ranges) {
    if (range.q === 0) continue;
    if (range.value === '*') {
      const any = available.find((l) => !refused.has(l));
      if (any) return any;
      continue;
    }
    const found = available.find((l) => l === primary(range.value));
    if (found && !refused.has(found)) return found;
  }
  return available[0];
}
