import { Link, ShortUrlIdentifier } from './link';
import { Tenant } from './tenant';

/** Storage of the links of one shard. Implemented once per backend (MySQL, SQLite). */
export interface LinkShardStore {
  readonly shardName: string;
  /** Inserts; rejects with DuplicateLinkError when (domain, code) exists. */
  insert(link: Link): Promise<void>;
  insertMany(links: readonly Link[]): Promise<void>;
  findByCode(id: ShortUrlIdentifier): Promise<Link | null>;
  /** Codes stored on this shard, in pages, for resharding and Bloom rebuilds. */
  listIdentifiers(afterId: string | null, limit: number): Promise<Array<ShortUrlIdentifier & { id: string }>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Raised by a LinkShardStore when the unique (domain, code) constraint rejects an insert. */
export class DuplicateLinkError extends Error {
  constructor(readonly identifier: ShortUrlIdentifier) {
    super(`link ${identifier.domain}/${identifier.code} already exists`);
    this.name = 'DuplicateLinkError';
  }
}

/** Shard-independent store of tenants and their hashed API keys. */
export interface TenantStore {
  findByApiKeyHash(apiKeyHash: string): Promise<Tenant | null>;
  /** Creates the tenant and its first key; a no-op returning false if that key hash exists. */
  createWithApiKey(tenant: Tenant, apiKeyHash: string): Promise<boolean>;
  countTenants(): Promise<number>;
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
  /** Sets the given bit offsets of a bitmap to 1 (one BITFIELD command). */
  setBits(key: string, offsets: readonly number[]): Promise<void>;
  /** Reads the given bit offsets of a bitmap; a missing key reads as all zeros. */
  getBits(key: string, offsets: readonly number[]): Promise<number[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

// DI tokens of the links ports: features inject these, the wiring binds them to adapters.
/** ShardedLinkRepository: the shards behind the router. */
export const LINK_REPOSITORY = Symbol('LINK_REPOSITORY');
export const TENANT_STORE = Symbol('TENANT_STORE');
export const SEQUENCE_STORE = Symbol('SEQUENCE_STORE');
export const CACHE_STORE = Symbol('CACHE_STORE');
/** SnapshotStore of the hot-link snapshot (redirect/snapshot.ts). */
export const SNAPSHOT_STORE = Symbol('SNAPSHOT_STORE');
/** string: key of the id -> code scrambler (docs/design.md, "Security model"). */
export const CODE_SECRET = Symbol('CODE_SECRET');
