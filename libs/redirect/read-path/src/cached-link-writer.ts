import { Clock, GroupCommit, systemClock } from '@shortlink/core';
import { identifierOf, Link, LinkCacheWriter, ShortUrlIdentifier, toCachedLink } from '@shortlink/links-domain';
import { bloomItem, BloomLayoutUnknown } from './bloom-filter';
import { BloomMaintainer } from './bloom-maintainer';
import { CachePolicy, writeThroughTtlMs } from './cache-policy';
import { LinkCache } from './link-cache';
import { BitmapBits, CacheStore } from './ports';

/**
 * The read path's side of a link change, as the outbox relay delivers it (docs/design.md, "Edits
 * reach every instance", "Batch creation"): a new value is written through with the cache policy's
 * TTL and never over a newer version, a deleted link leaves a tombstone, and new links drop the
 * "no such link" a scan may have cached for their codes and join the Bloom filter. Every write
 * fails when the cache does not take it: the relay delivers again.
 */
export class CachedLinkWriter implements LinkCacheWriter {
  private readonly cache: LinkCache;
  /** Single creates that arrive together are marked in one call per cache node (docs/design.md, "Group commit"). */
  private readonly singles = new GroupCommit<ShortUrlIdentifier>({ write: (ids) => this.markCreated(ids), maxItems: 500 });

  constructor(
    store: CacheStore,
    private readonly bloom: BloomMaintainer,
    private readonly policy: CachePolicy,
    private readonly clock: Clock = systemClock,
  ) {
    this.cache = new LinkCache(store, policy.maxTtlMs);
  }

  async created(ids: readonly ShortUrlIdentifier[]): Promise<void> {
    if (ids.length === 0) return;
    // A batch chunk is one call already; only single creates wait to go together.
    if (ids.length === 1) await this.singles.submit(ids[0]);
    else await this.markCreated(ids);
  }

  private async markCreated(ids: readonly ShortUrlIdentifier[]): Promise<void> {
    await this.bloom.beforeWrite();
    const bits = this.bitsOf(ids);
    if (ids.length === 1) {
      // A single create: its two writes as they are (one command each).
      await this.cache.dropNull(ids[0]);
      await this.bloom.filter.write(bits);
      return;
    }
    // A batch chunk, or single creates together: both in one call per cache node.
    await this.cache.dropNullsAndSetBits(ids, bits);
  }

  async updated(link: Link): Promise<boolean> {
    const value = toCachedLink(link);
    return this.cache.put(identifierOf(link), value, writeThroughTtlMs(this.policy, value, this.clock.now()));
  }

  async deleted(id: ShortUrlIdentifier, version: number): Promise<boolean> {
    return this.cache.putDeleted(id, version);
  }

  async holds(id: ShortUrlIdentifier, version: number): Promise<boolean> {
    return ((await this.cache.versionOf(id)) ?? 0) >= version;
  }

  /**
   * The links' bits in the open generations. With no layout at all there is no filter to mark (the
   * build still to come scans the shards, which hold the links); a layout not read lately fails the
   * delivery, which the relay makes again.
   */
  private bitsOf(ids: readonly ShortUrlIdentifier[]): BitmapBits[] {
    try {
      return this.bloom.filter.bitsOf(ids.map((id) => bloomItem(id.domain, id.code)));
    } catch (error) {
      if (error instanceof BloomLayoutUnknown && error.absent) return [];
      throw error;
    }
  }
}
