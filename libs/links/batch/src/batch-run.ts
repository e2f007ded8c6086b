import { DomainError, ErrorCode } from '@shortlink/core';
import { BatchAnswers } from './batch-answers';
import { BatchLease } from './batch-lease';
import { asDomainError, BatchOutcome, BatchRow, PreparedChunk, refusedChunk } from './chunk';
import { ChunkPreparer } from './chunk-preparer';
import { ChunkWriter } from './chunk-writer';

export interface BatchRequest {
  readonly tenantId: string;
  /** The Idempotency-Key header; null: no record is kept (and a retry creates again). */
  readonly idempotencyKey: string | null;
  readonly rows: AsyncIterable<BatchRow>;
  /** Takes up to `rows` of the tenant's daily batch rows: how many it got, and the error for the rest. */
  readonly quota: (rows: number) => Promise<{ granted: number; refusal: DomainError }>;
  /** One answer line without its newline (the API's wire form), kept as is for a retry. */
  readonly render: (outcome: BatchOutcome) => string;
}

/** The request's rows, taken a chunk at a time, with a look at the first chunk before it is taken. */
export class RowSource {
  private readonly iterator: AsyncIterator<BatchRow>;
  private readonly buffered: BatchRow[] = [];
  private ended = false;

  constructor(rows: AsyncIterable<BatchRow>) {
    this.iterator = rows[Symbol.asyncIterator]();
  }

  async peek(n: number): Promise<BatchRow[]> {
    while (this.buffered.length < n && !this.ended) {
      const next = await this.iterator.next();
      if (next.done) this.ended = true;
      else this.buffered.push(next.value);
    }
    return this.buffered.slice(0, n);
  }

  async take(n: number): Promise<BatchRow[]> {
    await this.peek(n);
    return this.buffered.splice(0, n);
  }
}

/** What one batch is answered with. */
export interface BatchRunParts {
  readonly request: BatchRequest;
  readonly source: RowSource;
  /** The hold on the Idempotency-Key; null without one. */
  readonly lease: BatchLease | null;
  readonly chunkRows: number;
  readonly preparer: ChunkPreparer;
  readonly writer: ChunkWriter;
  readonly answers: BatchAnswers;
}

const lostChunk = (seq: number, rows: readonly BatchRow[]) => {
  const why = 'another attempt took this batch over; retry with the same key to get its answer';
  return refusedChunk(seq, rows, new DomainError(ErrorCode.IDEMPOTENCY_KEY_IN_USE, why, { retryAfterSeconds: 1 }));
};

/**
 * One batch being answered (docs/design.md, "Batch creation"): `lines()` yields the answer a chunk
 * at a time, in request order, while the next chunk is read and prepared. Pulled by the response
 * stream, so a client that reads slowly slows the reading of its request (backpressure both ways)
 * and memory holds two chunks. Chunks are written in request order, so an alias named twice goes
 * to its first row.
 */
export class BatchRun {
  constructor(private readonly parts: BatchRunParts) {}

  async *lines(): AsyncGenerator<string> {
    const { request, source, lease, chunkRows, preparer } = this.parts;
    const stopRenewal = lease?.keepAlive() ?? (() => undefined);
    let rows = 0;
    let complete = true;
    let finished = false;
    try {
      const prepare = (seq: number, chunk: BatchRow[]) =>
        lease?.lost
          ? Promise.resolve(lostChunk(seq, chunk))
          : preparer.prepare(request.tenantId, request.quota, lease, seq, chunk).catch((error) => refusedChunk(seq, chunk, asDomainError(error)));
      let seq = 0;
      let chunk = await source.take(chunkRows);
      let next = chunk.length ? prepare(seq, chunk) : null;
      while (next) {
        const current = await next;
        rows += current.rows.length;
        const answering = this.answer(current);
        chunk = await source.take(chunkRows);
        next = chunk.length ? prepare(++seq, chunk) : null;
        const { text, final } = await answering;
        complete &&= final;
        yield text;
      }
      finished = true;
    } finally {
      stopRenewal();
      await lease?.end(rows, finished && complete && !lease.lost);
    }
  }

  /** A chunk's answer lines (each ending in a newline), and whether they are on record. */
  private async answer(chunk: PreparedChunk): Promise<{ text: string; final: boolean }> {
    if (chunk.replay !== undefined) return { text: markReplayed(chunk.replay), final: true };
    await this.parts.writer.write(chunk);
    const text = chunk.outcomes.map((o) => this.parts.request.render(o!) + '\n').join('');
    return { text, final: await this.parts.answers.keep(this.parts.lease, chunk, text) };
  }
}

/**
 * The lines an earlier attempt answered, each marked `"replayed":true`: nothing was created by this
 * request, and a client says "already imported" rather than "created" (docs/design.md, "Batch creation").
 */
export function markReplayed(text: string): string {
  return text.replace(/^\{/gm, '{"replayed":true,');
}
