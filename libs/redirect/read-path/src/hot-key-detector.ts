import type { LRUCache } from 'lru-cache';
import { boundedLru } from '@shortlink/core';

export interface HotKeyOptions {
  readonly windowSeconds: number;
  readonly bucketSeconds: number;
  readonly threshold: number;
  readonly maxTrackedKeys: number;
}

/** docs/design.md, "Where the numbers come from" (the hot-key article). */
export const DEFAULT_HOT_KEYS: HotKeyOptions = { windowSeconds: 60, bucketSeconds: 10, threshold: 50, maxTrackedKeys: 5000 };

/**
 * A bucketed sliding window: per key, counts in buckets of `bucketSeconds`; a key is hot
 * when the buckets inside the window sum to at least `threshold`. Tracked keys are LRU-bounded so
 * a scan of many codes cannot grow memory. Only successful reads should be recorded.
 */
export class HotKeyDetector {
  private readonly counters: LRUCache<string, KeyBuckets>;
  private readonly buckets: number;

  constructor(readonly options: HotKeyOptions = DEFAULT_HOT_KEYS) {
    this.buckets = Math.max(1, Math.floor(options.windowSeconds / options.bucketSeconds));
    this.counters = boundedLru({ maxEntries: options.maxTrackedKeys });
  }

  /** Counts one read and returns the reads of the key inside the window, this one included. */
  record(key: string, nowMs = Date.now()): number {
    const current = Math.floor(nowMs / 1000 / this.options.bucketSeconds);
    let counts = this.counters.get(key);
    if (!counts) {
      counts = new KeyBuckets(this.buckets);
      this.counters.set(key, counts);
    }
    return counts.add(current);
  }

  count(key: string, nowMs = Date.now()): number {
    const counts = this.counters.peek(key);
    if (!counts) return 0;
    return counts.sumSince(Math.floor(nowMs / 1000 / this.options.bucketSeconds) - this.buckets + 1);
  }

  isHot(key: string, nowMs = Date.now()): boolean {
    return this.count(key, nowMs) >= this.options.threshold;
  }

  /** Hot keys, hottest first. */
  hotKeys(nowMs = Date.now()): Array<{ key: string; reads: number }> {
    const hot: Array<{ key: string; reads: number }> = [];
    for (const key of this.counters.keys()) {
      const reads = this.count(key, nowMs);
      if (reads >= this.options.threshold) hot.push({ key, reads });
    }
    return hot.sort((a, b) => b.reads - a.reads);
  }

  get tracked(): number {
    return this.counters.size;
  }
}

/**
 * One key's counts in a ring of `n` buckets: bucket b lives in slot b mod n, and a slot still
 * holding an older bucket is taken over (its count starts again at 0). No map, no allocation per read.
 */
class KeyBuckets {
  private readonly ids: Float64Array;
  private readonly counts: Float64Array;

  constructor(n: number) {
    this.ids = new Float64Array(n).fill(-Infinity);
    this.counts = new Float64Array(n);
  }

  /** Counts one read in bucket `current` and returns the reads of the window that ends with it. */
  add(current: number): number {
    const n = this.ids.length;
    const slot = ((current % n) + n) % n;
    if (this.ids[slot] !== current) {
      this.ids[slot] = current;
      this.counts[slot] = 0;
    }
    this.counts[slot]++;
    return this.sumSince(current - n + 1);
  }

  /** Reads in the buckets from `oldest` on. */
  sumSince(oldest: number): number {
    let sum = 0;
    for (let i = 0; i < this.ids.length; i++) if (this.ids[i] >= oldest) sum += this.counts[i];
    return sum;
  }
}
