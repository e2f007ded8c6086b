import { LRUCache } from 'lru-cache';
import { CachedLink } from '../link-cache';

export interface L1Options {
  readonly maxEntries: number;
  readonly maxBytes: number;
  /** Positive entries: bounded staleness across instances after an edit elsewhere. */
  readonly ttlMs: number;
  readonly negativeTtlMs: number;
}

type Entry = { link: CachedLink } | { missing: true };

/**
 * In-process first level (an in-process cache in front of Redis: docs/design.md, "Redirect read path"). Bounded by
 * entries and by bytes; negative entries live much shorter than positive ones. Keys marked hot
 * are pinned in a separate map so a scan of cold codes cannot push them out.
 */
export class L1Cache {
  private readonly lru: LRUCache<string, Entry>;
  /** The entry is kept as it is returned, so a hit on a hot key allocates nothing. */
  private readonly pinned = new Map<string, { entry: { link: CachedLink }; expiresAt: number }>();

  constructor(private readonly options: L1Options) {
    this.lru = new LRUCache<string, Entry>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      sizeCalculation: (v, k) => k.length * 2 + ('link' in v ? v.link.targetUrl.length * 2 + 120 : 16),
      ttl: options.ttlMs,
    });
  }

  get(key: string, now = Date.now()): Entry | undefined {
    const pin = this.pinned.get(key);
    if (pin) {
      if (pin.expiresAt > now) return pin.entry;
      this.pinned.delete(key);
    }
    return this.lru.get(key);
  }

  setPositive(key: string, link: CachedLink, pin: boolean, now = Date.now()): void {
    if (pin) this.pinned.set(key, { entry: { link }, expiresAt: now + this.options.ttlMs });
    else this.lru.set(key, { link });
  }

  /** Pins a hot key; an existing pin keeps its expiry, so a hot key is still re-read now and then. */
  pin(key: string, link: CachedLink, now = Date.now()): void {
    const current = this.pinned.get(key);
    if (!current || current.expiresAt <= now) this.pinned.set(key, { entry: { link }, expiresAt: now + this.options.ttlMs });
  }

  setNegative(key: string): void {
    if (!this.pinned.has(key)) this.lru.set(key, { missing: true }, { ttl: this.options.negativeTtlMs });
  }

  /** Unpins keys that are no longer hot (the pinned map stays as small as the hot set). */
  retainPinned(hot: ReadonlySet<string>): void {
    for (const [key, entry] of this.pinned) {
      if (!hot.has(key)) {
        this.pinned.delete(key);
        this.lru.set(key, entry.entry);
      }
    }
  }

  invalidate(key: string): void {
    this.pinned.delete(key);
    this.lru.delete(key);
  }

  get size(): { entries: number; pinned: number; bytes: number } {
    return { entries: this.lru.size, pinned: this.pinned.size, bytes: this.lru.calculatedSize };
  }
}
