import { createHash, randomUUID } from 'crypto';
import { promisify } from 'util';
import { deflateRaw, inflateRaw } from 'zlib';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { CodeStrategy } from '../codes';
import { identifierOf, Link, ShortUrlIdentifier } from '../link';
import { LinkCache } from '../link-cache';
import { LinkCreation, LinkService, PreparedLink } from '../link-service';
import { DuplicateLinkError, SequenceStore } from '../ports';
import { ShardedLinkRepository } from '../sharded-link-repository';
import { BatchChunkRecord, BatchKey, BatchRecordStore, CreatedLinkMarks } from './ports';

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

/** One row of a batch request as the API layer read it. */
export interface BatchRow {
  /** Position in the request, from 0. */
  readonly index: number;
  /** The row's JSON as received (hashed for the idempotency check). */
  readonly text: string;
  /** The create, when the row had the shape of one; else `error`. */
  readonly input?: Omit<LinkCreation, 'tenantId'>;
  /** Refused before the domain (not JSON, not the shape of a create, past the row limit). */
  readonly error?: DomainError;
}

export type BatchOutcome = { readonly index: number; readonly link: Link } | { readonly index: number; readonly error: DomainError };

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

/** Ids reserved per chunk beyond one per row, for generated codes that turn out taken (sequence strategy). */
const SPARE_IDS = 16;
const TRANSIENT: ReadonlySet<string> = new Set([ErrorCode.SHARD_UNAVAILABLE, ErrorCode.DEPENDENCY_UNAVAILABLE, ErrorCode.IDEMPOTENCY_KEY_IN_USE]);

/** SHA-256 over the rows' texts in order: a chunk's identity for the idempotency check. */
export function hashRows(rows: readonly BatchRow[]): string {
  const hash = createHash('sha256');
  for (const row of rows) hash.update(row.text).update('\n');
  return hash.digest('hex');
}

/** A row on its way to a shard. */
interface Candidate {
  readonly pos: number;
  readonly prepared: PreparedLink;
  link: Link;
  attempt: number;
}

/** A chunk after validation, quota and (with a key) its record: ready to be written, or replayed. */
interface PreparedChunk {
  readonly seq: number;
  readonly rows: readonly BatchRow[];
  /** Stored answer lines of an earlier attempt. */
  readonly replay?: string;
  readonly outcomes: Array<BatchOutcome | undefined>;
  readonly candidates: Candidate[];
  /** An earlier attempt may have written some rows: look before inserting. */
  readonly recovering: boolean;
  readonly keepResults: boolean;
  readonly spareIds: bigint[];
}

/**
 * Batch creation (docs/design.md, "Batch creation"): rows are read, validated like single creates
 * (LinkService.prepare) and charged to the plan's daily quota one chunk at a time; each chunk gets
 * a block of ids, is grouped by shard and written with multi-row inserts of bounded size. Chunks
 * are written in request order (the next chunk is validated meanwhile), so an alias named twice
 * goes to its first row. With an Idempotency-Key every chunk is recorded with its hash and ids
 * before it is written and with its answer after, so a retry, also after a crash, answers the same
 * lines and creates nothing twice.
 */
export class BatchCreator {
  private readonly maxAttempts: number;

  constructor(
    private readonly links: LinkService,
    private readonly repository: ShardedLinkRepository,
    private readonly sequences: SequenceStore,
    private readonly codes: CodeStrategy,
    private readonly cache: LinkCache,
    private readonly records: BatchRecordStore,
    /** The Bloom filter, told of the links each chunk created. */
    private readonly bloom: CreatedLinkMarks,
    private readonly options: BatchOptions,
    private readonly clock: Clock = systemClock,
  ) {
    this.maxAttempts = options.maxCodeAttempts ?? 8;
  }

