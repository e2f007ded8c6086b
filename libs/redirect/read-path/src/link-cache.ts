import { CachedLink, ShortUrlIdentifier } from '@shortlink/links-domain';
import { CacheKeys } from './cache-keys';
import { BitmapBits, CacheStore } from './ports';

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

/** CACHE_MAX_TTL_SECONDS' default: no link entry outlives an hour (docs/design.md, "Keys in the shared cache"). */
export const MAX_TTL_MS = 3_600_000;

/**
 * The link values of the shared cache: JSON by version, the null sentinel, tombstones (docs/design.md,
 * "Redirect read path"). Every entry it writes expires within `maxTtlMs` (CACHE_MAX_TTL_SECONDS), the
 * last safety net under a lost invalidation ("Keys in the shared cache").
 */
export class LinkCache {
  constructor(
    private readonly store: CacheStore,
    private readonly maxTtlMs = MAX_TTL_MS,
  ) {}

  async get(id: ShortUrlIdentifier): Promise<CacheLookup> {
    const value = await this.store.get(CacheKeys.link(id));
    if (value === null) return { kind: 'miss' };
    if (value === NULL_SENTINEL) return { kind: 'null' };
    try {
      const parsed = JSON.parse(value) as CachedLink | Tombstone;
      return 'gone' in parsed ? { kind: 'null' } : { kind: 'hit', link: parsed };
    } catch {
      return { kind: 'miss' }; // a foreign or corrupt value is re-read from the shard
    }
  }

  /** The version the cache holds for the link, its value's or its tombstone's; null for none (a miss, the null sentinel, a foreign value). */
  async versionOf(id: ShortUrlIdentifier): Promise<number | null> {
    const value = await this.store.get(CacheKeys.link(id));
    if (!value) return null;
    try {
      const version = (JSON.parse(value) as { version?: unknown }).version;
      return typeof version === 'number' ? version : null;
    } catch {
      return null;
    }
  }

  /**
   * Writes the value unless the cache already holds a newer version of the link: a redirect that
   * read the shard before an edit can never put the old target back after the edit's write.
   */
  put(id: ShortUrlIdentifier, link: CachedLink, ttlMs?: number): Promise<boolean> {
    return this.store.setIfNewer(CacheKeys.link(id), JSON.stringify(link), link.version, this.capped(ttlMs));
  }

  /** Marks a deleted link (version `version`): lookups answer "not found", older values cannot come back. */
  putDeleted(id: ShortUrlIdentifier, version: number): Promise<boolean> {
    const tombstone: Tombstone = { gone: true, version };
    return this.store.setIfNewer(CacheKeys.link(id), JSON.stringify(tombstone), version, this.capped(TOMBSTONE_TTL_MS));
  }

  /**
   * "No such link", where the cache holds nothing for the code: never over a value or a tombstone
   * written since the lookup began (a SET over a tombstone would let a late writer's older value
   * in, since a value always replaces the sentinel).
   */
  async putNull(id: ShortUrlIdentifier, ttlMs = NULL_TTL_MS): Promise<void> {
    await this.store.setIfAbsent(CacheKeys.link(id), NULL_SENTINEL, this.capped(ttlMs));
  }

  /** Drops a "no such link" entry for a code that now has a link; a value or a tombstone stays. */
  async dropNull(id: ShortUrlIdentifier): Promise<void> {
    await this.store.deleteIfEquals(CacheKeys.link(id), NULL_SENTINEL);
  }

  /**
   * Drops the "no such link" entries of many links (left by scans, typically) and sets the links'
   * Bloom bits, in one call (one script per Redis node: docs/design.md, "Batch creation").
   */
  dropNullsAndSetBits(ids: readonly ShortUrlIdentifier[], bitmaps: readonly BitmapBits[]): Promise<void> {
    return this.store.dropNullsAndSetBits(ids.map(CacheKeys.link), bitmaps);
  }

  private capped(ttlMs: number | undefined): number {
    return ttlMs === undefined ? this.maxTtlMs : Math.min(ttlMs, this.maxTtlMs);
  }
}
