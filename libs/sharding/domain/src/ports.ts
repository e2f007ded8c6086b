import { Link, LinkEventOutbox, LinkListQuery, RetiredCode, ShortUrlIdentifier } from '@shortlink/links-domain';
import { RingSpec, RingVersion } from './ring';

/**
 * Storage of the links of one shard. Implemented once per backend (MySQL, SQLite). Every change of
 * a link (insert, replace, remove, expiry, and their journaled twins) writes its event into the
 * shard's outbox in the same transaction; the copies of a move (upsertRows, upsertLink,
 * removeCopy) write none: the deciding shard's write has its event (docs/design.md, "Edits reach
 * every instance").
 */
export interface LinkShardStore extends LinkEventOutbox {
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
  /** Codes of `domain` marked crawlable, in code order, at most `limit` (the domain's robots.txt). */
  crawlableCodes(domain: string, limit: number): Promise<string[]>;
  /** The tenant's tags on this shard, in order, at most `limit` (from the (tenant, tag) index). */
  tagsOf(tenantId: string, limit: number): Promise<string[]>;
  /**
   * Adds `delta` to the redirects counted for the link (the row with this id, domain and code) and
   * returns the new total, or null when that link is gone (docs/design.md, "Max clicks").
   */
  addClicks(id: ShortUrlIdentifier, linkId: string, delta: number): Promise<number | null>;
  /** The redirects counted for the link so far, or null when that link is gone. */
  clickCount(id: ShortUrlIdentifier, linkId: string): Promise<number | null>;
  /** Codes stored on this shard, in pages, for resharding and Bloom rebuilds. */
  listIdentifiers(afterId: string | null, limit: number): Promise<Array<ShortUrlIdentifier & { id: string }>>;
  /** Links stored on this shard, in pages by id (the safety sweep: docs/design.md, "Trust and safety"). */
  listLinks(afterId: string | null, limit: number): Promise<Link[]>;
  /** Writes the link's health columns, nothing else and no new version, if the row (this id) is still at `expectedVersion`. */
  recordHealth(link: Link, expectedVersion: number): Promise<boolean>;
  /** Marks up to `limit` active links whose expiry is at or before `now` as expired; returns them. */
  expireDue(now: Date, limit: number): Promise<Link[]>;
  /** Deletes up to `limit` links that expired before `before` (their alias quarantine is over). */
  purgeExpired(before: Date, limit: number): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** An app instance that routes links, as it last reported itself to the ring store. */
export interface RingWatcherInfo {
  readonly instanceId: string;
  readonly app: string;
  /** The ring version it routes with (reported only once no operation of an older version runs). */
  readonly version: number;
  /** Age of its last report, by the ring store's clock. */
  readonly ageMs: number;
}

/** The resharding tool's own record of a move: where it is and how far the copy got (resumable). */
export interface MoveRecord {
  readonly id: string;
  readonly progress: MoveProgress;
  /** The tool instance that holds the move, and how long ago it last said so (store clock). */
  readonly owner: string | null;
  readonly ownerAgeMs: number | null;
  readonly finished: boolean;
}

export type MoveStep = 'dual_write' | 'reconcile' | 'copying' | 'verify' | 'frozen' | 'switched' | 'carry' | 'cleanup' | 'done' | 'aborting' | 'aborted';

export interface FlowCheck {
  readonly from: string;
  readonly to: string;
  readonly sourceRows: number;
  readonly sourceChecksum: string;
  readonly targetRows: number;
  readonly targetChecksum: string;
}

/** What the frozen step of a move did (docs/design.md, "Online resharding"). */
export interface FreezeReport {
  /** When the frozen phase was published (epoch ms). */
  frozenAt: number;
  /** From that publication to the one of the new ring (null until published): writes of moving links wait about this long. */
  heldMs: number | null;
  /** Spent comparing (and repairing) the journaled rows while frozen. */
  compareMs: number;
  /** Journal entries of moving links read (links written since verify began, or repaired by it). */
  journaled: number;
  /** Link rows read from both sides while frozen. */
  rowsRead: number;
}

export interface MoveProgress {
  readonly id: string;
  readonly description: string;
  readonly fromVersion: number;
  readonly from: RingSpec;
  readonly to: RingSpec;
  step: MoveStep;
  /** Rows examined and rows that change owner, per "from->to", counted when the move started. */
  plan: { examined: number; moving: number; flows: Record<string, number> };
  /** Last link id copied from each source shard (null: from the start), and of retired codes. */
  copyCursors: Record<string, string | null>;
  retiredCursors: Record<string, string | null>;
  cleanupCursors: Record<string, string | null>;
  /** Last link id whose click count was carried from each source shard (absent in records written before the step existed). */
  carryCursors?: Record<string, string | null>;
  copied: number;
  skipped: number;
  repaired: number;
  cleaned: number;
  /** Moving links whose click count was added to their new owner's. */
  carried?: number;
  /**
   * The final comparison, taken while frozen, of the moving rows written since `verify` began (the
   * move journal; docs/design.md, "Online resharding"), per flow: both sides must be equal.
   */
  verify: FlowCheck[] | null;
  /** How long writes of moving links were held, and what the frozen step read (absent before it ran). */
  freeze?: FreezeReport;
  /** Milliseconds spent in each step. */
  timings: Record<string, number>;
  startedAt: string;
  finishedAt: string | null;
  error: string | null;
}

/**
 * The versioned ring in the meta database (docs/design.md, "Online resharding"): versions, the
 * reports of the app instances that route with them, and the resharding tool's move record.
 */
export interface RingStore {
  /** The newest version, or null when none was written yet. */
  current(): Promise<RingVersion | null>;
  /**
   * Writes `next` if the newest version is `expected` (null: there is none) and `next.version` is
   * one more: compare-and-set, so two writers cannot both succeed. False when another came first.
   */
  publish(next: RingVersion, expected: number | null): Promise<boolean>;
  /** The newest versions first. */
  history(limit: number): Promise<RingVersion[]>;
  /** An instance reports the version it routes with (and that it is alive). */
  heartbeat(instanceId: string, app: string, version: number): Promise<void>;
  /** Every instance that reported within `withinMs`, by the store's clock. */
  watchers(withinMs: number): Promise<RingWatcherInfo[]>;
  /** An instance that stops says goodbye, so that nobody waits for it. */
  forget(instanceId: string): Promise<void>;
  /** The unfinished move, else the newest finished one; null when there was none. */
  latestMove(): Promise<MoveRecord | null>;
  /** Creates or updates the move record (and refreshes the owner's claim). */
  saveMove(progress: MoveProgress, owner: string, finished: boolean): Promise<void>;
  /**
   * Takes the move for `owner` unless another owner refreshed its claim within `staleAfterMs`:
   * one tool at a time drives a move.
   */
  claimMove(id: string, owner: string, staleAfterMs: number): Promise<boolean>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A link row as stored, copied between shards column by column (every column of `links`, plus its
 * tags) so that columns added later move with it. Only identity, version and checksum are read here.
 */
export interface StoredRow {
  readonly id: string;
  readonly domain: string;
  readonly code: string;
  readonly version: number;
  /** Digest of every column and tag, comparable between shards. */
  readonly checksum: string;
  readonly data: unknown;
  /**
   * The redirects counted against maxClicks on this shard (`click_count`): not part of `data` nor of
   * the checksum, since the redirects add to it on whichever shard decides for the link while the
   * move runs; the old owner's count is carried to the new one once, after the switch (carryClicks).
   */
  readonly clicks: number;
}

export interface UpsertOutcome {
  readonly written: number;
  /** Rows the target already had at an equal or newer version, or had deleted during the move. */
  readonly skipped: number;
  /** Rows whose (domain, code) the target holds under another id (left alone, reported). */
  readonly conflicts: number;
}

/**
 * What a shard offers the resharding tool and the dual writes of a move, on top of LinkShardStore.
 * A link deleted on the new owner during a move leaves a tombstone (its id) there, so that a copy
 * read before the delete cannot bring it back.
 */
export interface ShardMoveStore {
  readonly shardName: string;
  /** Full rows with id > afterId, in id order. */
  scanRows(afterId: string | null, limit: number): Promise<StoredRow[]>;
  rowsByIds(ids: readonly string[]): Promise<StoredRow[]>;
  /** Each row unless this shard has the link at an equal or newer version, or a tombstone of its id. One transaction. */
  upsertRows(rows: readonly StoredRow[]): Promise<UpsertOutcome>;
  /** The same for one link (the second write of a move's dual write); true when written. */
  upsertLink(link: Link): Promise<boolean>;
  /** Deletes the copy of a link deleted on its authoritative shard: row, tags, tombstone of `linkId`, retired code. */
  removeCopy(id: ShortUrlIdentifier, linkId: string, retiredUntil: Date): Promise<void>;
  /** Deletes rows (and their tags) by id. */
  deleteRows(ids: readonly string[]): Promise<number>;
  /** Retired codes in (domain, code) order after `after`. */
  scanRetired(after: ShortUrlIdentifier | null, limit: number): Promise<RetiredCode[]>;
  /** Keeps the later end of quarantine of each code. */
  upsertRetired(codes: readonly RetiredCode[]): Promise<void>;
  deleteRetired(ids: readonly ShortUrlIdentifier[]): Promise<void>;
  /**
   * Adds each link's clicks, counted on its old owner, to its row here, at most once per link until
   * clearTombstones (a carry mark written in the same transaction, so that a resumed run adds
   * nothing twice); returns how many links were carried by this call (docs/design.md, "Online resharding").
   */
  carryClicks(carries: ReadonlyArray<{ readonly id: string; readonly clicks: number }>): Promise<number>;
  /** Clears the tombstones, the carry marks and the journal of a finished (or aborted) move. */
  clearTombstones(): Promise<void>;

