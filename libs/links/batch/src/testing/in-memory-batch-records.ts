import { BatchChunkRecord, BatchClaim, BatchClaimOutcome, BatchKey, BatchRecordStore } from '../ports';

interface Entry {
  chunkRows: number;
  owner: string | null;
  leaseUntil: Date | null;
  complete: boolean;
  expiresAt: Date;
  chunks: Map<number, BatchChunkRecord>;
}

/** Batch records in a Map, for the domain's unit tests: the rules of the SQL stores, held by their contract suite (link-store's in-memory-doubles.spec.ts). */
export class InMemoryBatchRecords implements BatchRecordStore {
  readonly entries = new Map<string, Entry>();

  private entry(b: BatchKey): Entry | undefined {
    return this.entries.get(`${b.tenantId}/${b.key}`);
  }

  async claim(c: BatchClaim): Promise<BatchClaimOutcome> {
    let e = this.entry(c);
    if (e && e.expiresAt <= c.now) e = undefined;
    if (!e) {
      this.entries.set(`${c.tenantId}/${c.key}`, {
        chunkRows: c.chunkRows,
        owner: c.owner,
        leaseUntil: c.leaseUntil,
        complete: false,
        expiresAt: c.expiresAt,
        chunks: new Map(),
      });
      return { outcome: 'new', record: { chunkRows: c.chunkRows, complete: false, leaseUntil: c.leaseUntil } };
    }
    if (e.complete) return { outcome: 'complete', record: { chunkRows: e.chunkRows, complete: true, leaseUntil: null } };
    if (e.leaseUntil === null || e.leaseUntil <= c.now || e.owner === c.owner) {
      Object.assign(e, { owner: c.owner, leaseUntil: c.leaseUntil });
      return { outcome: 'resumed', record: { chunkRows: e.chunkRows, complete: false, leaseUntil: c.leaseUntil } };
    }
    return { outcome: 'busy', record: { chunkRows: e.chunkRows, complete: false, leaseUntil: e.leaseUntil } };
  }

  async renew(b: BatchKey, owner: string, leaseUntil: Date) {
    const e = this.entry(b);
    if (!e || e.owner !== owner || e.complete) return false;
    e.leaseUntil = leaseUntil;
    return true;
  }

  async findChunk(b: BatchKey, seq: number) {
    return this.entry(b)?.chunks.get(seq) ?? null;
  }

  async addChunk(b: BatchKey, chunk: Omit<BatchChunkRecord, 'results'>) {
    const chunks = this.entry(b)!.chunks;
    if (!chunks.has(chunk.seq)) chunks.set(chunk.seq, { ...chunk, results: null });
  }

  async saveResults(b: BatchKey, seq: number, results: Buffer) {
    const chunks = this.entry(b)?.chunks;
    const chunk = chunks?.get(seq);
    if (chunks && chunk) chunks.set(seq, { ...chunk, results });
  }

  async finish(b: BatchKey, owner: string) {
    const e = this.entry(b);
    if (e?.owner === owner) Object.assign(e, { complete: true, owner: null, leaseUntil: null });
  }

  async release(b: BatchKey, owner: string) {
    const e = this.entry(b);
    if (e?.owner === owner) Object.assign(e, { owner: null, leaseUntil: null });
  }

  async purgeExpired(now: Date, limit: number) {
    let n = 0;
    for (const [k, e] of this.entries) if (n < limit && e.expiresAt <= now && this.entries.delete(k)) n++;
    return n;
  }
}
