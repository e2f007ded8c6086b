import { DataSource, EntityManager } from 'typeorm';
import { BatchChunkRecord, BatchClaim, BatchClaimOutcome, BatchKey, BatchRecordStore } from '@shortlink/link-batch';
import { isMysqlDuplicate } from '@shortlink/sql';
import { BATCH_CHUNK_COLUMNS, BatchChunkRow, batchChunkFromRow, BatchRequestRow, claimDecision } from './batch-rows';

type Affected = { affectedRows: number };
const KEY = 'tenant_id = ? AND idem_key = ?';

/** Idempotency records of batches in the MySQL meta database (the migrations are the meta store's). */
export class MysqlBatchRecordStore implements BatchRecordStore {
  constructor(private readonly ds: DataSource) {}

  async claim(c: BatchClaim): Promise<BatchClaimOutcome> {
    // Insert first: concurrent first claims of one key then queue on the new row's lock and see it,
    // instead of each taking a gap lock (SELECT … FOR UPDATE of a missing row) and deadlocking on its
    // insert. IGNORE, not ON DUPLICATE KEY: the driver counts found rows, so only IGNORE answers 0 here.
    const inserted: Affected = await this.ds.query(
      'INSERT IGNORE INTO batch_requests (tenant_id, idem_key, chunk_rows, owner, lease_until, complete, created_at, expires_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?)',
      [c.tenantId, c.key, c.chunkRows, c.owner, c.leaseUntil, c.now, c.expiresAt],
    );
    if (inserted.affectedRows === 1) return claimDecision(undefined, c);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.ds.transaction(async (m) => {
          const rows: BatchRequestRow[] = await m.query(
            `SELECT chunk_rows, owner, lease_until, complete, expires_at FROM batch_requests WHERE ${KEY} FOR UPDATE`,
            [c.tenantId, c.key],
          );
          let row: BatchRequestRow | undefined = rows[0];
          if (row && new Date(row.expires_at).getTime() <= c.now.getTime()) {
            await this.forget(m, [{ tenant_id: c.tenantId, idem_key: c.key }]);
            row = undefined;
          }
          const decision = claimDecision(row, c);
          if (decision.outcome === 'new') {
            await m.query(
              'INSERT INTO batch_requests (tenant_id, idem_key, chunk_rows, owner, lease_until, complete, created_at, expires_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?)',
              [c.tenantId, c.key, c.chunkRows, c.owner, c.leaseUntil, c.now, c.expiresAt],
            );
          } else if (decision.outcome === 'resumed') {
            await m.query(`UPDATE batch_requests SET owner = ?, lease_until = ? WHERE ${KEY}`, [c.owner, c.leaseUntil, c.tenantId, c.key]);
          }
          return decision;
        });
      } catch (error) {
        // Two claims replacing one expired record at once: the loser's insert is a duplicate (or InnoDB
        // picks it as a deadlock victim); after a short, jittered pause it finds the winner's record.
        if (!(isMysqlDuplicate(error) || isDeadlock(error)) || attempt >= 8) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * (attempt + 1)));
      }
    }
  }

  async renew(b: BatchKey, owner: string, leaseUntil: Date): Promise<boolean> {
    const result: Affected = await this.ds.query(`UPDATE batch_requests SET lease_until = ? WHERE ${KEY} AND owner = ? AND complete = 0`, [
      leaseUntil,
      b.tenantId,
      b.key,
      owner,
    ]);
    return result.affectedRows === 1;
  }

  async findChunk(b: BatchKey, seq: number): Promise<BatchChunkRecord | null> {
    const rows: BatchChunkRow[] = await this.ds.query(`SELECT ${BATCH_CHUNK_COLUMNS} FROM batch_chunks WHERE ${KEY} AND seq = ?`, [b.tenantId, b.key, seq]);
    return rows.length ? batchChunkFromRow(rows[0]) : null;
  }

  async addChunk(b: BatchKey, chunk: Omit<BatchChunkRecord, 'results'>): Promise<void> {
    await this.ds.query(
      'INSERT IGNORE INTO batch_chunks (tenant_id, idem_key, seq, row_hash, first_id, id_count, granted, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [b.tenantId, b.key, chunk.seq, chunk.hash, chunk.firstId, chunk.idCount, chunk.granted, chunk.createdAt],
    );
  }

  async saveResults(b: BatchKey, seq: number, results: Buffer): Promise<void> {
    await this.ds.query(`UPDATE batch_chunks SET results = ? WHERE ${KEY} AND seq = ?`, [results, b.tenantId, b.key, seq]);
  }

  async finish(b: BatchKey, owner: string, rows: number): Promise<void> {
    await this.ds.query(`UPDATE batch_requests SET complete = 1, total_rows = ?, owner = NULL, lease_until = NULL WHERE ${KEY} AND owner = ?`, [
      rows,
      b.tenantId,
      b.key,
      owner,
    ]);
  }

  async release(b: BatchKey, owner: string): Promise<void> {
    await this.ds.query(`UPDATE batch_requests SET owner = NULL, lease_until = NULL WHERE ${KEY} AND owner = ?`, [b.tenantId, b.key, owner]);
  }

  async purgeExpired(now: Date, limit: number): Promise<number> {
    return this.ds.transaction(async (m) => {
      const expired: Array<{ tenant_id: string; idem_key: string }> = await m.query(
        'SELECT tenant_id, idem_key FROM batch_requests WHERE expires_at <= ? LIMIT ? FOR UPDATE',
        [now, limit],
      );
      await this.forget(m, expired);
      return expired.length;
    });
  }

  private async forget(m: EntityManager, keys: ReadonlyArray<{ tenant_id: string; idem_key: string }>): Promise<void> {
    for (const k of keys) {
      await m.query(`DELETE FROM batch_chunks WHERE ${KEY}`, [k.tenant_id, k.idem_key]);
      await m.query(`DELETE FROM batch_requests WHERE ${KEY}`, [k.tenant_id, k.idem_key]);
    }
  }
}

const isDeadlock = (error: unknown): boolean => {
  const e = error as { errno?: number; driverError?: { errno?: number } };
  return e?.errno === 1213 || e?.driverError?.errno === 1213;
};