  /**
   * Reads the first chunk and, with a key, claims it: an answer that cannot stream (409 while
   * another attempt holds the key, 422 when the key came with other rows) is thrown here.
   */
  async start(request: BatchRequest): Promise<BatchRun> {
    const source = new RowSource(request.rows);
    let chunkRows = this.options.chunkRows;
    if (request.idempotencyKey === null) return new BatchRun(this, request, source, null, chunkRows, false);
    const batch: BatchKey = { tenantId: request.tenantId, key: request.idempotencyKey };
    const owner = randomUUID();
    const now = this.clock.now();
    const claim = await this.records.claim({ ...batch, owner, now: new Date(now), leaseUntil: new Date(now + this.options.leaseMs), expiresAt: new Date(now + this.options.retentionMs), chunkRows });
    if (claim.outcome === 'busy') {
      const waitMs = (claim.record.leaseUntil?.getTime() ?? now) - now;
      throw new DomainError(ErrorCode.IDEMPOTENCY_KEY_IN_USE, 'a batch with this Idempotency-Key is still being processed; retry when it is done', { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });
    }
    chunkRows = claim.record.chunkRows;
    const held = claim.outcome !== 'complete';
    const first = await source.peek(chunkRows);
    const stored = first.length ? await this.records.findChunk(batch, 0) : null;
    if (stored && stored.hash !== hashRows(first)) {
      if (held) await this.records.release(batch, owner);
      throw reused();
    }
    return new BatchRun(this, request, source, { batch, owner, held }, chunkRows, claim.outcome === 'complete');
  }

  /** Validation, quota, ids and (with a key) the chunk's record; or its stored answer. */
  async prepare(request: BatchRequest, claim: Claim | null, seq: number, rows: readonly BatchRow[], replayOnly: boolean): Promise<PreparedChunk> {
    const outcomes: Array<BatchOutcome | undefined> = new Array(rows.length).fill(undefined);
    const base = { seq, rows, outcomes, candidates: [] as Candidate[], spareIds: [] as bigint[] };
    let record: BatchChunkRecord | null = null;
    if (claim) {
      record = await this.records.findChunk(claim.batch, seq);
      if (record && record.hash !== hashRows(rows)) return this.refused(base, reused());
      if (record?.results) return { ...base, replay: (await inflate(record.results)).toString('utf8'), recovering: false, keepResults: false };
      if (replayOnly) return this.refused(base, reused()); // more rows than the completed batch had
    }
    const createdAt = record?.createdAt.getTime() ?? this.clock.now();
    const prepared = await Promise.all(
      rows.map(async (row): Promise<PreparedLink | DomainError> => {
        if (row.error || !row.input) return row.error ?? new DomainError(ErrorCode.VALIDATION_FAILED, 'not a link');
        try {
          return await this.links.prepare({ ...row.input, tenantId: request.tenantId }, createdAt);
        } catch (error) {
          return asDomainError(error);
        }
      }),
    );
    const valid = prepared.filter((p) => !(p instanceof DomainError)).length;
    let granted = record?.granted ?? valid;
    let refusal: DomainError = quotaExceeded();
    if (!record && valid > 0) ({ granted, refusal } = await request.quota(valid));
    const idCount = record?.idCount ?? rows.length + (this.codes.name === 'sequence' ? SPARE_IDS : 0);
    const firstId = record ? BigInt(record.firstId) : (await this.sequences.allocateBlock(this.options.sequence, idCount)).start;
    if (claim && !record) {
      await this.records.addChunk(claim.batch, { seq, hash: hashRows(rows), firstId: firstId.toString(), idCount, granted, createdAt: new Date(createdAt) });
    }
    const candidates: Candidate[] = [];
    let left = granted;
    prepared.forEach((p, pos) => {
      const index = rows[pos].index;
      if (p instanceof DomainError) outcomes[pos] = { index, error: p };
      else if (left-- <= 0) outcomes[pos] = { index, error: refusal };
      else {
        const id = firstId + BigInt(pos);
        candidates.push({ pos, prepared: p, attempt: 0, link: this.linkOf(p, id, 0) });
      }
    });
    const spareIds = Array.from({ length: idCount - rows.length }, (_, i) => firstId + BigInt(rows.length + i));
    return { ...base, candidates, spareIds, recovering: record !== null, keepResults: claim !== null };
  }

