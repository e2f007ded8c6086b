import { CachedLink } from '../cached-link';
import { PasswordCookies } from './password-cookie';

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
  const headerOf = (l: CachedLink, at = now) => {
    const issued = cookies.issue(l, at)!;
    return `theme=dark; ${issued.name}=${issued.value}`;
  };

  it('issues a cookie named after the link for 12 h by default, or the hours its owner set, and accepts it back', () => {
    const issued = cookies.issue(link(), now)!;
    expect(issued.name).toBe('sl_pw_42');
    expect(issued.maxAgeSeconds).toBe(12 * 3600);
    expect(issued.value).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
    expect(cookies.issue(link({ hours: 2 }), now)!.maxAgeSeconds).toBe(7200);
    expect(cookies.accepts(headerOf(link()), link(), now + hour)).toBe(true);
  });

  it('issues nothing and accepts nothing when the owner wants the password at every visit (0 h) or the link has no password', () => {
    expect(cookies.issue(link({ hours: 0 }), now)).toBeNull();
    expect(cookies.accepts(headerOf(link()), link({ hours: 0 }), now)).toBe(false);
    expect(cookies.issue({ ...link(), rules: undefined }, now)).toBeNull();
    expect(cookies.accepts(headerOf(link()), { ...link(), rules: undefined }, now)).toBe(false);
  });

  it('refuses a tampered cookie: another MAC, a stretched expiry, a value of another shape', () => {
    const issued = cookies.issue(link(), now)!;
    const [expires, mac] = issued.value.split('.');
    const flipped = mac.slice(0, -1) + (mac.endsWith('A') ? 'B' : 'A');
    expect(cookies.accepts(`sl_pw_42=${expires}.${flipped}`, link(), now)).toBe(false);
    expect(cookies.accepts(`sl_pw_42=${Number(expires) + 3600}.${mac}`, link(), now)).toBe(false);
    expect(cookies.accepts(`sl_pw_42=${expires}.${mac}x`, link(), now)).toBe(false);
    expect(cookies.accepts(`sl_pw_42=`, link(), now)).toBe(false);
    expect(cookies.accepts(undefined, link(), now)).toBe(false);
    // Signed with another key: worthless here.
    const other = new PasswordCookies('another-secret-of-another-installation').issue(link(), now)!;
    expect(cookies.accepts(`sl_pw_42=${other.value}`, link(), now)).toBe(false);
  });

  it('refuses an expired cookie, and one that outlives a lifetime its owner shortened since', () => {
    expect(cookies.accepts(headerOf(link()), link(), now + 12 * hour - 1000)).toBe(true);
    expect(cookies.accepts(headerOf(link()), link(), now + 12 * hour)).toBe(false);
    expect(cookies.accepts(headerOf(link()), link({ hours: 1 }), now)).toBe(false);
    expect(cookies.accepts(headerOf(link({ hours: 1 })), link({ hours: 1 }), now)).toBe(true);
  });

  it("refuses another link's cookie, even under this link's name", () => {
    const theirs = cookies.issue(link({ id: '43' }), now)!;
    expect(cookies.accepts(`${theirs.name}=${theirs.value}`, link(), now)).toBe(false);
    expect(cookies.accepts(`sl_pw_42=${theirs.value}`, link(), now)).toBe(false);
  });

  it('refuses every cookie of the old password once the password changed (a new argon2 hash, even of the same password)', () => {
    const before = headerOf(link());
    const changed = link({ hash: '$argon2id$v=19$m=19456,t=2,p=1$b3RoZXJzYWx0$aGFzaGhhc2hoYXNoaGFzaA' });
    expect(cookies.accepts(before, changed, now)).toBe(false);
    expect(cookies.accepts(headerOf(changed), changed, now)).toBe(true);
  });
});
