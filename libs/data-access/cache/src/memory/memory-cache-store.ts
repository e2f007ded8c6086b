import { LRUCache } from 'lru-cache';
import { CacheStore } from '@shortlink/links-domain';

/**
 * The embedded twin of Redis: an in-process LRU bounded by entry count, with per-key TTL.
 * Entries without TTL are evicted least-recently-used first, as Redis does under allkeys-lru.
 */
export class MemoryCacheStore implements CacheStore {
  private readonly lru: LRUCache<string, string>;

  constructor(maxEntries: number) {
    this.lru = new LRUCache<string, string>({ max: maxEntries, ttlAutopurge: false, allowStale: false });
  }

  async get(key: string): Promise<string | null> {
    return this.lru.get(key) ?? null;
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.lru.set(key, value, ttlMs ? { ttl: ttlMs } : undefined);
  }

  async del(keys: readonly string[]): Promise<void> {
    for (const k of keys) this.lru.delete(k);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.lru.clear();
  }
}