  /** Writes a prepared chunk: its answer lines (each ending in a newline), and whether they are on record. */
  async write(request: BatchRequest, claim: Claim | null, chunk: PreparedChunk): Promise<{ text: string; final: boolean }> {
    if (chunk.replay !== undefined) return { text: chunk.replay, final: true };
    const { outcomes, rows } = chunk;
    const created: Link[] = [];
    const done = (c: Candidate, link: Link) => {
      outcomes[c.pos] = { index: rows[c.pos].index, link };
      created.push(link);
    };
    const fail = (c: Candidate, error: DomainError) => (outcomes[c.pos] = { index: rows[c.pos].index, error });
    try {
      const { toInsert, retry } = await this.resolve(chunk, done, fail);
      retry.push(...(await this.insertGrouped(toInsert, done, fail)));
      retry.sort((a, b) => a.pos - b.pos);
      for (const c of retry) await this.insertOneByOne(chunk, c, done, fail);
    } catch (error) {
      for (const c of chunk.candidates) if (!outcomes[c.pos]) fail(c, asDomainError(error));
    }
    if (created.length) {
      // As after a single create: a scan may have cached "no such code" for these codes, and the
      // Bloom filter learns them; both in one call per cache node (docs/design.md, "Batch creation").
      await this.cache.invalidateManyAndSetBits(created.map(identifierOf), this.bloom.bitsOf(created)).catch(() => this.bloom.retryLater(created));
    }
    const text = outcomes.map((o) => request.render(o!) + '\n').join('');
    // A chunk with a transient failure keeps no answer: its retry writes what is missing.
    if (!claim || !chunk.keepResults || outcomes.some((o) => 'error' in o! && TRANSIENT.has(o.error.code))) return { text, final: false };
    const results = await deflate(Buffer.from(text, 'utf8'), { level: 1 });
    const saved = await this.records.saveResults(claim.batch, chunk.seq, results).then(
      () => true,
      () => false,
    );
    return { text, final: saved };
  }

  /**
   * Aliases against every shard (taken, retired, or named twice in the batch); generated codes made
   * unique within the chunk. A recovering chunk also looks its generated codes up: a row an earlier
   * attempt wrote is recognised by its id.
   */
  private async resolve(chunk: PreparedChunk, done: (c: Candidate, l: Link) => void, fail: (c: Candidate, e: DomainError) => void) {
    const used = new Set<string>();
    const keyOf = (id: ShortUrlIdentifier) => `${id.domain}/${id.code}`;
    const aliased = chunk.candidates.filter((c) => c.prepared.alias !== null);
    const lookups = chunk.recovering ? chunk.candidates : aliased;
    const [existing, retired] = await Promise.all([
      this.repository.findOnEveryShard(lookups.map((c) => identifierOf(c.link))),
      this.repository.retiredOnEveryShard(aliased.map((c) => identifierOf(c.link)), new Date(this.clock.now())),
    ]);
    const found = new Map(existing.map((l) => [keyOf(l), l]));
    const retiredUntil = new Map(retired.map((r) => [keyOf(r), r.retiredUntil]));
    const toInsert: Candidate[] = [];
    const retry: Candidate[] = [];
    for (const c of chunk.candidates) {
      if (c.prepared.alias === null) continue;
      const key = keyOf(c.link);
      const holder = found.get(key);
      if (holder?.id === c.link.id) done(c, holder);
      else if (used.has(key) || holder) fail(c, this.links.aliasConflict(c.link.tenantId, identifierOf(c.link), holder ?? null));
      else if (retiredUntil.has(key)) fail(c, this.links.aliasRetired(c.link.tenantId, identifierOf(c.link), retiredUntil.get(key)!));
      else toInsert.push(c);
      used.add(key);
    }
    // Codes of the sequence strategy are a bijection of distinct ids: they can only meet an alias of
    // this chunk or a stored link (the common case, no aliases, needs no bookkeeping at all).
    if (!chunk.recovering && aliased.length === 0 && this.codes.name === 'sequence') {
      toInsert.push(...chunk.candidates);
      return { toInsert, retry };
    }
    for (const c of chunk.candidates) {
      if (c.prepared.alias !== null) continue;
      while (used.has(keyOf(c.link)) && c.attempt < this.maxAttempts) this.nextAttempt(chunk, c);
      const holder = found.get(keyOf(c.link));
      if (holder?.id === c.link.id) done(c, holder);
      else if (holder) retry.push(c); // taken by another link: the next attempt, one by one
      else toInsert.push(c);
      used.add(keyOf(c.link));
    }
    return { toInsert, retry };
  }

