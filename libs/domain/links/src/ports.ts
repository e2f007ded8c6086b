import { Link, LinkStatus, ShortUrlIdentifier } from './link';

/** Where a listing goes on from: the last link shown. */
export interface ListPosition {
  readonly createdAt: Date;
  readonly id: string;
}

/** A page of a tenant's links, newest first: by creation time, then by id (docs/design.md, "Listing"). */
export interface LinkListQuery {
  readonly tenantId: string;
  /** Only links after this one in that order (older, or as old with a lower id); null: from the newest. */
  readonly after: ListPosition | null;
  /** Rows returned at most (a caller asking for a page of n asks each shard for n + 1). */
  readonly limit: number;
  readonly status?: LinkStatus;
  readonly domain?: string;
  readonly tag?: string;
  /** Substring of the code, title or target (case-insensitive for title and target). */
  readonly search?: string;
}

/** Storage of the links of one shard. Implemented once per backend (MySQL, SQLite). */
export interface LinkShardStore {
  readonly shardName: string;
  /** Inserts; rejects with DuplicateLinkError when (domain, code) exists. */
  insert(link: Link): Promise<void>;
  /** All or nothing: one duplicate rejects the batch (DuplicateLinkError). */
  insertMany(links: readonly Link[]): Promise<void>;
  findByCode(id: ShortUrlIdentifier): Promise<Link | null>;
  /**
   * Writes `link` (same domain and code) over the stored row if the stored version is still
   * `expectedVersion`; false when it changed meanwhile or the link is gone.
   */
  replace(link: Link, expectedVersion: number): Promise<boolean>;
  /**
   * Deletes the link if its version is still `expectedVersion`, and keeps its code out of use
   * until `retiredUntil` (one transaction); false when it changed meanwhile or is gone.
   */
  remove(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date): Promise<boolean>;
  /** Until when a deleted code stays out of use, or null when it is free. */
  retiredUntil(id: ShortUrlIdentifier, now: Date): Promise<Date | null>;
  /** The stored links among these identifiers (batch creation's look-ups: one statement per domain). */
  findMany(ids: readonly ShortUrlIdentifier[]): Promise<Link[]>;
  /** Which of these identifiers are retired as of `now`, and until when. */
  retiredAmong(ids: readonly ShortUrlIdentifier[], now: Date): Promise<RetiredCode[]>;
  /** A tenant's links newest first, from the (tenant, created_at, id) index: at most `limit` rows. */
  listByTenant(query: LinkListQuery): Promise<Link[]>;
  /**
   * Adds `delta` to the redirects counted for the link (the row with this id, domain and code) and
   * returns the new total, or null when that link is gone (docs/design.md, "Max clicks").
   */
  addClicks(id: ShortUrlIdentifier, linkId: string, delta: number): Promise<number | null>;
  /** The redirects counted for the link so far, or null when that link is gone. */
  clickCount(id: ShortUrlIdentifier, linkId: string): Promise<number | null>;
  /** Codes stored on this shard, in pages, for resharding and Bloom rebuilds. */
  listIdentifiers(afterId: string | null, limit: number): Promise<Array<ShortUrlIdentifier & { id: string }>>;
  /** Marks up to `limit` active links whose expiry is at or before `now` as expired; returns them. */
  expireDue(now: Date, limit: number): Promise<Link[]>;
  /** Deletes up to `limit` links that expired before `before` (their alias quarantine is over). */
  purgeExpired(before: Date, limit: number): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A deleted code kept out of use until `retiredUntil`. */
export interface RetiredCode extends ShortUrlIdentifier {
  readonly retiredUntil: Date;
}

/** Raised by a LinkShardStore when the unique (domain, code) constraint rejects an insert. */
export class DuplicateLinkError extends Error {
  constructor(readonly identifier: ShortUrlIdentifier) {
    super(`link ${identifier.domain}/${identifier.code} already exists`);
    this.name = 'DuplicateLinkError';
  }
}

/** A block of ids [start, end) reserved atomically for one allocator instance. */
export interface IdBlock {
  readonly start: bigint;
  readonly end: bigint;
}

/** Shard-independent sequences, allocated in blocks (1000 ids per round trip: docs/design.md, "Identity, shards and codes"). */
export interface SequenceStore {
  allocateBlock(sequence: string, size: number): Promise<IdBlock>;
}

/**
 * Key-value store of the redirect path (Redis Cluster, or the in-process twin). Every operation
 * touches one key, so each is a single-slot command in a cluster.
 */
/** Bit offsets to set in one bitmap. */
export interface BitmapBits {
  readonly key: string;
  readonly offsets: readonly number[];
}

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
  /**
   * Adds up to `wanted` to a counter without passing `limit`, in one atomic step (a Lua script on
   * Redis), and returns how many were added and the count after. A count below `floor` is raised to
   * it first (a total known to be reached: docs/design.md, "Max clicks"). A missing key starts at
   * `seed` (a count kept elsewhere, read just now), or, with `seed` null, is left alone and answers
   * null: the caller reads the seed and asks again.
   */
  reserveBelow(key: string, limit: number, wanted: number, floor: number, seed: number | null): Promise<{ granted: number; count: number } | null>;
  /** Sets the given bit offsets of a bitmap to 1 (one BITFIELD command). */
  setBits(key: string, offsets: readonly number[]): Promise<void>;
  /** Reads the given bit offsets of a bitmap; a missing key reads as all zeros. */
  getBits(key: string, offsets: readonly number[]): Promise<number[]>;
  /**
   * `del(keys)` and `setBits` of each bitmap, as one call: on Redis Cluster one script per node
   * instead of a command per key (batch creation's invalidations and Bloom bits of a chunk,
   * docs/design.md, "Batch creation"). Not atomic; on failure some of it may have been applied.
   */
  deleteAndSetBits(keys: readonly string[], bitmaps: readonly BitmapBits[]): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A link was edited, disabled or deleted: caches holding an older version must drop it. */
export interface LinkChange {
  readonly domain: string;
  readonly code: string;
  readonly version: number;
}

/**
 * The channel that tells every redirect instance about link changes (docs/design.md, "Edits reach
 * every instance"): Redis pub/sub on the server profile, in-process on the embedded one.
 */
export interface LinkChangeFeed {
  /** Resolves once the channel accepted the message (the edit's API response waits for it). */
  publish(change: LinkChange): Promise<void>;
  /**
   * Calls `onChange` for every change published from now on, and `onGap` whenever the channel was
   * interrupted and changes may have been missed. Resolves with the unsubscribe function.
   */
  subscribe(onChange: (change: LinkChange) => void, onGap: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** Hashes link passwords for storage and checks them at the redirect (argon2id). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(passwordHash: string, password: string): Promise<boolean>;
}

// DI tokens of the links ports: features inject these, the wiring binds them to adapters.
/** ShardedLinkRepository: the shards behind the router. */
export const LINK_REPOSITORY = Symbol('LINK_REPOSITORY');
export const SEQUENCE_STORE = Symbol('SEQUENCE_STORE');
export const CACHE_STORE = Symbol('CACHE_STORE');
/** SnapshotStore of the hot-link snapshot (redirect/snapshot.ts). */
export const SNAPSHOT_STORE = Symbol('SNAPSHOT_STORE');
/** string: key of the id -> code scrambler (docs/design.md, "Security model"). */
export const CODE_SECRET = Symbol('CODE_SECRET');
export const LINK_CHANGE_FEED = Symbol('LINK_CHANGE_FEED');
export const PASSWORD_HASHER = Symbol('PASSWORD_HASHER');
/** UrlPolicy: the URL safety rules with the block list and (optionally) the DNS check. */
export const URL_POLICY = Symbol('URL_POLICY');