  // The move journal (docs/design.md, "Online resharding"): the ids of moving links written on
  // this shard, their deciding one, while a move runs, so that the frozen step compares only what
  // changed since `verify` began instead of every moving row.

  /** As insertMany, and in the same transaction each link's id enters the journal. */
  insertJournaled(links: readonly Link[]): Promise<void>;
  /** As replace, and in the same transaction (if replaced) the link's id enters the journal. */
  replaceJournaled(link: Link, expectedVersion: number): Promise<boolean>;
  /** As remove, and in the same transaction (if removed) the link's id enters the journal. */
  removeJournaled(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date): Promise<boolean>;
  /** Enters links in the journal (the rows the tool itself repaired). */
  journal(entries: readonly JournalEntry[]): Promise<void>;
  /** Journal entries with link id > afterId, in id order. */
  journalPage(afterId: string | null, limit: number): Promise<JournalEntry[]>;
  /**
   * Empties the journal. An entry is deleted only once the write it came with has committed (a
   * statement cannot delete a row another transaction has not committed), so every write that
   * commits after this call returns leaves its entry.
   */
  clearJournal(): Promise<void>;
}

/** A link written on its deciding shard while a move runs. */
export interface JournalEntry {
  readonly id: string;
  readonly domain: string;
  readonly code: string;
}

export type MovableShardStore = LinkShardStore & ShardMoveStore;

export const isMovable = (store: LinkShardStore): store is MovableShardStore => typeof (store as Partial<ShardMoveStore>).scanRows === 'function';
