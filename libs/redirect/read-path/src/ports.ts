import { CachedLink } from '@shortlink/links-domain';

/** Bit offsets to set in one bitmap. */
export interface BitmapBits {
  readonly key: string;
  readonly offsets: readonly number[];
}

/**
 * The shared cache of the read path (Redis Cluster, or the in-process twin), its keys those of
 * cache-keys.ts. Every operation touches one key, so each is a single-slot command in a cluster.
 */
export interface CacheStore {
  get(key: string): Promise<string | null>;
  /** ttlMs undefined: no expiry (eviction is left to the LRU policy of the store). */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  del(keys: readonly string[]): Promise<void>;
  /** Remaining time to live in ms; -1 without TTL, -2 when the key does not exist (Redis PTTL). */
  pttl(key: string): Promise<number>;
  /** SET NX PX: true when this call created the key (a lock acquired). */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** Deletes the key only while it still holds `value` (a lock released by its owner only). */
  deleteIfEquals(key: string, value: string): Promise<boolean>;
  /** INCRBY, setting the expiry when the key is new; returns the new total. */
  incrBy(key: string, delta: number, ttlMs: number): Promise<number>;
  /**
   * Sets the value unless the key holds a JSON value whose `version` is at least `version` (one
   * atomic step: a Lua script on Redis); true when written. The null sentinel and values without a
   * version are always replaced.
   */
  setIfNewer(key: string, value: string, version: number, ttlMs?: number): Promise<boolean>;
  /**
   * Adds one to the counter if it is below `limit` (one atomic step); the new count, or null when
   * the limit was reached. A missing key starts from `initial` (e.g. a count kept elsewhere).
   */
  incrementBelow(key: string, limit: number, initial: number): Promise<number | null>;
  /** Sets the given bit offsets of a bitmap to 1 (one BITFIELD command). */
  setBits(key: string, offsets: readonly number[]): Promise<void>;
  /** Reads the given bit offsets of a bitmap; a missing key reads as all zeros. */
  getBits(key: string, offsets: readonly number[]): Promise<number[]>;
  /** Bits set in the bytes `startByte`..`endByte` (inclusive) of a bitmap (Redis BITCOUNT); a missing key counts 0. */
  countBits(key: string, startByte: number, endByte: number): Promise<number>;
  /**
   * `deleteIfEquals(key, '')` of each key (only a null sentinel goes: never a value or a tombstone
   * written meanwhile) and `setBits` of each bitmap, as one call: on Redis Cluster one script per
   * node instead of a command per key (new links' invalidations and Bloom bits, docs/design.md,
   * "Batch creation"). Not atomic; on failure some of it may have been applied.
   */
  dropNullsAndSetBits(keys: readonly string[], bitmaps: readonly BitmapBits[]): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface SnapshotEntry {
  readonly key: string;
  readonly link: CachedLink;
}

/** Where the hot-link snapshot is persisted (a local file per instance: docs/design.md, "Redirect read path"). */
export interface SnapshotStore {
  load(): Promise<SnapshotEntry[]>;
  save(entries: readonly SnapshotEntry[]): Promise<void>;
}

// DI tokens of the read path's ports: the wiring binds them to the adapters of data-access/cache.
/** CacheStore: Redis Cluster, or the in-process twin. */
export const CACHE_STORE = Symbol('CACHE_STORE');
/** SnapshotStore of the hot-link snapshot. */
export const SNAPSHOT_STORE = Symbol('SNAPSHOT_STORE');
