import type { DeviceTarget } from '@shortlink/visitors-domain';
import { Link, LinkStatus, RedirectType, ShortUrlIdentifier, Utm, Variant } from './link';
import { BitmapBits, CacheStore } from './ports';

/**
 * What changes where a redirect goes, beyond the target; absent on a plain link, so the common
 * case reads, stores and checks nothing more (docs/design.md, "Link options").
 */
export interface RedirectRules {
  readonly maxClicks?: number;
  readonly passwordHash?: string;
  readonly clicksPerIpPerMinute?: number;
  readonly geoTargets?: Readonly<Record<string, string>>;
  readonly deviceTargets?: Readonly<Partial<Record<DeviceTarget, string>>>;
  readonly variants?: readonly Variant[];
  readonly utm?: Utm;
  /** Present (false) only when the visitor's query string is not carried over. */
  readonly forwardQuery?: false;
}

/** What the redirect path needs of a link; stored as the `short:link:` string value. */
export interface CachedLink {
  readonly id: string;
  readonly tenantId: string;
  readonly targetUrl: string;
  readonly redirectType: RedirectType;
  readonly expiresAt: number | null;
  readonly status: LinkStatus;
  /** The link's version: a cache never replaces a newer value with an older one. */
  readonly version: number;
  /** Epoch ms, for the preview page. */
  readonly createdAt: number;
  readonly title?: string;
  readonly moderation?: 'flagged' | 'banned';
  readonly rules?: RedirectRules;
}

export type CacheLookup = { kind: 'hit'; link: CachedLink } | { kind: 'null' } | { kind: 'miss' };

/** A deleted link's cache value: answers "no such link" and, by its version, outranks older values. */
interface Tombstone {
  readonly gone: true;
  readonly version: number;
}

/** How long a tombstone keeps an in-flight lookup from writing a deleted link back. */
export const TOMBSTONE_TTL_MS = 10 * 60_000;

/** The null-value sentinel (docs/design.md, "Redirect read path"). An empty string can never be a link. */
export const NULL_SENTINEL = '';
export const NULL_TTL_MS = 60_000;

/**
 * `short:link:<domain>:<code>` (docs/design.md, "Redirect read path"; made host-aware). No hash tag on purpose:
 * keys must spread over all Redis Cluster slots.
 */
export const linkCacheKey = (id: ShortUrlIdentifier): string => `short:link:${id.domain}:${id.code}`;

export function rulesOf(link: Link): RedirectRules | undefined {
  const rules: { -readonly [K in keyof RedirectRules]: RedirectRules[K] } = {};
  if (link.maxClicks !== null) rules.maxClicks = link.maxClicks;
  if (link.passwordHash !== null) rules.passwordHash = link.passwordHash;
  if (link.clicksPerIpPerMinute !== null) rules.clicksPerIpPerMinute = link.clicksPerIpPerMinute;
  if (link.geoTargets !== null) rules.geoTargets = link.geoTargets;
  if (link.deviceTargets !== null) rules.deviceTargets = link.deviceTargets;
  if (link.variants !== null) rules.variants = link.variants;
  if (link.utm !== null) rules.utm = link.utm;
  if (!link.forwardQuery) rules.forwardQuery = false;
  return Object.keys(rules).length ? rules : undefined;
}

export const toCachedLink = (link: Link): CachedLink => {
  const rules = rulesOf(link);
  return {
    id: link.id,
    tenantId: link.tenantId,
    targetUrl: link.targetUrl,
    redirectType: link.redirectType,
    expiresAt: link.expiresAt ? link.expiresAt.getTime() : null,
    status: link.status,
    version: link.version,
    createdAt: link.createdAt.getTime(),
    ...(link.title !== null ? { title: link.title } : {}),
    ...(link.moderation !== 'clear' ? { moderation: link.moderation } : {}),
    ...(rules ? { rules } : {}),
  };
};

export class LinkCache {
  constructor(private readonly store: CacheStore) {}

  async get(id: ShortUrlIdentifier): Promise<CacheLookup> {
    const value = await this.store.get(linkCacheKey(id));
    if (value === null) return { kind: 'miss' };
    if (value === NULL_SENTINEL) return { kind: 'null' };
    try {
      const parsed = JSON.parse(value) as CachedLink | Tombstone;
      return 'gone' in parsed ? { kind: 'null' } : { kind: 'hit', link: parsed };
    } catch {
      return { kind: 'miss' }; // a foreign or corrupt value is re-read from the shard
    }
  }

  /**
   * Writes the value unless the cache already holds a newer version of the link: a redirect that
   * read the shard before an edit can never put the old target back after the edit's write.
   */
  put(id: ShortUrlIdentifier, link: CachedLink, ttlMs?: number): Promise<boolean> {
    return this.store.setIfNewer(linkCacheKey(id), JSON.stringify(link), link.version, ttlMs);
  }

  /** Marks a deleted link (version `version`): lookups answer "not found", older values cannot come back. */
  putDeleted(id: ShortUrlIdentifier, version: number): Promise<boolean> {
    const tombstone: Tombstone = { gone: true, version };
    return this.store.setIfNewer(linkCacheKey(id), JSON.stringify(tombstone), version, TOMBSTONE_TTL_MS);
  }

  putNull(id: ShortUrlIdentifier, ttlMs = NULL_TTL_MS): Promise<void> {
    return this.store.set(linkCacheKey(id), NULL_SENTINEL, ttlMs);
  }

  invalidate(id: ShortUrlIdentifier): Promise<void> {
    return this.store.del([linkCacheKey(id)]);
  }

  /**
   * `invalidateMany` and the links' Bloom bits in one call (one script per Redis node: batch
   * creation, docs/design.md, "Batch creation").
   */
  invalidateManyAndSetBits(ids: readonly ShortUrlIdentifier[], bitmaps: readonly BitmapBits[]): Promise<void> {
    return this.store.deleteAndSetBits(ids.map(linkCacheKey), bitmaps);
  }

  /** Drops the entries (null values left by scans, typically) of many links in one call. */
  invalidateMany(ids: readonly ShortUrlIdentifier[]): Promise<void> {
    return ids.length ? this.store.del(ids.map(linkCacheKey)) : Promise.resolve();
  }
}
