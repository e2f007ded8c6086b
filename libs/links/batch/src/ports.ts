/** A batch as its tenant names it: the `Idempotency-Key` header, per tenant. */
export interface BatchKey {
  readonly tenantId: string;
  readonly key: string;
}

export interface BatchClaim extends BatchKey {
  /** The instance (and run) that processes the batch while its lease lasts. */
  readonly owner: string;
  readonly now: Date;
  readonly leaseUntil: Date;
  /** When the record may be forgotten (the retention of idempotency records). */
  readonly expiresAt: Date;
  /** Rows per chunk for a new record; a resumed one keeps its own. */
  readonly chunkRows: number;
}

export interface BatchRecord {
  readonly chunkRows: number;
  /** Every chunk has its results: a retry only replays them. */
  readonly complete: boolean;
  readonly leaseUntil: Date | null;
}

/**
 * `new`: created for this claim; `resumed`: an earlier attempt left it unfinished and its lease ran
 * out (or was released), now held by this claim; `complete`: nothing left to do but replay;
 * `busy`: another attempt holds the lease.
 */
export type BatchClaimOutcome = { readonly outcome: 'new' | 'resumed' | 'complete' | 'busy'; readonly record: BatchRecord };

/** One chunk of a batch as recorded before any of its rows was written (docs/design.md, "Batch creation"). */
export interface BatchChunkRecord {
  /** 0, 1, … in request order. */
  readonly seq: number;
  /** SHA-256 of the chunk's rows as received: a retry with other rows under the same key is refused. */
  readonly hash: string;
  /** The chunk's reserved ids [firstId, firstId + idCount): row i of the chunk gets firstId + i. */
  readonly firstId: string;
  readonly idCount: number;
  /** Rows the plan's daily quota granted to the chunk (not charged again by a retry). */
  readonly granted: number;
  /** The creation time of the chunk's links. */
  readonly createdAt: Date;
  /** The chunk's answer lines, compressed, once final; null while (or if) its writing was cut short. */
  readonly results: Buffer | null;
}

/**
 * Idempotency records of batches, in the shard-independent meta database: the claim with its lease,
 * each chunk's hash, ids and quota before its rows are written, and its answer once written. Old
 * records expire (24 h by default).
 */
export interface BatchRecordStore {
  claim(claim: BatchClaim): Promise<BatchClaimOutcome>;
  /** Extends the lease while `owner` still holds it; false when it lost it. */
  renew(batch: BatchKey, owner: string, leaseUntil: Date): Promise<boolean>;
  findChunk(batch: BatchKey, seq: number): Promise<BatchChunkRecord | null>;
  /** Records a chunk (results null); an existing record of that chunk is left as it is. */
  addChunk(batch: BatchKey, chunk: Omit<BatchChunkRecord, 'results'>): Promise<void>;
  saveResults(batch: BatchKey, seq: number, results: Buffer): Promise<void>;
  /** Every chunk has results: marks the batch complete and ends the lease. */
  finish(batch: BatchKey, owner: string, rows: number): Promise<void>;
  /** Ends `owner`'s lease without completing (a retry may resume at once). */
  release(batch: BatchKey, owner: string): Promise<void>;
  /** Deletes up to `limit` records that expired before `now`, with their chunks; how many. */
  purgeExpired(now: Date, limit: number): Promise<number>;
}

export const BATCH_RECORD_STORE = Symbol('BATCH_RECORD_STORE');
