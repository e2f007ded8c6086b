import { BatchChunkRecord, BatchClaim, BatchClaimOutcome, BatchKey, BatchRecordStore } from '@shortlink/link-batch';
import { SqliteDb } from '@shortlink/sql';
import { BATCH_CHUNK_COLUMNS, BatchChunkRow, batchChunkFromRow, BatchRequestRow, claimDecision } from './batch-rows';

const KEY = 'tenant_id = ? AND idem_key = ?';

/** Idempotency records of batches in the embedded meta database (the migrations are the meta store's). */
export class SqliteBatchRecordStore implements BatchRecordStore {
  constructor(private readonly db: SqliteDb) {}

  async claim(c: BatchClaim): Promise<BatchClaimOutcome> {
    return this.db
      .transaction((): BatchClaimOutcome => {
        let row = this.db.prepare(`SELECT chunk_rows, owner, lease_until, complete, expires_at FROM batch_requests WHERE ${KEY}`).get(c.tenantId, c.key) as
          BatchRequestRow | undefined;
        if (row && Number(row.expires_at) <= c.now.getTime()) {
          this.forget([{ tenant_id: c.tenantId, idem_key: c.key }]);
          row = undefined;
        }
        const decision = claimDecision(row, c);
        if (decision.outcome === 'new') {
          this.db
            .prepare(
              'INSERT INTO batch_requests (tenant_id, idem_key, chunk_rows, owner, lease_until, complete, created_at, expires_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?)',
            )
            .run(c.tenantId, c.key, c.chunkRows, c.owner, c.leaseUntil.getTime(), c.now.getTime(), c.expiresAt.getTime());
        } else if (decision.outcome === 'resumed') {
          this.db.prepare(`UPDATE batch_requests SET owner = ?, lease_until = ? WHERE ${KEY}`).run(c.owner, c.leaseUntil.getTime(), c.tenantId, c.key);
        }
        return decision;
      })
      .immediate();
  }

  async renew(b: BatchKey, owner: string, leaseUntil: Date): Promise<boolean> {
    return (
      this.db
        .prepare(`UPDATE batch_requests SET lease_until = ? WHERE ${KEY} AND owner = ? AND complete = 0`)
        .run(leaseUntil.getTime(), b.tenantId, b.key, owner).changes === 1
    );
  }

  async findChunk(b: BatchKey, seq: number): Promise<BatchChunkRecord | null> {
    // Safe integers: first_id may pass 2^53.
    const row = this.db.prepare(`SELECT ${BATCH_CHUNK_COLUMNS} FROM batch_chunks WHERE ${KEY} AND seq = ?`).safeIntegers(true).get(b.tenantId, b.key, seq) as
      BatchChunkRow | undefined;
    return row ? batchChunkFromRow(row) : null;
  }

  async addChunk(b: BatchKey, chunk: Omit<BatchChunkRecord, 'results'>): Promise<void> {
    this.db
      .prepare(
        'INSERT OR IGNORE INTO batch_chunks (tenant_id, idem_key, seq, row_hash, first_id, id_count, granted, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(b.tenantId, b.key, chunk.seq, chunk.hash, BigInt(chunk.firstId), chunk.idCount, chunk.granted, chunk.createdAt.getTime());
  }

  async saveResults(b: BatchKey, seq: number, results: Buffer): Promise<void> {
    this.db.prepare(`UPDATE batch_chunks SET results = ? WHERE ${KEY} AND seq = ?`).run(results, b.tenantId, b.key, seq);
  }

  async finish(b: BatchKey, owner: string, rows: number): Promise<void> {
    this.db
      .prepare(`UPDATE batch_requests SET complete = 1, total_rows = ?, owner = NULL, lease_until = NULL WHERE ${KEY} AND owner = ?`)
      .run(rows, b.tenantId, b.key, owner);
  }

  async release(b: BatchKey, owner: string): Promise<void> {
    this.db.prepare(`UPDATE batch_requests SET owner = NULL, lease_until = NULL WHERE ${KEY} AND owner = ?`).run(b.tenantId, b.key, owner);
  }

  async purgeExpired(now: Date, limit: number): Promise<number> {
    return this.db
      .transaction(() => {
        const expired = this.db.prepare('SELECT tenant_id, idem_key FROM batch_requests WHERE expires_at <= ? LIMIT ?').all(now.getTime(), limit) as Array<{
          tenant_id: string;
          idem_key: string;
        }>;
        this.forget(expired);
        return expired.length;
      })
      .immediate();
  }

  private forget(keys: ReadonlyArray<{ tenant_id: string; idem_key: string }>): void {
    for (const k of keys) {
      this.db.prepare(`DELETE FROM batch_chunks WHERE ${KEY}`).run(k.tenant_id, k.idem_key);
      this.db.prepare(`DELETE FROM batch_requests WHERE ${KEY}`).run(k.tenant_id, k.idem_key);
    }
  }
}
