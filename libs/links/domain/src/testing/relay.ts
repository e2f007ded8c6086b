import { CacheEventConsumer } from '../events/cache-consumer';
import { LinkEventRelay, LinkEventRelayOptions } from '../events/outbox-relay';
import { LinkCacheWriter, LinkChangeFeed } from '../ports';
import { InMemoryLinkRepository } from './in-memory-link-repository';

/** The outbox relay and its cache consumer over a repository's outboxes, as the generation app wires them (the domain's specs). */
export function relayOver(
  repo: InMemoryLinkRepository,
  cache: LinkCacheWriter,
  feed: LinkChangeFeed,
  options: Partial<LinkEventRelayOptions> = {},
): LinkEventRelay {
  return new LinkEventRelay(repo.outboxes(), [new CacheEventConsumer(cache, feed, repo)], {
    intervalMs: 1000,
    leaseMs: 10_000,
    confirmAfterMs: 3000,
    ...options,
  });
}
