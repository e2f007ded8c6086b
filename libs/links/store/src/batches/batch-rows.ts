import { BatchChunkRecord, BatchClaim, BatchClaimOutcome } from '@shortlink/link-batch';
import { toDate } from '@shortlink/sql';

/** A batch record as both SQL backends select it (times: ms on SQLite, DATETIME on MySQL). */
export interface BatchRequestRow {
  chunk_rows: number;
  owner: string | null;
  lease_until: number | Date | string | null;
  complete: number;
  expires_at: number | Date | string;
}

export const BATCH_CHUNK_COLUMNS = 'seq, row_hash, first_id, id_count, granted, created_at, results';

export interface BatchChunkRow {
  seq: number;
  row_hash: string;
  first_id: string | number | bigint;
  id_count: number;
  granted: number;
  created_at: number | bigint | Date | string;
  results: Buffer | null;
}

export const batchChunkFromRow = (r: BatchChunkRow): BatchChunkRecord => ({
  seq: Number(r.seq),
  hash: r.row_hash,
  firstId: String(r.first_id),
  idCount: Number(r.id_count),
  granted: Number(r.granted),
  createdAt: toDate(typeof r.created_at === 'bigint' ? Number(r.created_at) : r.created_at),
  results: r.results === null ? null : Buffer.from(r.results),
});

/**
 * What a claim does with the record it found (an expired one was deleted first): create one, take
 * over an unfinished one whose lease ran out (or was released, or is its own), replay a complete
 * one, or wait for the holder of a running one.
 */
export function claimDecision(row: BatchRequestRow | undefined, c: BatchClaim): BatchClaimOutcome {
  if (!row) return { outcome: 'new', record: { chunkRows: c.chunkRows, complete: false, leaseUntil: c.leaseUntil } };
  const chunkRows = Number(row.chunk_rows);
  if (Number(row.complete) === 1) return { outcome: 'complete', record: { chunkRows, complete: true, leaseUntil: null } };
  const leaseUntil = row.lease_until === null ? null : toDate(row.lease_until);
  if (leaseUntil === null || leaseUntil.getTime() <= c.now.getTime() || row.owner === c.owner)
    return { outcome: 'resumed', record: { chunkRows, complete: false, leaseUntil: c.leaseUntil } };
  return { outcome: 'busy', record: { chunkRows, complete: false, leaseUntil } };
}
