import { createHmac, hkdfSync, timingSafeEqual } from 'crypto';

/** Shlink's topics (its Mercure updates): every new visit, one short code's, the orphan visits. */
export const TOPIC = {
  newVisit: 'https://shlink.io/new-visit',
  newShortUrlVisit: (shortCode: string) => `https://shlink.io/new-visit/${shortCode}`,
  newOrphanVisit: 'https://shlink.io/new-orphan-visit',
} as const;

/** What a subscriber's token allows: the topic selectors (Mercure's `mercure.subscribe`), whose visits (ours). */
export interface MercureGrant {
  /** Topic selectors: an exact topic, `*`, or a URI template whose `{var}` stands for one path segment. */
  readonly subscribe: readonly string[];
  /** The tenant whose visits the token receives. */
  readonly tenantId: string;
  /** The domains whose orphan visits it receives (the caller's own; an operator's also the service's). */
  readonly orphanDomains: readonly string[];
  /** Epoch seconds. */
  readonly exp: number;
}

/** The selectors a token of ours carries: Shlink's three topics. */
export const SHLINK_SELECTORS = [TOPIC.newVisit, 'https://shlink.io/new-visit/{shortCode}', TOPIC.newOrphanVisit] as const;

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');
const HEADER = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

/**
 * The Mercure hub's JWTs (docs/design.md, "Compatible APIs", Mercure): HS256 under a key derived
 * from the code secret (HKDF, info `mercure-jwt v1`), so that every generation instance issues and
 * checks them and nothing is stored. A token names its tenant and the domains of its orphan visits,
 * so a subscriber receives only what its key could read.
 */
export class MercureTokens {
  private readonly key: Buffer;

  constructor(codeSecret: string | Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', codeSecret, 'shortlink', 'mercure-jwt v1', 32));
  }

  issue(grant: Omit<MercureGrant, 'exp' | 'subscribe'>, ttlSeconds: number, now = Date.now()): string {
    const exp = Math.floor(now / 1000) + ttlSeconds;
    const payload = b64url(
      JSON.stringify({ mercure: { subscribe: SHLINK_SELECTORS }, shortlink: { tenant: grant.tenantId, orphanDomains: grant.orphanDomains }, exp }),
    );
    return `${HEADER}.${payload}.${this.sign(`${HEADER}.${payload}`)}`;
  }

  /** The grant of a token of ours that is whole, signed by us and not expired; null otherwise. */
  verify(token: string, now = Date.now()): MercureGrant | null {
    const parts = token.split('.');
    if (parts.length !== 3) return null;
    const [header, payload, signature] = parts;
    const expected = Buffer.from(this.sign(`${header}.${payload}`));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    try {
      if (JSON.parse(Buffer.from(header, 'base64url').toString()).alg !== 'HS256') return null;
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as {
        mercure?: { subscribe?: unknown };
        shortlink?: { tenant?: unknown; orphanDomains?: unknown };
        exp?: unknown;
      };
      const subscribe = claims.mercure?.subscribe;
      const tenant = claims.shortlink?.tenant;
      const orphanDomains = claims.shortlink?.orphanDomains;
      if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now) return null;
      if (!Array.isArray(subscribe) || !subscribe.every((s) => typeof s === 'string')) return null;
      if (typeof tenant !== 'string' || !Array.isArray(orphanDomains) || !orphanDomains.every((d) => typeof d === 'string')) return null;
      return { subscribe, tenantId: tenant, orphanDomains, exp: claims.exp };
    } catch {
      return null;
    }
  }

  private sign(input: string): string {
    return createHmac('sha256', this.key).update(input).digest('base64url');
  }
}

/** Whether a topic matches a selector: the same, `*`, or a URI template whose each `{var}` is one path segment. */
export function topicMatches(selector: string, topic: string): boolean {
  if (selector === '*' || selector === topic) return true;
  if (!selector.includes('{')) return false;
  const pattern = selector
    .split(/(\{[^}]*\})/)
    .map((part) => (part.startsWith('{') ? '[^/?#]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}$`).test(topic);
}
