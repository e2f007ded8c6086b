import { DomainError, ErrorCode } from '@shortlink/core';
import { murmur32 } from '@shortlink/shard-router';
import { Link, ShortUrlIdentifier } from '../link';
import { isAfter, newestFirst } from '../listing';
import { DuplicateLinkError, InsertOptions, LinkListQuery, LinkRepository, RetiredCode, StatementOutcome } from '../ports';

const keyOf = (id: ShortUrlIdentifier) => `${id.domain}/${id.code}`;

/** Whether a link is on the page a listing query asks for (before the limit). */
function listed(link: Link, q: LinkListQuery): boolean {
  if (link.tenantId !== q.tenantId || (q.after !== null && !isAfter(link, q.after))) return false;
  if ((q.status && link.status !== q.status) || (q.domain && link.domain !== q.domain) || (q.tag && !link.tags.includes(q.tag))) return false;
  const needle = q.search?.toLowerCase();
  return !needle || [link.code, link.title ?? '', link.targetUrl].some((text) => text.toLowerCase().includes(needle));
}

/**
 * The LinkRepository port in memory, for the links domain's unit tests (which may not depend on the
 * sharding lib that implements it). A code falls into one of `shards` by its hash, so that a test can
 * take one down (its calls get SHARD_UNAVAILABLE, as the sharding lib answers) or stall its writes.
 */
export class InMemoryLinkRepository implements LinkRepository {
  readonly links = new Map<string, Link>();
  readonly retired = new Map<string, Date>();
  readonly clicks = new Map<string, number>();
  /** Shards whose every call fails. */
  readonly down = new Set<string>();
  /** Shards whose inserts never answer (a process stopped in the middle of a write). */
  readonly stalled = new Set<string>();

  constructor(readonly shards: readonly string[] = ['a', 'b']) {}

  shardOf(code: string): string {
    return this.shards[murmur32(code) % this.shards.length];
  }

  async insert(link: Link, _options?: InsertOptions): Promise<void> {
    const [outcome] = await this.insertInStatements([link], 1);
    if (outcome.error !== null) throw outcome.error;
  }

  async insertInStatements(links: readonly Link[], rowsPerStatement: number): Promise<StatementOutcome[]> {
    const byShard = new Map<string, Link[]>();
    for (const link of links) byShard.set(this.shardOf(link.code), [...(byShard.get(this.shardOf(link.code)) ?? []), link]);
    // The shards in parallel, as the sharding lib writes them: a stalled one holds up only its own links.
    const perShard = [...byShard].map(async ([shard, group]) => {
      const outcomes: StatementOutcome[] = [];
      for (let i = 0; i < group.length; i += rowsPerStatement) {
        const statement = group.slice(i, i + rowsPerStatement);
        if (this.stalled.has(shard)) await new Promise<never>(() => undefined);
        outcomes.push({ links: statement, error: this.unavailable(shard) ?? this.write(statement) });
      }
      return outcomes;
    });
    return (await Promise.all(perShard)).flat();
  }

  async findByCode(id: ShortUrlIdentifier): Promise<Link | null> {
    this.check(id.code);
    return this.links.get(keyOf(id)) ?? null;
  }

  findForRedirect(id: ShortUrlIdentifier): Promise<Link | null> {
    return this.findByCode(id);
  }

  async replace(link: Link, expectedVersion: number): Promise<boolean> {
    this.check(link.code);
    if (this.links.get(keyOf(link))?.version !== expectedVersion) return false;
    this.links.set(keyOf(link), link);
    return true;
  }

  async remove(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date): Promise<boolean> {
    this.check(id.code);
    if (this.links.get(keyOf(id))?.version !== expectedVersion) return false;
    this.links.delete(keyOf(id));
    this.retired.set(keyOf(id), retiredUntil);
    return true;
  }

  async retiredUntil(id: ShortUrlIdentifier, now: Date): Promise<Date | null> {
    this.check(id.code);
    const until = this.retired.get(keyOf(id));
    return until !== undefined && until > now ? until : null;
  }

  async addClicks(id: ShortUrlIdentifier, linkId: string, delta: number): Promise<number | null> {
    this.check(id.code);
    if (this.links.get(keyOf(id))?.id !== linkId) return null;
    this.clicks.set(linkId, (this.clicks.get(linkId) ?? 0) + delta);
    return this.clicks.get(linkId)!;
  }

  async clickCount(id: ShortUrlIdentifier, linkId: string): Promise<number | null> {
    this.check(id.code);
    return this.links.get(keyOf(id))?.id === linkId ? (this.clicks.get(linkId) ?? 0) : null;
  }

  async findOnEveryShard(ids: readonly ShortUrlIdentifier[]): Promise<Link[]> {
    return ids.flatMap((id) => this.links.get(keyOf(id)) ?? []);
  }

  async retiredOnEveryShard(ids: readonly ShortUrlIdentifier[], now: Date): Promise<RetiredCode[]> {
    return ids.flatMap((id) => {
      const retiredUntil = this.retired.get(keyOf(id));
      return retiredUntil !== undefined && retiredUntil > now ? [{ ...id, retiredUntil }] : [];
    });
  }

  async listByTenant(query: LinkListQuery): Promise<Link[]> {
    return [...this.links.values()].filter((link) => listed(link, query)).sort(newestFirst).slice(0, query.limit + 1);
  }

  async expireDue(now: Date, limitPerShard: number): Promise<Link[]> {
    const due = [...this.links.values()].filter((l) => l.status === 'active' && l.expiresAt !== null && l.expiresAt <= now).slice(0, limitPerShard);
    return due.map((l) => {
      const expired: Link = { ...l, status: 'expired', version: l.version + 1, updatedAt: now };
      this.links.set(keyOf(l), expired);
      return expired;
    });
  }

  async purgeExpired(before: Date, limitPerShard: number): Promise<number> {
    const over = [...this.links.values()].filter((l) => l.status === 'expired' && l.expiresAt !== null && l.expiresAt < before).slice(0, limitPerShard);
    over.forEach((l) => this.links.delete(keyOf(l)));
    return over.length;
  }

  async *identifierPages(pageSize: number): AsyncGenerator<ShortUrlIdentifier[]> {
    const all = [...this.links.values()].map((l) => ({ domain: l.domain, code: l.code }));
    for (let i = 0; i < all.length; i += pageSize) yield all.slice(i, i + pageSize);
  }

  private unavailable(shard: string): DomainError | null {
    return this.down.has(shard) ? new DomainError(ErrorCode.SHARD_UNAVAILABLE, `shard ${shard} is unavailable`, { shard, retryAfterSeconds: 1 }) : null;
  }

  private check(code: string): void {
    const error = this.unavailable(this.shardOf(code));
    if (error) throw error;
  }

  /** All or nothing, as one multi-row statement. */
  private write(statement: readonly Link[]): DuplicateLinkError | null {
    const keys = statement.map(keyOf);
    const taken = statement.find((link, i) => this.links.has(keys[i]) || keys.indexOf(keys[i]) !== i);
    if (taken) return new DuplicateLinkError(taken);
    statement.forEach((link, i) => this.links.set(keys[i], link));
    return null;
  }
}
