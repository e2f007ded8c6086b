import { CachedLink } from './cached-link';
import { HealthState, Link, LinkStatus, ShortUrlIdentifier } from './link';

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
  /** Only links whose dead-link checks found this (`unchecked`: never checked yet). */
  readonly health?: HealthFilter;
}

/** The list filter by health (docs/design.md, "Trust and safety"). */
export type HealthFilter = HealthState | 'unchecked';

export interface InsertOptions {
  /**
   * The caller can pick another code (a generated one): a shard that is down or a key whose move is
   * frozen fails at once instead of waiting, so that the code is chosen again.
   */
  readonly relocatable?: boolean;
}

/** One multi-row statement of `insertInStatements`: its links, written, or the error that refused them all. */
export type StatementOutcome =
  | { readonly links: readonly Link[]; readonly error: null }
  | {
      readonly links: readonly Link[];
      readonly error: unknown;
      /**
       * A statement that failed on its deadline (or lost its connection) may still be committed by
       * its shard: this resolves once the shard has ended it (true), or once the repository stopped
       * waiting for that (false). Absent: the statement ended with the error (docs/design.md, "Batch creation").
       */
      readonly settled?: Promise<boolean>;
    };

/**
 * Every link, wherever it is stored: the sharding lib's ShardedLinkRepository routes each call to the
 * shard that owns the code (docs/design.md, "Identity, shards and codes"). A shard that fails or does
 * not answer in time surfaces as DomainError SHARD_UNAVAILABLE; a taken (domain, code) as DuplicateLinkError.
 */
export interface LinkRepository {
  insert(link: Link, options?: InsertOptions): Promise<void>;
  /**
   * Inserts `links` in multi-row statements of at most `rowsPerStatement` links of one shard, the
   * shards in parallel (batch creation: docs/design.md, "Batch creation"); each statement all or
   * nothing. A statement a duplicate refused reports DuplicateLinkError.
   */
  insertInStatements(links: readonly Link[], rowsPerStatement: number): Promise<StatementOutcome[]>;
  findByCode(id: ShortUrlIdentifier): Promise<Link | null>;
  /**
   * `findByCode` for a redirect: within the redirect's share of each shard's look-ups, so that one
   * shard that hangs cannot hold every look-up of the instance (docs/design.md, "Failure containment").
   * `onQuery` is called each time a shard is asked; a look-up the share or a breaker refused asked none.
   */
  findForRedirect(id: ShortUrlIdentifier, onQuery?: () => void): Promise<Link | null>;
  /** Writes `link` over the stored one if its version is still `expectedVersion`; false when it changed or is gone. */
  replace(link: Link, expectedVersion: number): Promise<boolean>;
  /** Deletes the link if its version is still `expectedVersion`, keeping its code out of use until `retiredUntil`. */
  remove(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date): Promise<boolean>;
  retiredUntil(id: ShortUrlIdentifier, now: Date): Promise<Date | null>;
  /** Adds to the redirects counted against maxClicks; the new total, or null when the link is gone (docs/design.md, "Max clicks"). */
  addClicks(id: ShortUrlIdentifier, linkId: string, delta: number): Promise<number | null>;
  clickCount(id: ShortUrlIdentifier, linkId: string): Promise<number | null>;
  /** The stored links among `ids`, asked of every shard, not only the owner (batch creation's alias checks). */
  findOnEveryShard(ids: readonly ShortUrlIdentifier[]): Promise<Link[]>;
  /**
   * The link with this id (a decimal id), asked of every shard by its primary key: a link's shard is
   * named by its code, which the caller does not know (a click id names the link by id only,
   * docs/design.md "Conversions"); null when none holds it.
   */
  findById(id: string): Promise<Link | null>;
  /** The retired codes among `ids`, asked of every shard. */
  retiredOnEveryShard(ids: readonly ShortUrlIdentifier[], now: Date): Promise<RetiredCode[]>;
  /** A tenant's links over every shard, newest first: at most `limit + 1` rows (docs/design.md, "Listing"). */
  listByTenant(query: LinkListQuery): Promise<Link[]>;
  /** Codes of `domain` marked crawlable over every shard, in code order, at most `limit` (docs/design.md, "Domain settings"). */
  crawlableCodes(domain: string, limit: number): Promise<string[]>;
  /** The tenant's tags over every shard, in order, each once, at most `limit` (the console's tag picker). */
  tagsOf(tenantId: string, limit: number): Promise<string[]>;
  /** The expiry job: marks due links expired (up to `limitPerShard` per shard) and returns them. */
  expireDue(now: Date, limitPerShard: number): Promise<Link[]>;
  /** Deletes links that expired before `before` (their alias quarantine is over); how many. */
  purgeExpired(before: Date, limitPerShard: number): Promise<number>;
  /** Every stored identifier, a page at a time (Bloom filter rebuilds). */
  identifierPages(pageSize: number): AsyncIterable<ShortUrlIdentifier[]>;
  /**
   * Every stored link, a page at a time per shard (the safety sweep: docs/design.md, "Trust and
   * safety"); a link a move holds on two shards comes once, from the shard that decides for it.
   */
  linkPages(pageSize: number): AsyncIterable<Link[]>;
  /**
   * Writes `link.health` over the stored row's without a new version (the redirect's view of the
   * link does not change: docs/design.md, "Trust and safety"), if the row is still at `expectedVersion`.
   * False when it changed, is gone, or is being moved between shards (the next check writes it).
   */
  recordHealth(link: Link, expectedVersion: number): Promise<boolean>;
}

