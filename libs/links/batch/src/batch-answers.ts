import { promisify } from 'util';
import { deflateRaw, inflateRaw } from 'zlib';
import { ErrorCode } from '@shortlink/core';
import { BatchLease } from './batch-lease';
import { PreparedChunk } from './chunk';
import { BatchRecordStore } from './ports';

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

/** Failures a retry may not meet again: a chunk with one of them keeps no answer, so that its retry writes what is missing. */
const TRANSIENT: ReadonlySet<string> = new Set([ErrorCode.SHARD_UNAVAILABLE, ErrorCode.DEPENDENCY_UNAVAILABLE, ErrorCode.IDEMPOTENCY_KEY_IN_USE]);

/**
 * The answer lines of each chunk, kept compressed in the chunk's record so that a retry under the
 * same Idempotency-Key answers the same lines (docs/design.md, "Batch creation").
 */
export class BatchAnswers {
  constructor(private readonly records: BatchRecordStore) {}

  /** The lines an earlier attempt kept (each ending in a newline). */
  async replay(results: Buffer): Promise<string> {
    return (await inflate(results)).toString('utf8');
  }

  /** Keeps a written chunk's lines; true when they are on record (the chunk is final). */
  async keep(lease: BatchLease | null, chunk: PreparedChunk, text: string): Promise<boolean> {
    if (!lease || !chunk.keepResults || chunk.outcomes.some((o) => o !== undefined && 'error' in o && TRANSIENT.has(o.error.code))) return false;
    const results = await deflate(Buffer.from(text, 'utf8'), { level: 1 });
    return this.records.saveResults(lease.batch, chunk.seq, results).then(
      () => true,
      () => false,
    );
  }
}
