import { MercureTokens, SHLINK_SELECTORS, TOPIC, topicMatches } from './mercure-token';

describe('MercureTokens (the hub’s JWTs)', () => {
  const tokens = new MercureTokens('a-code-secret-of-32-characters!!');
  const grant = { tenantId: 't1', orphanDomains: ['own.example'] };

  it('issues an HS256 JWT with Mercure’s subscribe claim that it verifies back', () => {
    const jwt = tokens.issue(grant, 60, Date.UTC(2026, 0, 1));
    const [header, payload] = jwt
      .split('.')
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload.mercure).toEqual({ subscribe: [...SHLINK_SELECTORS] });
    expect(tokens.verify(jwt, Date.UTC(2026, 0, 1) + 59_000)).toEqual({ ...grant, subscribe: [...SHLINK_SELECTORS], exp: Date.UTC(2026, 0, 1) / 1000 + 60 });
  });

  it('refuses an expired token, another key’s, a changed payload and junk', () => {
    const now = Date.UTC(2026, 0, 1);
    const jwt = tokens.issue(grant, 60, now);
    expect(tokens.verify(jwt, now + 61_000)).toBeNull();
    expect(new MercureTokens('another-secret-of-32-characters!!').verify(jwt, now)).toBeNull();
    const [h, , sig] = jwt.split('.');
    const forged = Buffer.from(
      JSON.stringify({ mercure: { subscribe: ['*'] }, shortlink: { tenant: 't2', orphanDomains: [] }, exp: now / 1000 + 60 }),
    ).toString('base64url');
    expect(tokens.verify(`${h}.${forged}.${sig}`, now)).toBeNull();
    expect(tokens.verify('not.a.jwt', now)).toBeNull();
    expect(tokens.verify('', now)).toBeNull();
  });
});

describe('topicMatches', () => {
  it('matches a topic by itself, by *, and by a URI template of one segment per variable', () => {
    expect(topicMatches(TOPIC.newVisit, TOPIC.newVisit)).toBe(true);
    expect(topicMatches('*', TOPIC.newOrphanVisit)).toBe(true);
    expect(topicMatches('https://shlink.io/new-visit/{shortCode}', TOPIC.newShortUrlVisit('abc123'))).toBe(true);
    expect(topicMatches('https://shlink.io/new-visit/{shortCode}', TOPIC.newVisit)).toBe(false);
    expect(topicMatches('https://shlink.io/new-visit/{shortCode}', 'https://shlink.io/new-visit/a/b')).toBe(false);
    expect(topicMatches(TOPIC.newVisit, 'https://shlink.io/new-visitX')).toBe(false);
    expect(topicMatches('https://shlink.io/new.visit', 'https://shlink.io/newXvisit')).toBe(false);
  });
});
