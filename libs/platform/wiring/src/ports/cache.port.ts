import { CACHE_STORE } from '@shortlink/links-domain';
import { MemoryCacheStore, RedisClusterStore } from '@shortlink/cache';
import { itself, portSpec } from '../port-spec';

/** The shared cache: Redis Cluster, or the in-process store of the embedded profile. */
export const cachePort = portSpec({
  name: 'cache',
  open: (config) => {
    const cache = config.cache;
    return cache.driver === 'redis'
      ? new RedisClusterStore({ nodes: cache.nodes, writeBatching: cache.writeBatching, commandTimeoutMs: cache.commandTimeoutMs })
      : new MemoryCacheStore(cache.maxEntries);
  },
  provides: [[CACHE_STORE, itself]],
  close: (store) => store.close(),
  probes: (store) => [{ name: 'cache', check: () => store.ping() }],
});
