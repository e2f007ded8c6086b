import { LINK_CHANGE_FEED } from '@shortlink/links-domain';
import { MemoryLinkChangeFeed, RedisLinkChangeFeed } from '@shortlink/cache';
import { itself, portSpec } from '../port';

/** Link changes to every redirect instance: Redis pub/sub with the Redis cache, in-process otherwise. */
export const changesPort = portSpec({
  name: 'link-changes',
  open: (config) =>
    config.cache.driver === 'redis'
      ? new RedisLinkChangeFeed({ nodes: config.cache.nodes, commandTimeoutMs: config.cache.commandTimeoutMs })
      : new MemoryLinkChangeFeed(),
  provides: [[LINK_CHANGE_FEED, itself]],
  close: (feed) => feed.close(),
});
