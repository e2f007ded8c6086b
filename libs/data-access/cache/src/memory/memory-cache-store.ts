import { LRUCache } from 'lru-cache';
import { BitmapBits, CacheStore } from '@shortlink/read-path';

/** Bits set in each byte value. */
const POPCOUNT = Uint8Array.from({ length: 256 }, (_, v) => v.toString(2).replace(/0/g, '').length);

/**
 * The embedded twin of Redis: an in-process LRU bounded by entry count, with per-key TTL.
 * Entries without TTL are evicted least-recently-used first, as Redis does under allkeys-lru.
 * Bitmaps (the Bloom filter) live apart from the LRU: they are few, large and must not be evicted.
 */
export class MemoryCacheStore implements CacheStore {
  private readonly lru: LRUCache<string, string>;
  private readonly bitmaps = new Map<string, Uint8Array>();

  constructor(maxEntries: number) {
    // Bounded through maxSize with a size of 1 per entry, not `max`: lru-cache preallocates
    // `max`-long arrays (keys, values, links, TTLs) up front, and at the default million entries
    // that made the embedded redirect start at 242 MB RSS instead of 199 MB. With maxSize its
    // storage grows with use; the bound is the same.
    this.lru = new LRUCache<string, string>({ maxSize: maxEntries, sizeCalculation: () => 1, ttlAutopurge: false, allowStale: false });
  }

  async get(key: string): Promise<string | null> {
    return this.lru.get(key) ?? null;
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.lru.set(key, value, ttlMs ? { ttl: ttlMs } : undefined);
  }

  async del(keys: readonly string[]): Promise<void> {
    for (const k of keys) {
      this.lru.delete(k);
      this.bitmaps.delete(k);
    }
  }

  async pttl(key: string): Promise<number> {
    if (!this.lru.has(key)) return -2;
    const remaining = this.lru.getRemainingTTL(key);
    return Number.isFinite(remaining) && remaining > 0 ? Math.ceil(remaining) : -1;
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.lru.has(key)) return false;
    this.lru.set(key, value, { ttl: ttlMs });
    return true;
  }

  async deleteIfEquals(key: string, value: string): Promise<boolean> {
    if (this.lru.get(key) !== value) return false;
    this.lru.delete(key);
    return true;
  }

  async incrBy(key: string, delta: number, ttlMs: number): Promise<number> {
    const current = this.lru.get(key);
    const next = (current === undefined ? 0 : Number(current)) + delta;
    if (current === undefined) this.lru.set(key, String(next), { ttl: ttlMs });
    else this.lru.set(key, String(next), { noUpdateTTL: true });
    return next;
  }

  async setIfNewer(key: string, value: string, version: number, ttlMs?: number): Promise<boolean> {
    const current = this.lru.get(key);
    if (current) {
      try {
        const stored = (JSON.parse(current) as { version?: unknown }).version;
        if (typeof stored === 'number' && stored >= version) return false;
      } catch {
        // not JSON: replaced, as on Redis
      }
    }
    this.lru.set(key, value, ttlMs ? { ttl: ttlMs } : undefined);
    return true;
  }

  async incrementBelow(key: string, limit: number, initial: number): Promise<number | null> {
    const current = this.lru.get(key);
    const n = current === undefined ? initial : Number(current);
    if (n >= limit) return null;
    // Evictable like any key, as on Redis under allkeys-lru: a lost counter starts again from `initial`.
    this.lru.set(key, String(n + 1), { noUpdateTTL: true });
    return n + 1;
  }

  async setBits(key: string, offsets: readonly number[]): Promise<void> {
    const max = Math.max(...offsets);
    let bits = this.bitmaps.get(key);
    if (!bits || bits.length * 8 <= max) {
      const grown = new Uint8Array(Math.max(Math.ceil((max + 1) / 8), (bits?.length ?? 0) * 2));
      if (bits) grown.set(bits);
      bits = grown;
      this.bitmaps.set(key, bits);
    }
    for (const o of offsets) bits[o >> 3] |= 0x80 >> (o & 7);
  }

  async dropNullsAndSetBits(keys: readonly string[], bitmaps: readonly BitmapBits[]): Promise<void> {
    for (const k of keys) await this.deleteIfEquals(k, '');
    for (const { key, offsets } of bitmaps) if (offsets.length) await this.setBits(key, offsets);
  }

  async getBits(key: string, offsets: readonly number[]): Promise<number[]> {
    const bits = this.bitmaps.get(key);
    return offsets.map((o) => (bits && o >> 3 < bits.length && bits[o >> 3] & (0x80 >> (o & 7)) ? 1 : 0));
  }

  async countBits(key: string, startByte: number, endByte: number): Promise<number> {
    const bits = this.bitmaps.get(key);
    if (!bits) return 0;
    let n = 0;
    for (let i = Math.max(0, startByte), end = Math.min(endByte, bits.length - 1); i <= end; i++) n += POPCOUNT[bits[i]];
    return n;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.lru.clear();
    this.bitmaps.clear();
  }
}
