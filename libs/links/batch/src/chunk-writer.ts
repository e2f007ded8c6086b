import { Clock, DomainError, ErrorCode } from '@shortlink/core';
import { CodeStrategy } from '@shortlink/link-codes';
import { DuplicateLinkError, identifierOf, Link, LinkRepository, LinkService, ShortUrlIdentifier } from '@shortlink/links-domain';
import { asDomainError, Candidate, linkOf, PreparedChunk } from './chunk';

/** A row answered with the link it created (or found created), or with why not. */
type Done = (c: Candidate, link: Link) => void;
type Fail = (c: Candidate, error: DomainError) => void;

export interface ChunkWriterParts {
  readonly links: LinkService;
  readonly repository: LinkRepository;
  readonly codes: CodeStrategy;
  readonly clock: Clock;
}

/**
 * Writes a prepared chunk and answers each of its rows (docs/design.md, "Batch creation"): aliases
 * checked against every shard, generated codes made unique within the chunk, multi-row inserts
 * (the repository groups them by shard), and after a duplicate the rows one by one, a generated
 * row moving to its next code. A recovering chunk recognises the rows an earlier attempt wrote by their ids.
 */
export class ChunkWriter {
  constructor(
    private readonly parts: ChunkWriterParts,
    /** Rows per multi-row INSERT statement at most. */
    private readonly insertRows: number,
    /** Codes tried per generated row at most. */
    private readonly maxAttempts: number,
  ) {}

  /** Fills the chunk's outcomes; the read path hears of the links created. */
  async write(chunk: PreparedChunk): Promise<void> {
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
    // As after a single create: a scan may have cached "no such code" for these codes, and the
    // Bloom filter learns them (docs/design.md, "Batch creation").
    if (created.length) await this.parts.links.announceCreated(created);
  }

  /**
   * Aliases against every shard (taken, retired, or named twice in the batch); generated codes made
   * unique within the chunk. A recovering chunk also looks its generated codes up: a row an earlier
   * attempt wrote is recognised by its id.
   */
  private async resolve(chunk: PreparedChunk, done: Done, fail: Fail) {
    const used = new Set<string>();
    const keyOf = (id: ShortUrlIdentifier) => `${id.domain}/${id.code}`;
    const aliased = chunk.candidates.filter((c) => c.prepared.alias !== null);
    const lookups = chunk.recovering ? chunk.candidates : aliased;
    const [existing, retired] = await Promise.all([
      this.parts.repository.findOnEveryShard(lookups.map((c) => identifierOf(c.link))),
      this.parts.repository.retiredOnEveryShard(
        aliased.map((c) => identifierOf(c.link)),
        new Date(this.parts.clock.now()),
      ),
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
      else if (used.has(key) || holder) fail(c, this.parts.links.aliasConflict(c.link.tenantId, identifierOf(c.link), holder ?? null));
      else if (retiredUntil.has(key)) fail(c, this.parts.links.aliasRetired(c.link.tenantId, identifierOf(c.link), retiredUntil.get(key)!));
      else toInsert.push(c);
      used.add(key);
    }
    // Codes of the sequence strategy are a bijection of distinct ids: they can only meet an alias of
    // this chunk or a stored link (the common case, no aliases, needs no bookkeeping at all).
    if (!chunk.recovering && aliased.length === 0 && this.parts.codes.name === 'sequence') {
      toInsert.push(...chunk.candidates);
      return { toInsert, retry };
    }
    for (const c of chunk.candidates) {
      if (c.prepared.alias !== null) continue;
      while (used.has(keyOf(c.link)) && c.attempt < this.maxAttempts) this.nextAttempt(chunk, c);
      const holder = found.get(keyOf(c.link));
      if (holder?.id === c.link.id) done(c, holder);
      else if (holder)
        retry.push(c); // taken by another link: the next attempt, one by one
      else toInsert.push(c);
      used.add(keyOf(c.link));
    }
    return { toInsert, retry };
  }

  /** Multi-row inserts, grouped by shard in the repository; the candidates of a statement a duplicate refused. */
  private async insertGrouped(candidates: readonly Candidate[], done: Done, fail: Fail): Promise<Candidate[]> {
    const byLink = new Map(candidates.map((c) => [c.link, c]));
    const refused: Candidate[] = [];
    const unsure: Array<{ statement: Candidate[]; error: unknown; settled?: Promise<boolean> }> = [];
    for (const outcome of await this.parts.repository.insertInStatements([...byLink.keys()], this.insertRows)) {
      const statement = outcome.links.map((link) => byLink.get(link)!);
      if (outcome.error === null) for (const c of statement) done(c, c.link);
      else if (outcome.error instanceof DuplicateLinkError) refused.push(...statement);
      else unsure.push({ statement, error: outcome.error, settled: 'settled' in outcome ? outcome.settled : undefined });
    }
    for (const u of unsure) await this.checkAgain(u.statement, u.error, u.settled, done, fail);
    return refused;
  }

  /**
   * A statement that failed without a duplicate may have been committed all the same (its deadline
   * passed while the shard went on, or the connection broke after the commit): once the shard has
   * ended it, its rows are looked up, and a row found with its own id is answered as created, before
   * the chunk's answer is recorded (docs/design.md, "Batch creation"). The others keep the error.
   */
  private async checkAgain(statement: readonly Candidate[], error: unknown, settled: Promise<boolean> | undefined, done: Done, fail: Fail): Promise<void> {
    await settled;
    const found = await this.parts.repository.findOnEveryShard(statement.map((c) => identifierOf(c.link))).catch(() => [] as Link[]);
    const written = new Set(found.map((l) => l.id));
    for (const c of statement) {
      if (written.has(c.link.id)) done(c, c.link);
      else fail(c, asDomainError(error));
    }
  }

  /** After a duplicate: one row at a time, in row order (so spare ids go to the same rows on every attempt). */
  private async insertOneByOne(chunk: PreparedChunk, c: Candidate, done: Done, fail: Fail): Promise<void> {
    for (;;) {
      try {
        if (chunk.recovering && c.prepared.alias === null) {
          const [holder] = await this.parts.repository.findOnEveryShard([identifierOf(c.link)]);
          if (holder?.id === c.link.id) return done(c, holder);
          if (holder) throw new DuplicateLinkError(holder);
        }
        await this.parts.repository.insert(c.link);
        return done(c, c.link);
      } catch (error) {
        if (!(error instanceof DuplicateLinkError)) return void fail(c, asDomainError(error));
        if (c.prepared.alias !== null) {
          const [holder] = await this.parts.repository.findOnEveryShard([identifierOf(c.link)]).catch(() => [] as Link[]);
          return void fail(c, this.parts.links.aliasConflict(c.link.tenantId, identifierOf(c.link), holder ?? null));
        }
        if (c.attempt + 1 >= this.maxAttempts) {
          return void fail(c, new DomainError(ErrorCode.CODE_SPACE_EXHAUSTED, `no free code after ${this.maxAttempts} attempts`));
        }
        this.nextAttempt(chunk, c);
      }
    }
  }

  /** The next code of a generated row: the hash strategy varies the code; the sequence strategy takes a spare id. */
  private nextAttempt(chunk: PreparedChunk, c: Candidate): void {
    c.attempt++;
    const id = this.parts.codes.name === 'sequence' ? chunk.spareIds.shift() : BigInt(c.link.id);
    if (id === undefined) throw new DomainError(ErrorCode.CODE_SPACE_EXHAUSTED, 'no spare id left for this chunk; retry the row');
    c.link = linkOf(c.prepared, id, this.parts.codes, c.attempt);
  }
}
