import { BoundedLru, boundedLru } from '@shortlink/core';
import { CachedLink } from '@shortlink/links-domain';

export interface L1Options {
  readonly maxEntries: number;
  readonly maxBytes: number;
  /** Positive entries: bounded staleness across instances after an edit elsewhere. */
  readonly ttlMs: number;
  readonly negativeTtlMs: number;
}

type Entry = { link: CachedLink } | { missing: true };

/**
 * What an L1 entry holds on the heap, in bytes, for the REDIRECT_L1_MAX_BYTES bound. Measured by
 * `bench/l1-memory` (docs/benchmarks.md, "L1 entry cost"): the heap an entry takes is 1.6 times its
 * JSON form plus the key and the LRU's own node, for plain links and for links with rules and a card
 * alike. A fixed 120 bytes plus the target undercounted a link with rules four times. Computed once
 * per fill (a Redis or database answer), never on a hit.
 */
export const l1EntryBytes = (key: string, entry: Entry): number =>
  'link' in entry ? L1_ENTRY_OVERHEAD + key.length + Math.ceil(1.6 * JSON.stringify(entry.link).length) : L1_ENTRY_OVERHEAD + key.length;
const L1_ENTRY_OVERHEAD = 48;

/**
 * In-process first level (an in-process cache in front of Redis: docs/design.md, "Redirect read path"). Bounded by
 * entries and by bytes; negative entries live much shorter than positive ones. Keys marked hot
 * are pinned in a separate map so a scan of cold codes cannot push them out.
 *
 * Edits (docs/design.md, "Edits reach every instance"): `invalidate(key, version)` drops the key and
 * remembers the version, so a lookup that read an older value before the change cannot put it back
 * afterwards; `clearPositives()` (the change channel was interrupted) drops every link and starts a
 * new epoch, so no lookup begun before it can store what it read.
 */
export class L1Cache {
  private readonly lru: BoundedLru<string, Entry>;
  /** The entry is kept as it is returned, so a hit on a hot key allocates nothing. */
  private readonly pinned = new Map<string, { entry: { link: CachedLink }; expiresAt: number }>();
  /** Key -> lowest version it may hold again, for as long as a lookup could still be in flight (one TTL). */
  private readonly floors: BoundedLru<string, number>;
  private currentEpoch = 0;

  constructor(private readonly options: L1Options) {
    this.lru = boundedLru<string, Entry>({
      maxEntries: options.maxEntries,
      maxBytes: options.maxBytes,
      sizeOf: (v, k) => l1EntryBytes(k, v),
      ttlMs: options.ttlMs,
    });
    this.floors = boundedLru<string, number>({ maxEntries: options.maxEntries, ttlMs: options.ttlMs });
  }

  /** Read before a lookup leaves the instance; given back when it stores what it found. */
  get epoch(): number {
    return this.currentEpoch;
  }

  get(key: string, now = Date.now()): Entry | undefined {
    const pin = this.pinned.get(key);
    if (pin) {
      if (pin.expiresAt > now) return pin.entry;
      this.pinned.delete(key);
    }
    return this.lru.get(key);
  }

  /** Stores a link unless a change made it stale since the lookup began (`epoch`, the link's version). */
  setPositive(key: string, link: CachedLink, pin: boolean, now = Date.now(), epoch = this.currentEpoch): void {
    if (!this.accepts(key, link, epoch)) return;
    if (pin) this.pinned.set(key, { entry: { link }, expiresAt: now + this.options.ttlMs });
    else this.lru.set(key, { link });
  }

  /** Pins a hot key; an existing pin keeps its expiry, so a hot key is still re-read now and then. */
  pin(key: string, link: CachedLink, now = Date.now(), epoch = this.currentEpoch): void {
    const current = this.pinned.get(key);
    if ((!current || current.expiresAt <= now) && this.accepts(key, link, epoch))
      this.pinned.set(key, { entry: { link }, expiresAt: now + this.options.ttlMs });
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

  /** Drops the key, pinned or not; with `version`, older values of it are refused from now on. */
  invalidate(key: string, version?: number): void {
    this.pinned.delete(key);
    this.lru.delete(key);
    if (version !== undefined) {
      const floor = this.floors.get(key);
      if (floor === undefined || version > floor) this.floors.set(key, version);
    }
  }

  /** Drops every link (negative entries stay: they live seconds) and starts a new epoch. */
  clearPositives(): void {
    this.currentEpoch++;
    this.pinned.clear();
    const links: string[] = [];
    for (const [key, entry] of this.lru.entries()) if ('link' in entry) links.push(key);
    for (const key of links) this.lru.delete(key);
  }

  private accepts(key: string, link: CachedLink, epoch: number): boolean {
    if (epoch !== this.currentEpoch) return false;
    if (this.floors.size === 0) return true;
    const floor = this.floors.get(key);
    return floor === undefined || link.version >= floor;
  }

  get size(): { entries: number; pinned: number; bytes: number } {
    return { entries: this.lru.size, pinned: this.pinned.size, bytes: this.lru.countedBytes };
  }
}
