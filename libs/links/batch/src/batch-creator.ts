import { Clock, systemClock } from '@shortlink/core';
import { CodeStrategy } from '@shortlink/link-codes';
import { LinkRepository, LinkService, SequenceStore } from '@shortlink/links-domain';
import { BatchAnswers } from './batch-answers';
import { BatchLeases } from './batch-lease';
import { BatchRequest, BatchRun, RowSource } from './batch-run';
import { ChunkPreparer } from './chunk-preparer';
import { ChunkWriter } from './chunk-writer';
import { BatchRecordStore } from './ports';

export interface BatchOptions {
  /** Rows per chunk: the unit of validation, quota, id reservation, idempotency record and answer. */
  readonly chunkRows: number;
  /** Rows per multi-row INSERT statement at most. */
  readonly insertRows: number;
  /** How long a claim on an Idempotency-Key lasts without renewal (renewed every third of it). */
  readonly leaseMs: number;
  /** How long idempotency records are kept. */
  readonly retentionMs: number;
  /** The id sequence links are numbered from (shared with single creation). */
  readonly sequence: string;
  readonly maxCodeAttempts?: number;
}

export interface BatchCreatorParts {
  readonly links: LinkService;
  readonly repository: LinkRepository;
  readonly sequences: SequenceStore;
  readonly codes: CodeStrategy;
  readonly records: BatchRecordStore;
  readonly clock?: Clock;
}

/**
 * Batch creation (docs/design.md, "Batch creation"): rows are read, validated like single creates
 * and charged to the plan's daily quota one chunk at a time (ChunkPreparer); each chunk gets a
 * block of ids and is written with multi-row inserts of bounded size (ChunkWriter), its answer
 * streamed back (BatchRun). With an Idempotency-Key the attempt holds a lease on the key
 * (BatchLeases), every chunk is recorded with its hash and ids before it is written and with its
 * answer after (BatchAnswers), so a retry, also after a crash, answers the same lines and creates
 * nothing twice.
 */
export class BatchCreator {
  private readonly leases: BatchLeases;
  private readonly preparer: ChunkPreparer;
  private readonly writer: ChunkWriter;
  private readonly answers: BatchAnswers;

  constructor(
    parts: BatchCreatorParts,
    private readonly options: BatchOptions,
  ) {
    const clock = parts.clock ?? systemClock;
    this.answers = new BatchAnswers(parts.records);
    this.leases = new BatchLeases(parts.records, options, clock);
    this.preparer = new ChunkPreparer({ ...parts, answers: this.answers, clock }, options.sequence);
    this.writer = new ChunkWriter({ ...parts, clock }, options.insertRows, options.maxCodeAttempts ?? 8);
  }

  /**
   * Claims the request's Idempotency-Key, if it has one, against its first chunk: an answer that
   * cannot stream (409 while another attempt holds the key, 422 when the key came with other rows)
   * is thrown here. The batch is then answered by the run's `lines()`.
   */
  async start(request: BatchRequest): Promise<BatchRun> {
    const source = new RowSource(request.rows);
    const { chunkRows } = this.options;
    const lease = request.idempotencyKey === null ? null : await this.leases.claim(request.tenantId, request.idempotencyKey, chunkRows, (n) => source.peek(n));
    const { preparer, writer, answers } = this;
    return new BatchRun({ request, source, lease, chunkRows: lease?.chunkRows ?? chunkRows, preparer, writer, answers });
  }
}
