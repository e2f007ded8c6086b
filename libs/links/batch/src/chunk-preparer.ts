import { Clock, DomainError, ErrorCode } from '@shortlink/core';
import { CodeStrategy } from '@shortlink/link-codes';
import { LinkService, PreparedLink } from '@shortlink/links-domain';
import { SequenceStore } from '@shortlink/links-domain';
import { BatchAnswers } from './batch-answers';
import { BatchLease } from './batch-lease';
import { asDomainError, BatchOutcome, BatchRow, Candidate, hashRows, linkOf, PreparedChunk, refusedChunk, reused } from './chunk';
import { BatchChunkRecord, BatchRecordStore } from './ports';

/** Ids reserved per chunk beyond one per row, for generated codes that turn out taken (sequence strategy). */
const SPARE_IDS = 16;

export interface ChunkPreparerParts {
  readonly links: LinkService;
  readonly sequences: SequenceStore;
  readonly codes: CodeStrategy;
  readonly records: BatchRecordStore;
  readonly answers: BatchAnswers;
  readonly clock: Clock;
}

/** Takes up to `rows` of the tenant's daily batch rows: how many it got, and the error for the rest. */
export type BatchQuota = (rows: number) => Promise<{ granted: number; refusal: DomainError }>;

const quotaExceeded = () => new DomainError(ErrorCode.QUOTA_EXCEEDED, "the plan's daily batch rows are used up");

/**
 * A chunk before anything of it is written (docs/design.md, "Batch creation"): each row validated
 * like a single create (LinkService.prepare), the valid ones charged to the plan's daily quota, a
 * block of ids reserved, and with an Idempotency-Key the chunk recorded with its hash and ids. A
 * chunk an earlier attempt recorded keeps its quota, ids and creation time; one it answered is
 * replayed.
 */
export class ChunkPreparer {
  constructor(
    private readonly parts: ChunkPreparerParts,
    /** The id sequence links are numbered from (shared with single creation). */
    private readonly sequence: string,
  ) {}

  async prepare(tenantId: string, quota: BatchQuota, lease: BatchLease | null, seq: number, rows: readonly BatchRow[]): Promise<PreparedChunk> {
    const { links, sequences, codes, records, answers, clock } = this.parts;
    let record: BatchChunkRecord | null = null;
    if (lease) {
      record = await lease.chunk(seq);
      if (record && record.hash !== hashRows(rows)) return refusedChunk(seq, rows, reused());
      if (record?.results) {
        const replay = await answers.replay(record.results);
        return { seq, rows, replay, outcomes: [], candidates: [], spareIds: [], recovering: false, keepResults: false };
      }
      if (lease.complete) return refusedChunk(seq, rows, reused()); // more rows than the completed batch had
    }
    const createdAt = record?.createdAt.getTime() ?? clock.now();
    const prepared = await Promise.all(
      rows.map(async (row): Promise<PreparedLink | DomainError> => {
        if (row.error || !row.input) return row.error ?? new DomainError(ErrorCode.VALIDATION_FAILED, 'not a link');
        try {
          return await links.prepare({ ...row.input, tenantId }, createdAt, row.target);
        } catch (error) {
          return asDomainError(error);
        }
      }),
    );
    const valid = prepared.filter((p) => !(p instanceof DomainError)).length;
    let granted = record?.granted ?? valid;
    let refusal: DomainError = quotaExceeded();
    if (!record && valid > 0) ({ granted, refusal } = await quota(valid));
    const idCount = record?.idCount ?? rows.length + (codes.name === 'sequence' ? SPARE_IDS : 0);
    const firstId = record ? BigInt(record.firstId) : (await sequences.allocateBlock(this.sequence, idCount)).start;
    if (lease && !record) {
      await records.addChunk(lease.batch, { seq, hash: hashRows(rows), firstId: firstId.toString(), idCount, granted, createdAt: new Date(createdAt) });
    }
    const outcomes: Array<BatchOutcome | undefined> = new Array(rows.length).fill(undefined);
    const candidates: Candidate[] = [];
    let left = granted;
    prepared.forEach((p, pos) => {
      const index = rows[pos].index;
      if (p instanceof DomainError) outcomes[pos] = { index, error: p };
      else if (left-- <= 0) outcomes[pos] = { index, error: refusal };
      else {
        const id = firstId + BigInt(pos);
        candidates.push({ pos, prepared: p, attempt: 0, link: linkOf(p, id, codes, 0) });
      }
    });
    const spareIds = Array.from({ length: idCount - rows.length }, (_, i) => firstId + BigInt(rows.length + i));
    return { seq, rows, outcomes, candidates, spareIds, recovering: record !== null, keepResults: lease !== null };
  }
}