/**
 * Told of every link stored or removed through LinkService and batch creation, once the shard took
 * the change (docs/design.md, "Trust and safety": the index of targets by host). Never throws and
 * never holds the request: what it misses, the safety sweep finds.
 */
export interface LinkObserver {
  stored(links: readonly Link[]): void;
  removed(link: Link): void;
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

/** A link was edited, disabled or deleted: caches holding an older version must drop it. */
export interface LinkChange {
  readonly domain: string;
  readonly code: string;
  readonly version: number;
}

/**
 * A domain's settings changed (docs/design.md, "Domain settings"): told on the link channel as a
 * change without a code (no link has an empty code), so that it reaches every instance within the
 * bound of link edits. An instance that does not know settings drops nothing for it.
 */
export const domainSettingsChange = (domain: string, version: number): LinkChange => ({ domain, code: '', version });
export const isDomainSettingsChange = (change: LinkChange): boolean => change.code === '' && change.domain !== '';

/**
 * Tenants changed (an operator suspended one, a tenant changed what visitors of its broken links
 * meet: docs/design.md, "Trust and safety"): told on the link channel as a change without domain
 * and code, so that every redirect instance reads its tenant tables again within the bound of link
 * edits instead of at its next refresh. `version` only tells one message from another.
 */
export const tenantsChange = (version: number): LinkChange => ({ domain: '', code: '', version });
export const isTenantsChange = (change: LinkChange): boolean => change.code === '' && change.domain === '';

/** How often a publisher on the change channel says it is alive (LinkChangeFeed.heartbeat). */
export const CHANGE_HEARTBEAT_MS = 1000;

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
  /**
   * Says on the channel that this publisher is alive (every second, by the generation app): a
   * subscriber that stops hearing every publisher, or misses one of a publisher's messages, knows
   * it may have missed changes (docs/design.md, "Edits reach every instance").
   */
  heartbeat(): Promise<void>;
  close(): Promise<void>;
}

/** A link found for a redirect. */
export interface ResolvedLink {
  readonly link: CachedLink;
}

/**
 * Finds the link a redirect asks for (the read path: docs/design.md, "Redirect read path"). Throws
 * DomainError LINK_NOT_FOUND, LINK_DISABLED or LINK_EXPIRED for a link that cannot be followed.
 */
export interface LinkResolver {
  /** From this instance's memory, without a promise; undefined when the slower levels must be asked (`resolve`). */
  resolveLocal(id: ShortUrlIdentifier): ResolvedLink | undefined;
  resolve(id: ShortUrlIdentifier): Promise<ResolvedLink>;
}

/**
 * What the caches of the read path learn when links change (docs/design.md, "Edits reach every
 * instance"). Every method fails when the cache cannot be reached: the outbox relay delivers again.
 */
export interface LinkCacheWriter {
  /** New links: a "no such link" the cache kept for their codes goes (nothing else), and the Bloom filter learns them. */
  created(ids: readonly ShortUrlIdentifier[]): Promise<void>;
  /** The link's new value, unless the cache already holds a newer version; true when written. */
  updated(link: Link): Promise<boolean>;
  /** A deleted link (`version` is its version after the delete): "not found" from now on, and older values cannot come back; true when written. */
  deleted(id: ShortUrlIdentifier, version: number): Promise<boolean>;
  /** True when the cache holds the link (or its tombstone) at `version` or newer. */
  holds(id: ShortUrlIdentifier, version: number): Promise<boolean>;
}

/** Hashes link passwords for storage and checks them at the redirect (argon2id). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(passwordHash: string, password: string): Promise<boolean>;
}

// DI tokens of the links ports: features inject these, the wiring binds them to adapters.
/** LinkRepository: the shards behind the router (the sharding lib's ShardedLinkRepository). */
export const LINK_REPOSITORY = Symbol('LINK_REPOSITORY');
export const SEQUENCE_STORE = Symbol('SEQUENCE_STORE');
/** string: key of the id -> code scrambler (docs/design.md, "Security model"). */
export const CODE_SECRET = Symbol('CODE_SECRET');
export const LINK_CHANGE_FEED = Symbol('LINK_CHANGE_FEED');
/** LinkResolver: the redirect's read path. */
export const LINK_RESOLVER = Symbol('LINK_RESOLVER');
/** LinkCacheWriter: the read path's caches, told of changes. */
export const LINK_CACHE_WRITER = Symbol('LINK_CACHE_WRITER');
export const PASSWORD_HASHER = Symbol('PASSWORD_HASHER');
/** UrlPolicy: the URL safety rules with the block list and (optionally) the DNS check. */
export const URL_POLICY = Symbol('URL_POLICY');
/** TargetReputation (optional): threat feeds and Web Risk, consulted at create and edit (docs/design.md, "Trust and safety"). */
export const TARGET_REPUTATION = Symbol('TARGET_REPUTATION');
/** LinkObserver (optional): the safety context's index of targets by host. */
export const LINK_OBSERVER = Symbol('LINK_OBSERVER');
