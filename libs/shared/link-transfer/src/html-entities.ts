/**
 * HTML character references in text that another tool stored escaped: YOURLS keeps titles as PHP's
 * htmlspecialchars/htmlentities wrote them (`Tips &amp; tricks`, `It&#039;s`). The `entities`
 * package is not among our dependencies, so this decodes what those functions write: numeric
 * references, the five of htmlspecialchars, and HTML 4's Latin-1 and "special" sets (htmlentities'
 * table for these characters). Any other named reference is left as written. Decoded once, as a
 * browser would: `&amp;lt;` is `&lt;`.
 */
const LATIN_1 = (
  'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm ' +
  'raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH ' +
  'Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ' +
  'ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml ' +
  'yacute thorn yuml'
).split(' ');

const SPECIAL: Record<string, number> = {
  quot: 34, amp: 38, apos: 39, lt: 60, gt: 62, OElig: 338, oelig: 339, Scaron: 352, scaron: 353, Yuml: 376, fnof: 402, circ: 710, tilde: 732,
  ensp: 8194, emsp: 8195, thinsp: 8201, zwnj: 8204, zwj: 8205, lrm: 8206, rlm: 8207, ndash: 8211, mdash: 8212, lsquo: 8216, rsquo: 8217,
  sbquo: 8218, ldquo: 8220, rdquo: 8221, bdquo: 8222, dagger: 8224, Dagger: 8225, bull: 8226, hellip: 8230, permil: 8240, prime: 8242,
  Prime: 8243, lsaquo: 8249, rsaquo: 8250, euro: 8364, trade: 8482,
};

const NAMED: ReadonlyMap<string, string> = new Map([
  ...LATIN_1.map((name, i) => [name, String.fromCharCode(0xa0 + i)] as const),
  ...Object.entries(SPECIAL).map(([name, code]) => [name, String.fromCharCode(code)] as const),
]);

const REFERENCE = /&(?:#(\d{1,7})|#[xX]([0-9A-Fa-f]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));/g;

export function decodeHtmlEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(REFERENCE, (whole, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) return NAMED.get(name) ?? whole;
    const code = decimal !== undefined ? Number(decimal) : parseInt(hex!, 16);
    // NUL, surrogates and values past Unicode are no characters: left as written.
    return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ? whole : String.fromCodePoint(code);
  });
}
