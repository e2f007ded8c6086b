import { CACHE_STORE, CLICK_LEASE_STORE } from '@shortlink/read-path';
import {
  MemoryCacheStore,
  MemoryClickLeases,
  MemoryRateWindows,
  MemorySlots,
  MemoryVisitorWindows,
  RedisClickLeases,
  RedisClusterStore,
  RedisRateWindows,
  RedisSlots,
  RedisVisitorWindows,
} from '@shortlink/cache';
import { RATE_WINDOW_STORE, SLOT_STORE } from '@shortlink/tenants-domain';
import { itself, portSpec } from '../port';
import { VISITOR_WINDOW_STORE } from '@shortlink/redirect-rules';

/**
 * The shared cache, the plan windows, the concurrency slots, the per-link visitor windows and the
 * maxClicks counters: Redis Cluster, or in-process stores on the embedded profile.
 */
export const cachePort = portSpec({
  name: 'cache',
  open: (config) => {
    const cache = config.cache;
    return cache.driver === 'redis'
      ? new RedisClusterStore({ nodes: cache.nodes, writeBatching: cache.writeBatching, commandTimeoutMs: cache.commandTimeoutMs })
      : new MemoryCacheStore(cache.maxEntries);
  },
  provides: [
    [CACHE_STORE, itself],
    [RATE_WINDOW_STORE, (store) => (store instanceof RedisClusterStore ? new RedisRateWindows(store) : new MemoryRateWindows())],
    [SLOT_STORE, (store) => (store instanceof RedisClusterStore ? new RedisSlots(store) : new MemorySlots())],
    [VISITOR_WINDOW_STORE, (store) => (store instanceof RedisClusterStore ? new RedisVisitorWindows(store) : new MemoryVisitorWindows())],
    [CLICK_LEASE_STORE, (store) => (store instanceof RedisClusterStore ? new RedisClickLeases(store) : new MemoryClickLeases())],
  ],
  close: (store) => store.close(),
  probes: (store) => [{ name: 'cache', check: () => store.ping() }],
});
