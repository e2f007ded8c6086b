import { PasswordCookies } from './password-cookie';
import { CachedLink } from '@shortlink/links-domain';

describe('PasswordCookies (docs/design.md, "Link options")', () => {
  const cookies = new PasswordCookies('a-secret-of-the-app-that-is-long-enough');
  const now = Date.UTC(2026, 11, 3, 12, 0, 0);
  const hour = 3_600_000;
  const link = (over: Partial<CachedLink> & { hash?: string; hours?: number } = {}): CachedLink => {
    const { hash = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA', hours, ...rest } = over;
    return {
      id: '42',
      tenantId: 't1',
      targetUrl: 'https://example.com/',
      redirectType: 302,
      expiresAt: null,
      status: 'active',
      version: 1,
      createdAt: now,
      rules: { passwordHash: hash, ...(hours !== undefined ? { passwordRememberHours: hours } : {}) },
      ...rest,
    };
  };
  const id = { domain: 'sho.rt', code: 'pass42' };
  const headerOf = (l: CachedLink, at = now) => {
    const issued = cookies.issue(l, id, at)!;
    return `theme=dark; ${issued.name}=${issued.value}`;
  };
  const named = cookies.nameOf(id);

  it('issues a cookie named after the short URL for 12 h by default, or the hours its owner set, and accepts it back', () => {
    const issued = cookies.issue(link(), id, now)!;
    expect(issued.name).toBe(named);
    expect(issued.maxAgeSeconds).toBe(12 * 3600);
    expect(issued.value).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
    expect(cookies.issue(link({ hours: 2 }), id, now)!.maxAgeSeconds).toBe(7200);
    expect(cookies.accepts(headerOf(link()), link(), id, now + hour)).toBe(true);
  });

  it("names the cookie by a keyed hash of domain and code: never the link's id, the same on every instance, apart for nested paths", () => {
    expect(named).toMatch(/^sl_pw_[A-Za-z0-9_-]{22}$/);
    expect(named).not.toContain('42');
    expect(new PasswordCookies('a-secret-of-the-app-that-is-long-enough').nameOf(id)).toBe(named);
    const others = [
      { domain: 'sho.rt', code: 'pass42/more' },
      { domain: 'sho.rt', code: 'Pass42' },
      { domain: 'go.acme.test', code: 'pass42' },
    ].map((other) => cookies.nameOf(other));
    expect(new Set([named, ...others]).size).toBe(4);
    // Without the installation's secret the name of a short URL cannot be computed.
    expect(new PasswordCookies('another-secret-of-another-installation').nameOf(id)).not.toBe(named);
    // Under the name of another short URL, even a value this link signed is not taken.
    expect(cookies.accepts(headerOf(link()), link(), { domain: 'go.acme.test', code: 'pass42' }, now)).toBe(false);
  });

  it('still takes a cookie remembered under the name of before (sl_pw_<link id>) until it expires', () => {
    const issued = cookies.issue(link(), id, now)!;
    expect(cookies.accepts(`sl_pw_42=${issued.value}`, link(), id, now + hour)).toBe(true);
    expect(cookies.accepts(`sl_pw_42=${issued.value}`, link(), id, now + 12 * hour)).toBe(false);
    expect(cookies.accepts(`sl_pw_4=${issued.value}; sl_pw_420=${issued.value}`, link(), id, now)).toBe(false);
  });

  it('issues nothing and accepts nothing when the owner wants the password at every visit (0 h) or the link has no password', () => {
    expect(cookies.issue(link({ hours: 0 }), id, now)).toBeNull();
    expect(cookies.accepts(headerOf(link()), link({ hours: 0 }), id, now)).toBe(false);
    expect(cookies.issue({ ...link(), rules: undefined }, id, now)).toBeNull();
    expect(cookies.accepts(headerOf(link()), { ...link(), rules: undefined }, id, now)).toBe(false);
  });

  it('refuses a tampered cookie: another MAC, a stretched expiry, a value of another shape', () => {
    const issued = cookies.issue(link(), id, now)!;
    const [expires, mac] = issued.value.split('.');
    const flipped = mac.slice(0, -1) + (mac.endsWith('A') ? 'B' : 'A');
    expect(cookies.accepts(`${named}=${expires}.${flipped}`, link(), id, now)).toBe(false);
    expect(cookies.accepts(`${named}=${Number(expires) + 3600}.${mac}`, link(), id, now)).toBe(false);
    expect(cookies.accepts(`${named}=${expires}.${mac}x`, link(), id, now)).toBe(false);
    expect(cookies.accepts(`${named}=`, link(), id, now)).toBe(false);
    expect(cookies.accepts(undefined, link(), id, now)).toBe(false);
    // Signed with another key: worthless here.
    const other = new PasswordCookies('another-secret-of-another-installation').issue(link(), id, now)!;
    expect(cookies.accepts(`${named}=${other.value}`, link(), id, now)).toBe(false);
  });

  it('refuses an expired cookie, and one that outlives a lifetime its owner shortened since', () => {
    expect(cookies.accepts(headerOf(link()), link(), id, now + 12 * hour - 1000)).toBe(true);
    expect(cookies.accepts(headerOf(link()), link(), id, now + 12 * hour)).toBe(false);
    expect(cookies.accepts(headerOf(link()), link({ hours: 1 }), id, now)).toBe(false);
    expect(cookies.accepts(headerOf(link({ hours: 1 })), link({ hours: 1 }), id, now)).toBe(true);
  });

  it("refuses another link's cookie, even under this link's name", () => {
    const theirs = cookies.issue(link({ id: '43' }), id, now)!;
    expect(cookies.accepts(`${theirs.name}=${theirs.value}`, link(), id, now)).toBe(false);
    expect(cookies.accepts(`sl_pw_42=${theirs.value}`, link(), id, now)).toBe(false);
  });

  it('refuses every cookie of the old password once the password changed (a new argon2 hash, even of the same password)', () => {
    const before = headerOf(link());
    const changed = link({ hash: '$argon2id$v=19$m=19456,t=2,p=1$b3RoZXJzYWx0$aGFzaGhhc2hoYXNoaGFzaA' });
    expect(cookies.accepts(before, changed, id, now)).toBe(false);
    expect(cookies.accepts(headerOf(changed), changed, id, now)).toBe(true);
  });
});
