import { Link, RedirectType, ShortUrlIdentifier } from './link';
import { CacheStore } from './ports';

/** What the redirect path needs of a link; stored as the `short:link:` string value. */
export interface CachedLink {
  readonly id: string;
  readonly tenantId: string;
  readonly targetUrl: string;
  readonly redirectType: RedirectType;
  readonly expiresAt: number | null;
  readonly status: Link['status'];
}

export type CacheLookup = { kind: 'hit'; link: CachedLink } | { kind: 'null' } | { kind: 'miss' };

/** Seed 000: the null-value sentinel. An empty string can never be a valid link value. */
export const NULL_SENTINEL = '';
export const NULL_TTL_MS = 60_000;

/**
 * `short:link:<domain>:<code>` (docs/design.md, "Redirect read path"; made host-aware). No hash tag on purpose:
 * keys must spread over all Redis Cluster slots.
 */
export const linkCacheKey = (id: ShortUrlIdentifier): string => `short:link:${id.domain}:${id.code}`;

export const toCachedLink = (link: Link): CachedLink => ({
  id: link.id,
  tenantId: link.tenantId,
  targetUrl: link.targetUrl,
  redirectType: link.redirectType,
  expiresAt: link.expiresAt ? link.expiresAt.getTime() : null,
  status: link.status,
});

export class LinkCache {
  constructor(private readonly store: CacheStore) {}

  async get(id: ShortUrlIdentifier): Promise<CacheLookup> {
    const value = await this.store.get(linkCacheKey(id));
    if (value === null) return { kind: 'miss' };
    if (value === NULL_SENTINEL) return { kind: 'null' };
    try {
      return { kind: 'hit', link: JSON.parse(value) as CachedLink };
    } catch {
      return { kind: 'miss' }; // a foreign or corrupt value is re-read from the shard
    }
  }

  put(id: ShortUrlIdentifier, link: CachedLink, ttlMs?: number): Promise<void> {
    return this.store.set(linkCacheKey(id), JSON.stringify(link), ttlMs);
  }

  putNull(id: ShortUrlIdentifier, ttlMs = NULL_TTL_MS): Promise<void> {
    return this.store.set(linkCacheKey(id), NULL_SENTINEL, ttlMs);
  }

  invalidate(id: ShortUrlIdentifier): Promise<void> {
    return this.store.del([linkCacheKey(id)]);
  }
}
