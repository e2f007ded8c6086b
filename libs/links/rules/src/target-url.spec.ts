import { compileTarget, encodeQueryPart, withForwardedQuery } from './target-url';

/** A Location a client can follow: a valid absolute URL of printable ASCII, every `%` an escape. */
const isCleanLocation = (location: string) => {
  expect(location).toMatch(/^[\x21-\x7e]+$/);
  expect(location).not.toMatch(/%(?![0-9A-Fa-f]{2})/);
  expect(() => new URL(location)).not.toThrow();
};

describe('the Location of a redirect', () => {
  it('keeps a target as it is when nothing is added', () => {
    for (const target of ['https://example.com/a?b=c#d', 'https://example.com/?', 'https://example.com/x%20y']) {
      expect(withForwardedQuery(compileTarget(target, null), undefined)).toBe(target);
      expect(withForwardedQuery(compileTarget(target, null), '')).toBe(target);
    }
  });

  it("adds UTM parameters after the target's own query and before its fragment; UTM wins a name clash", () => {
    const t = compileTarget('https://example.com/p?utm_source=old&keep=1#top', { source: 'news letter', medium: 'email', campaign: 'ç&=' });
    expect(t.plain).toBe('https://example.com/p?keep=1&utm_source=news%20letter&utm_medium=email&utm_campaign=%C3%A7%26%3D#top');
    isCleanLocation(t.plain);
  });

  it("forwards the visitor's query after the link's own; the link's names win, repeated names are kept", () => {
    const t = compileTarget('https://example.com/p?lang=en', { campaign: 'spring' });
    expect(withForwardedQuery(t, 'x=1&lang=de&utm_campaign=hijack&y=2&y=3')).toBe('https://example.com/p?lang=en&utm_campaign=spring&x=1&y=2&y=3');
    expect(withForwardedQuery(compileTarget('https://example.com/', null), 'x=1')).toBe('https://example.com/?x=1');
    expect(withForwardedQuery(compileTarget('https://example.com/#f', null), 'x=1&&')).toBe('https://example.com/?x=1#f');
    // A name compared as an application reads it: `lang` spelled with an escape or a `+` is still `lang`.
    expect(withForwardedQuery(t, '%6Cang=fr')).toBe(t.plain);
  });

  it('percent-encodes what may not stand in a query, keeps valid escapes and `+` as they are', () => {
    const cases: Array<[raw: string, encoded: string]> = [
      ['a=b c', 'a=b%20c'],
      ['q=a+b%20c', 'q=a+b%20c'],
      ['q=100%', 'q=100%25'],
      ['q=%zz', 'q=%25zz'],
      ['q="<>`{}|\\^#[]', 'q=%22%3C%3E%60%7B%7D%7C%5C%5E%23%5B%5D'],
      // Beyond printable ASCII (Node's parser lets none through): up to U+00FF one latin1 byte, above UTF-8.
      ['q=\u00e9', 'q=%E9'],
      ['q=\u20ac', 'q=%E2%82%AC'],
    ];
    expect(cases.map(([raw]) => encodeQueryPart(raw))).toEqual(cases.map(([, encoded]) => encoded));
  });

  it('gives the same Location for a query string seen before, past the number of queries a target keeps', () => {
    const t = compileTarget('https://example.com/p?lang=en', { campaign: 'spring' });
    const fresh = (q: string) => withForwardedQuery(compileTarget('https://example.com/p?lang=en', { campaign: 'spring' }), q);
    const queries = Array.from({ length: 600 }, (_, i) => `x=${i}&lang=de&utm_campaign=hijack${i % 3 ? '&y=%20' : ''}`);
    for (let round = 0; round < 2; round++) for (const q of queries) expect(withForwardedQuery(t, q)).toBe(fresh(q));
    const long = `z=${'a'.repeat(400)}`;
    expect(withForwardedQuery(t, long)).toBe(fresh(long));
    expect(withForwardedQuery(t, long)).toBe(fresh(long));
  });

  it('never lets a control character, a header break or a space through, whatever the visitor sends', () => {
    const t = compileTarget('https://example.com/a?b=1#c', { source: 'x' });
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 2000; n++) {
      let query = '';
      const length = Math.floor(random() * 40);
      for (let i = 0; i < length; i++) query += String.fromCharCode(Math.floor(random() * 256));
      const location = withForwardedQuery(t, query);
      isCleanLocation(location);
      expect(location.startsWith('https://example.com/a?b=1&utm_source=x')).toBe(true);
      expect(location.endsWith('#c')).toBe(true);
    }
  });
});
