import { randomUUID } from 'crypto';
import { Clock, DomainError, ErrorCode } from '@shortlink/core';
import { BatchRow, hashRows, reused } from './chunk';
import { BatchChunkRecord, BatchKey, BatchRecordStore } from './ports';

export interface BatchLeaseOptions {
  /** How long a claim on an Idempotency-Key lasts without renewal (renewed every third of it). */
  readonly leaseMs: number;
  /** How long idempotency records are kept. */
  readonly retentionMs: number;
}

/** What every lease of one BatchLeases shares. */
export interface BatchLeaseParts {
  readonly records: BatchRecordStore;
  readonly options: BatchLeaseOptions;
  readonly clock: Clock;
}

/** What one attempt's claim of a batch gave it. */
export interface BatchLeaseClaim {
  readonly batch: BatchKey;
  readonly owner: string;
  readonly held: boolean;
  readonly complete: boolean;
  readonly chunkRows: number;
}

/**
 * One attempt's hold on a batch's Idempotency-Key (docs/design.md, "Batch creation"): renewed
 * while the attempt runs, ended when it is done. A batch that was complete already is held by
 * no lease: it is only replayed.
 */
export class BatchLease {
  /** The renewal failed: another attempt took the batch over. */
  lost = false;

  readonly batch: BatchKey;
  /** False when the batch was complete already (a replay holds nothing). */
  readonly held: boolean;
  /** Every chunk has its answer: nothing may be written, only replayed. */
  readonly complete: boolean;
  /** Rows per chunk of this batch (a resumed batch keeps its own). */
  readonly chunkRows: number;
  private readonly owner: string;
  private readonly records: BatchRecordStore;
  private readonly options: BatchLeaseOptions;
  private readonly clock: Clock;

  constructor(leases: BatchLeaseParts, claim: BatchLeaseClaim) {
    ({ records: this.records, options: this.options, clock: this.clock } = leases);
    ({ batch: this.batch, owner: this.owner, held: this.held, complete: this.complete, chunkRows: this.chunkRows } = claim);
  }

  /** The record of one chunk, if an earlier attempt made it. */
  chunk(seq: number): Promise<BatchChunkRecord | null> {
    return this.records.findChunk(this.batch, seq);
  }

  /** Renews the lease every third of its length until the returned stop is called. */
  keepAlive(): () => void {
    if (!this.held) return () => undefined;
    const renew = () =>
      this.records.renew(this.batch, this.owner, new Date(this.clock.now() + this.options.leaseMs)).then(
        (ok) => (this.lost ||= !ok),
        () => undefined, // the store did not answer: the next renewal tries again
      );
    const timer = setInterval(() => void renew(), Math.max(100, Math.floor(this.options.leaseMs / 3)));
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Marks the batch complete (every answer on record), or lets a retry resume it at once. */
  async end(rows: number, complete: boolean): Promise<void> {
    if (!this.held) return;
    await (complete ? this.records.finish(this.batch, this.owner, rows) : this.records.release(this.batch, this.owner)).catch(() => undefined);
  }
}

/** The idempotency claims of batches, in the meta database's batch records. */
export class BatchLeases implements BatchLeaseParts {
  constructor(
    readonly records: BatchRecordStore,
    readonly options: BatchLeaseOptions,
    readonly clock: Clock,
  ) {}

  /**
   * Claims `key` for this attempt, whose first rows are `firstRows(chunkRows)`: 409 while another
   * attempt holds the key, 422 when the key came with other rows (an answer that cannot stream).
   */
  async claim(tenantId: string, key: string, chunkRows: number, firstRows: (chunkRows: number) => Promise<readonly BatchRow[]>): Promise<BatchLease> {
    const batch: BatchKey = { tenantId, key };
    const owner = randomUUID();
    const now = this.clock.now();
    const { leaseMs, retentionMs } = this.options;
    const leaseUntil = new Date(now + leaseMs);
    const claim = await this.records.claim({ ...batch, owner, now: new Date(now), leaseUntil, expiresAt: new Date(now + retentionMs), chunkRows });
    if (claim.outcome === 'busy') {
      const waitMs = (claim.record.leaseUntil?.getTime() ?? now) - now;
      const why = 'a batch with this Idempotency-Key is still being processed; retry when it is done';
      throw new DomainError(ErrorCode.IDEMPOTENCY_KEY_IN_USE, why, { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });
    }
    const complete = claim.outcome === 'complete';
    const lease = new BatchLease(this, { batch, owner, held: !complete, complete, chunkRows: claim.record.chunkRows });
    const first = await firstRows(lease.chunkRows);
    const stored = first.length ? await lease.chunk(0) : null;
    if (stored && stored.hash !== hashRows(first)) {
      await lease.end(0, false);
      throw reused();
    }
    return lease;
  }
}
