import { ClickIds, withQueryParam } from './click-id';

describe('ClickIds (docs/design.md, "Conversions")', () => {
  const ids = new ClickIds('s'.repeat(40));
  const at = Date.UTC(2026, 11, 7, 10, 30, 42);

  it('issues 22 base64url characters that open to the link and the minute of the click, different every time', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = ids.issue('123456789', at)!;
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(2000);
    const [one] = seen;
    expect(ids.open(one)).toEqual({ linkId: '123456789', issuedAt: Date.UTC(2026, 11, 7, 10, 30) });
    expect(ids.open(ids.issue('0', at))).toEqual({ linkId: '0', issuedAt: Date.UTC(2026, 11, 7, 10, 30) });
    expect(ids.open(ids.issue(String(2 ** 48 - 1), at))?.linkId).toBe(String(2 ** 48 - 1));
  });

  it('does not show the link id, and opens nothing made with another key, tampered with or malformed', () => {
    const id = ids.issue('1', at)!;
    const next = ids.issue('2', at)!;
    expect(id.slice(0, 8)).not.toBe(next.slice(0, 8));
    expect(new ClickIds('t'.repeat(40)).open(id)).toBeNull();
    const tampered = (id[0] === 'A' ? 'B' : 'A') + id.slice(1);
    expect(ids.open(tampered)).toBeNull();
    for (const bad of ['', 'short', `${id}x`, id.replace(/.$/, '!'), 42, null, undefined]) expect(ids.open(bad)).toBeNull();
    // Random strings of the right shape: the 16 check bits refuse all but about one in 65 536.
    let opened = 0;
    for (let i = 0; i < 2000; i++) if (ids.open(Buffer.from(Array.from({ length: 16 }, () => Math.floor(Math.random() * 256))).toString('base64url'))) opened++;
    expect(opened).toBeLessThan(3);
  });

  it('gives no id to a link id beyond 48 bits or not a number', () => {
    expect(ids.issue(String(2 ** 48), at)).toBeNull();
    expect(ids.issue('abc', at)).toBeNull();
  });
});

describe('withQueryParam', () => {
  it('adds the parameter to the query, before a fragment', () => {
    expect(withQueryParam('https://a.test/p', 'sl_cid', 'X')).toBe('https://a.test/p?sl_cid=X');
    expect(withQueryParam('https://a.test/p?a=1', 'sl_cid', 'X')).toBe('https://a.test/p?a=1&sl_cid=X');
    expect(withQueryParam('https://a.test/p?a=1#f?g', 'r', 'X')).toBe('https://a.test/p?a=1&r=X#f?g');
    expect(withQueryParam('https://a.test/p?', 'r', 'X')).toBe('https://a.test/p?r=X');
    expect(withQueryParam('https://a.test/#h', 'r', 'X')).toBe('https://a.test/?r=X#h');
  });
});
