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
  private readonly counters: LRUCache<string, Map<number, number>>;
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
      counts = new Map();
      this.counters.set(key, counts);
    }
    const inBucket = counts.get(current);
    counts.set(current, (inBucket ?? 0) + 1);
    // Buckets only fall out of the window when a new one starts.
    if (inBucket === undefined) {
      const oldest = current - this.buckets + 1;
      for (const bucket of counts.keys()) if (bucket < oldest) counts.delete(bucket);
    }
    let sum = 0;
    for (const n of counts.values()) sum += n;
    return sum;
  }

  count(key: string, nowMs = Date.now()): number {
    const counts = this.counters.peek(key);
    if (!counts) return 0;
    const oldest = Math.floor(nowMs / 1000 / this.options.bucketSeconds) - this.buckets + 1;
    let sum = 0;
    for (const [bucket, n] of counts) if (bucket >= oldest) sum += n;
    return sum;
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
