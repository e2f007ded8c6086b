import { Clock, systemClock } from '@shortlink/core';
import { identifierOf, Link, LinkCacheWriter, ShortUrlIdentifier, toCachedLink } from '@shortlink/links-domain';
import { BloomMaintainer } from './bloom-maintainer';
import { CachePolicy, writeThroughTtlMs } from './cache-policy';
import { LinkCache } from './link-cache';
import { CacheStore } from './ports';

/**
 * The read path's side of a link change (docs/design.md, "Edits reach every instance", "Batch
 * creation"): a new value is written through with the cache policy's TTL and never over a newer
 * version, a deleted link leaves a tombstone, and new links drop the "no such link" a scan may have
 * cached for their codes and join the Bloom filter (retried in the background while the cache is down).
 */
export class CachedLinkWriter implements LinkCacheWriter {
  private readonly cache: LinkCache;

  constructor(
    store: CacheStore,
    private readonly bloom: BloomMaintainer,
    private readonly policy: CachePolicy,
    private readonly clock: Clock = systemClock,
  ) {
    this.cache = new LinkCache(store);
  }

  async created(links: readonly Link[]): Promise<void> {
    if (links.length === 1) {
      // A single create: its two writes as they are (one command each).
      await this.cache.invalidate(identifierOf(links[0])).catch(() => undefined);
      await this.bloom.added(links[0]);
      return;
    }
    // A batch chunk: both in one call per cache node.
    await this.bloom.beforeWrite();
    if (links.length) await this.cache.invalidateManyAndSetBits(links.map(identifierOf), this.bloom.bitsOf(links)).catch(() => this.bloom.retryLater(links));
  }

  async updated(link: Link): Promise<void> {
    const value = toCachedLink(link);
    await this.cache.put(identifierOf(link), value, writeThroughTtlMs(this.policy, value, this.clock.now()));
  }

  async deleted(id: ShortUrlIdentifier, version: number): Promise<void> {
    await this.cache.putDeleted(id, version);
  }

  async forget(id: ShortUrlIdentifier): Promise<void> {
    await this.cache.invalidate(id);
  }
}