  /** Multi-row inserts per shard (shards in parallel, statements of at most `insertRows`); the candidates of a statement a duplicate refused. */
  private async insertGrouped(candidates: readonly Candidate[], done: (c: Candidate, l: Link) => void, fail: (c: Candidate, e: DomainError) => void): Promise<Candidate[]> {
    const byShard = new Map<string, Candidate[]>();
    for (const c of candidates) {
      const shard = this.repository.shardNameFor(c.link.code);
      const group = byShard.get(shard);
      if (group) group.push(c);
      else byShard.set(shard, [c]);
    }
    const refused: Candidate[] = [];
    await Promise.all(
      [...byShard.values()].map(async (group) => {
        for (let i = 0; i < group.length; i += this.options.insertRows) {
          const slice = group.slice(i, i + this.options.insertRows);
          try {
            await this.repository.insertMany(slice.map((c) => c.link));
            for (const c of slice) done(c, c.link);
          } catch (error) {
            if (error instanceof DuplicateLinkError) refused.push(...slice);
            else for (const c of slice) fail(c, asDomainError(error));
          }
        }
      }),
    );
    return refused;
  }

  /** After a duplicate: one row at a time, in row order (so spare ids go to the same rows on every attempt). */
  private async insertOneByOne(chunk: PreparedChunk, c: Candidate, done: (c: Candidate, l: Link) => void, fail: (c: Candidate, e: DomainError) => void): Promise<void> {
    for (;;) {
      try {
        if (chunk.recovering && c.prepared.alias === null) {
          const [holder] = await this.repository.findOnEveryShard([identifierOf(c.link)]);
          if (holder?.id === c.link.id) return done(c, holder);
          if (holder) throw new DuplicateLinkError(holder);
        }
        await this.repository.insert(c.link);
        return done(c, c.link);
      } catch (error) {
        if (!(error instanceof DuplicateLinkError)) return void fail(c, asDomainError(error));
        if (c.prepared.alias !== null) {
          const [holder] = await this.repository.findOnEveryShard([identifierOf(c.link)]).catch(() => [] as Link[]);
          return void fail(c, this.links.aliasConflict(c.link.tenantId, identifierOf(c.link), holder ?? null));
        }
        if (c.attempt + 1 >= this.maxAttempts) return void fail(c, new DomainError(ErrorCode.CODE_SPACE_EXHAUSTED, `no free code after ${this.maxAttempts} attempts`));
        this.nextAttempt(chunk, c);
      }
    }
  }

  /** The next code of a generated row: the hash strategy varies the code; the sequence strategy takes a spare id. */
  private nextAttempt(chunk: PreparedChunk, c: Candidate): void {
    c.attempt++;
    const id = this.codes.name === 'sequence' ? chunk.spareIds.shift() : BigInt(c.link.id);
    if (id === undefined) throw new DomainError(ErrorCode.CODE_SPACE_EXHAUSTED, 'no spare id left for this chunk; retry the row');
    c.link = this.linkOf(c.prepared, id, c.attempt);
  }

  /** Field by field, not `{ ...rest }` of the prepared create: the two copies were ~5 % of a batch's CPU. */
  private linkOf(p: PreparedLink, id: bigint, attempt: number): Link {
    return {
      id: id.toString(), domain: p.domain, code: p.alias ?? this.codes.codeFor(id, p.targetUrl, attempt), targetUrl: p.targetUrl, tenantId: p.tenantId, createdAt: p.createdAt,
      updatedAt: p.updatedAt, expiresAt: p.expiresAt, status: p.status, redirectType: p.redirectType, version: p.version, moderation: p.moderation, moderationReason: p.moderationReason,
      title: p.title, tags: p.tags, maxClicks: p.maxClicks, passwordHash: p.passwordHash, utm: p.utm, forwardQuery: p.forwardQuery, geoTargets: p.geoTargets,
      deviceTargets: p.deviceTargets, variants: p.variants, clicksPerIpPerMinute: p.clicksPerIpPerMinute,
    };
  }

