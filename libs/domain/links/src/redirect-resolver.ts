import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { isPlausibleCode } from './alias';
import { ShortUrlIdentifier } from './link';
import { CachedLink, LinkCache, toCachedLink } from './link-cache';
import { ShardedLinkRepository } from './sharded-link-repository';

export type LookupSource = 'redis' | 'redis_null' | 'db' | 'db_miss' | 'rejected';

export interface Resolution {
  readonly link: CachedLink;
  readonly source: LookupSource;
}

/**
 * Seed 000's read path: cache → shard → write back (no TTL) or null sentinel (60 s).
 * Throws LINK_NOT_FOUND / LINK_EXPIRED / LINK_DISABLED; the caller maps those to 404/410.
 */
export class RedirectResolver {
  constructor(
    private readonly cache: LinkCache,
    private readonly links: ShardedLinkRepository,
    private readonly clock: Clock = systemClock,
  ) {}

  async resolve(id: ShortUrlIdentifier): Promise<Resolution & { source: Exclude<LookupSource, 'rejected'> }> {
    if (!isPlausibleCode(id.code)) throw notFound(id, 'rejected');
    const cached = await this.cache.get(id).catch(() => ({ kind: 'miss' as const }));
    if (cached.kind === 'null') throw notFound(id, 'redis_null');
    if (cached.kind === 'hit') return { link: this.usable(id, cached.link), source: 'redis' };

    const link = await this.links.findByCode(id);
    if (!link) {
      await this.cache.putNull(id).catch(() => undefined);
      throw notFound(id, 'db_miss');
    }
    const value = toCachedLink(link);
    await this.cache.put(id, value).catch(() => undefined);
    return { link: this.usable(id, value), source: 'db' };
  }

  private usable(id: ShortUrlIdentifier, link: CachedLink): CachedLink {
    if (link.status === 'disabled') throw new DomainError(ErrorCode.LINK_DISABLED, `link ${id.code} is disabled`, { shortCode: id.code });
    if (link.expiresAt !== null && link.expiresAt <= this.clock.now()) {
      throw new DomainError(ErrorCode.LINK_EXPIRED, `link ${id.code} has expired`, { shortCode: id.code });
    }
    return link;
  }
}

function notFound(id: ShortUrlIdentifier, source: LookupSource): DomainError {
  return new DomainError(ErrorCode.LINK_NOT_FOUND, `no link ${id.code} on ${id.domain}`, { shortCode: id.code, domain: id.domain, source });
}
