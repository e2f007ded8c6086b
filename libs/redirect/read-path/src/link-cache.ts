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

/** The link values of the shared cache: JSON by version, the null sentinel, tombstones (docs/design.md, "Redirect read path"). */
export class LinkCache {
  constructor(private readonly store: CacheStore) {}

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

  /**
   * Writes the value unless the cache already holds a newer version of the link: a redirect that
   * read the shard before an edit can never put the old target back after the edit's write.
   */
  put(id: ShortUrlIdentifier, link: CachedLink, ttlMs?: number): Promise<boolean> {
    return this.store.setIfNewer(CacheKeys.link(id), JSON.stringify(link), link.version, ttlMs);
  }

  /** Marks a deleted link (version `version`): lookups answer "not found", older values cannot come back. */
  putDeleted(id: ShortUrlIdentifier, version: number): Promise<boolean> {
    const tombstone: Tombstone = { gone: true, version };
    return this.store.setIfNewer(CacheKeys.link(id), JSON.stringify(tombstone), version, TOMBSTONE_TTL_MS);
  }

  putNull(id: ShortUrlIdentifier, ttlMs = NULL_TTL_MS): Promise<void> {
    return this.store.set(CacheKeys.link(id), NULL_SENTINEL, ttlMs);
  }

  invalidate(id: ShortUrlIdentifier): Promise<void> {
    return this.store.del([CacheKeys.link(id)]);
  }

  /**
   * Drops the entries of many links (null values left by scans, typically) and sets the links' Bloom
   * bits, in one call (one script per Redis node: docs/design.md, "Batch creation").
   */
  invalidateManyAndSetBits(ids: readonly ShortUrlIdentifier[], bitmaps: readonly BitmapBits[]): Promise<void> {
    return this.store.deleteAndSetBits(ids.map(CacheKeys.link), bitmaps);
  }
}