  private refused(base: Omit<PreparedChunk, 'recovering' | 'keepResults'>, error: DomainError): PreparedChunk {
    base.rows.forEach((row, pos) => (base.outcomes[pos] = { index: row.index, error }));
    return { ...base, recovering: false, keepResults: false };
  }

  /** Lease upkeep and the end of a claim. */
  async renew(claim: Claim): Promise<boolean> {
    return this.records.renew(claim.batch, claim.owner, new Date(this.clock.now() + this.options.leaseMs)).catch(() => true);
  }

  async finish(claim: Claim, rows: number, complete: boolean): Promise<void> {
    if (!claim.held) return;
    await (complete ? this.records.finish(claim.batch, claim.owner, rows) : this.records.release(claim.batch, claim.owner)).catch(() => undefined);
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }
}

interface Claim {
  readonly batch: BatchKey;
  readonly owner: string;
  /** False when the batch was complete already (a replay holds no lease). */
  readonly held: boolean;
}

/**
 * One batch being answered: `lines()` yields the answer a chunk at a time, in request order, while
 * the next chunk is read and validated. Pulled by the response stream, so a client that reads
 * slowly slows the reading of its request (backpressure both ways) and memory holds two chunks.
 */
export class BatchRun {
  constructor(
    private readonly creator: BatchCreator,
    private readonly request: BatchRequest,
    private readonly source: RowSource,
    private readonly claim: Claim | null,
    private readonly chunkRows: number,
    private readonly replayOnly: boolean,
  ) {}

  async *lines(): AsyncGenerator<string> {
    const { creator, request, claim } = this;
    let lost = false;
    const renewal = claim?.held
      ? setInterval(() => void creator.renew(claim).then((ok) => (lost ||= !ok)), Math.max(100, Math.floor(creator.leaseMs / 3)))
      : null;
    renewal?.unref();
    let rows = 0;
    let complete = true;
    let finished = false;
    try {
      const prepare = (seq: number, chunk: BatchRow[]) =>
        lost ? Promise.resolve(lostChunk(seq, chunk)) : creator.prepare(request, claim, seq, chunk, this.replayOnly).catch((error) => failedChunk(seq, chunk, asDomainError(error)));
      let seq = 0;
      let chunk = await this.source.take(this.chunkRows);
      let next = chunk.length ? prepare(seq, chunk) : null;
      while (next) {
        const current = await next;
        rows += current.rows.length;
        const writing = creator.write(request, claim, current);
        chunk = await this.source.take(this.chunkRows);
        next = chunk.length ? prepare(++seq, chunk) : null;
        const { text, final } = await writing;
        complete &&= final;
        yield text;
      }
      finished = true;
    } finally {
      if (renewal) clearInterval(renewal);
      if (claim) await creator.finish(claim, rows, finished && complete && !lost);
    }
  }
}

const reused = () => new DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED, 'this Idempotency-Key was used with other rows; use a new key for a different batch');
const quotaExceeded = () => new DomainError(ErrorCode.QUOTA_EXCEEDED, "the plan's daily batch rows are used up");

function failedChunk(seq: number, rows: readonly BatchRow[], error: DomainError): PreparedChunk {
  return { seq, rows, outcomes: rows.map((row) => ({ index: row.index, error })), candidates: [], spareIds: [], recovering: false, keepResults: false };
}

function lostChunk(seq: number, rows: readonly BatchRow[]): PreparedChunk {
  return failedChunk(seq, rows, new DomainError(ErrorCode.IDEMPOTENCY_KEY_IN_USE, 'another attempt took this batch over; retry with the same key to get its answer', { retryAfterSeconds: 1 }));
}

function asDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  return new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'a store did not answer; retry the batch (with its Idempotency-Key nothing is created twice)', { retryAfterSeconds: 1 }, { cause: error });
}

/** The request's rows, taken a chunk at a time, with a look at the first chunk before it is taken. */
class RowSource {
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
