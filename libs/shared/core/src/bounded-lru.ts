import { LRUCache } from 'lru-cache';

export interface BoundedLruOptions<K, V> {
  readonly maxEntries: number;
  /** With `sizeOf`, a bound on the bytes the entries take as well. */
  readonly maxBytes?: number;
  readonly sizeOf?: (value: V, key: K) => number;
  /** Entries live this long at most (ms); 0 or absent: until evicted. */
  readonly ttlMs?: number;
}

/**
 * An LRU bounded by entries (and bytes) that allocates as it fills. lru-cache's `max` allocates
 * arrays of `max` slots at once, about 5 MB per cache of 100 000 with a TTL, and a redirect holds a
 * dozen such caches, most of them nearly empty (docs/benchmarks.md, "The redirect's memory"). Both
 * bounds go through `maxSize` instead, counted in byte-entries: an entry counts max(its bytes ×
 * maxEntries, maxBytes) of maxBytes × maxEntries, so that at most maxEntries fit and their bytes
 * add up to maxBytes at most, exactly (below 2^53 for any bound that fits in memory).
 */
// lru-cache itself constrains keys and values to {} (anything but null and undefined).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export class BoundedLru<K extends {}, V extends {}> extends LRUCache<K, V> {
  private readonly scale: number;

  constructor(o: BoundedLruOptions<K, V>) {
    const ttl = o.ttlMs && o.ttlMs > 0 ? { ttl: o.ttlMs } : {};
    const { maxBytes, sizeOf, maxEntries } = o;
    if (maxBytes === undefined || sizeOf === undefined) super({ maxSize: maxEntries, sizeCalculation: () => 1, ...ttl });
    else super({ maxSize: maxBytes * maxEntries, sizeCalculation: (value, key) => Math.max(maxBytes, Math.ceil(sizeOf(value, key)) * maxEntries), ...ttl });
    this.scale = maxBytes === undefined || sizeOf === undefined ? 1 : maxEntries;
  }

  /** The bytes counted (an entry at least maxBytes / maxEntries); without a byte bound, the entries. */
  get countedBytes(): number {
    return this.calculatedSize / this.scale;
  }
}

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export const boundedLru = <K extends {}, V extends {}>(o: BoundedLruOptions<K, V>): BoundedLru<K, V> => new BoundedLru(o);
