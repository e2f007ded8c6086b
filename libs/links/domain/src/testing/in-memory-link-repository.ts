import { DomainError, ErrorCode } from '@shortlink/core';
import { murmur32 } from '@shortlink/shard-router';
import { Link, ShortUrlIdentifier } from '../link';
import { newestFirst } from '../listing';
import { InsertOptions, LinkListQuery, LinkRepository, RetiredCode, StatementOutcome } from '../ports';
import { InMemoryLinkShard } from './in-memory-link-shard';
import { LinkEventOutbox, LinkEventOutboxes, OutboxEvent, OutboxStamp, UNCLAIMED } from '../events/link-events';

/**
 * The LinkRepository port over InMemoryLinkShard doubles, for the links domain's unit tests (which may
 * not depend on the sharding lib that implements it): a code's shard is a hash of it, and a test can
 * take a shard down (its calls get SHARD_UNAVAILABLE, as the sharding lib answers them) or stall its
 * writes. The storage rules are the shard double's, which the stores' contract suites hold.
 */
export class InMemoryLinkRepository implements LinkRepository {
  readonly shards: readonly InMemoryLinkShard[];
  /** Shards whose every call fails. */
  readonly down = new Set<string>();
  /** Shards whose inserts never answer (a process stopped in the middle of a write). */
  readonly stalled = new Set<string>();

  constructor(names: readonly string[] = ['a', 'b'], outbox: ConstructorParameters<typeof InMemoryLinkShard>[1] = {}) {
    this.shards = names.map((name) => new InMemoryLinkShard(name, outbox));
    this.stamp = outbox.stamp ?? UNCLAIMED;
  }

  private readonly stamp: OutboxStamp;

  /** Every event waiting in the shards' outboxes. */
  outboxEvents(): OutboxEvent[] {
    return this.shards.flatMap((shard) => shard.events);
  }

  /** The shards' outboxes, as the wiring gives them to the relay; a shard that is down fails its outbox calls too. */
  outboxes(): LinkEventOutboxes {
    const guarded = (shard: InMemoryLinkShard): LinkEventOutbox => {
      const check = () => {
        if (this.down.has(shard.shardName)) throw unavailable(shard);
      };
      return {
        shardName: shard.shardName,
        leased: async (...a) => (check(), shard.leased(...a)),
        claimExpired: async (...a) => (check(), shard.claimExpired(...a)),
        renew: async (...a) => (check(), shard.renew(...a)),
        settle: async (...a) => (check(), shard.settle(...a)),
        backlog: async () => (check(), shard.backlog()),
      };
    };
    const all = this.shards.map(guarded);
    return { stamp: this.stamp, all: () => all };
  }

  /** Every stored link, by `domain/code`. */
  get links(): ReadonlyMap<string, Link> {
    return new Map(this.shards.flatMap((shard) => [...shard.rows]));
  }

  shardOf(code: string): string {
    return this.owner(code).shardName;
  }

  async insert(link: Link, _options?: InsertOptions): Promise<void> {
    return this.on(link.code).insert(link);
  }

  async insertInStatements(links: readonly Link[], rowsPerStatement: number): Promise<StatementOutcome[]> {
    const byShard = new Map<InMemoryLinkShard, Link[]>();
    for (const link of links) byShard.set(this.owner(link.code), [...(byShard.get(this.owner(link.code)) ?? []), link]);
    // The shards in parallel, as the sharding lib writes them: a stalled one holds up only its own links.
    const perShard = [...byShard].map(async ([shard, group]) => {
      const outcomes: StatementOutcome[] = [];
      for (let i = 0; i < group.length; i += rowsPerStatement) {
        const statement = group.slice(i, i + rowsPerStatement);
        if (this.stalled.has(shard.shardName)) await new Promise<never>(() => undefined);
        const error = this.down.has(shard.shardName)
          ? unavailable(shard)
          : await shard.insertMany(statement).then(
              () => null,
              (e: unknown) => e,
            );
        outcomes.push({ links: statement, error });
      }
      return outcomes;
    });
    return (await Promise.all(perShard)).flat();
  }

  async findByCode(id: ShortUrlIdentifier): Promise<Link | null> {
    return this.on(id.code).findByCode(id);
  }

  async findForRedirect(id: ShortUrlIdentifier, onQuery?: () => void): Promise<Link | null> {
    onQuery?.();
    return this.findByCode(id);
  }

  async replace(link: Link, expectedVersion: number): Promise<boolean> {
    return this.on(link.code).replace(link, expectedVersion);
  }

  async remove(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date): Promise<boolean> {
    return this.on(id.code).remove(id, expectedVersion, retiredUntil);
  }

  async retiredUntil(id: ShortUrlIdentifier, now: Date): Promise<Date | null> {
    return this.on(id.code).retiredUntil(id, now);
  }

  async addClicks(id: ShortUrlIdentifier, linkId: string, delta: number): Promise<number | null> {
    return this.on(id.code).addClicks(id, linkId, delta);
  }

  async clickCount(id: ShortUrlIdentifier, linkId: string): Promise<number | null> {
    return this.on(id.code).clickCount(id, linkId);
  }

  async findOnEveryShard(ids: readonly ShortUrlIdentifier[]): Promise<Link[]> {
    return (await Promise.all(this.shards.map((shard) => shard.findMany(ids)))).flat();
  }

  async findById(id: string): Promise<Link | null> {
    for (const shard of this.shards) {
      const [link] = await shard.listLinks(id === '0' ? null : (BigInt(id) - 1n).toString(), 1);
      if (link?.id === id) return link;
    }
    return null;
  }

  async retiredOnEveryShard(ids: readonly ShortUrlIdentifier[], now: Date): Promise<RetiredCode[]> {
    return (await Promise.all(this.shards.map((shard) => shard.retiredAmong(ids, now)))).flat();
  }

  async listByTenant(query: LinkListQuery): Promise<Link[]> {
    const pages = await Promise.all(this.shards.map((shard) => shard.listByTenant({ ...query, limit: query.limit + 1 })));
    return pages
      .flat()
      .sort(newestFirst)
      .slice(0, query.limit + 1);
  }

  async crawlableCodes(domain: string, limit: number): Promise<string[]> {
    const perShard = await Promise.all(this.shards.map((shard) => shard.crawlableCodes(domain, limit)));
    return [...new Set(perShard.flat())].sort().slice(0, limit);
  }

  async tagsOf(tenantId: string, limit: number): Promise<string[]> {
    const perShard = await Promise.all(this.shards.map((shard) => shard.tagsOf(tenantId, limit)));
    return [...new Set(perShard.flat())].sort().slice(0, limit);
  }

  async expireDue(now: Date, limitPerShard: number): Promise<Link[]> {
    return (await Promise.all(this.shards.map((shard) => shard.expireDue(now, limitPerShard)))).flat();
  }

  async purgeExpired(before: Date, limitPerShard: number): Promise<number> {
    const counts = await Promise.all(this.shards.map((shard) => shard.purgeExpired(before, limitPerShard)));
    return counts.reduce((a, b) => a + b, 0);
  }

  async *identifierPages(pageSize: number): AsyncGenerator<ShortUrlIdentifier[]> {
    for (const shard of this.shards) {
      let after: string | null = null;
      for (let page = await shard.listIdentifiers(after, pageSize); page.length > 0; page = await shard.listIdentifiers(after, pageSize)) {
        yield page;
        after = page[page.length - 1].id;
      }
    }
  }

  async *linkPages(pageSize: number): AsyncGenerator<Link[]> {
    for (const shard of this.shards) {
      let after: string | null = null;
      for (let page = await shard.listLinks(after, pageSize); page.length > 0; page = await shard.listLinks(after, pageSize)) {
        yield page;
        after = page[page.length - 1].id;
      }
    }
  }

  async recordHealth(link: Link, expectedVersion: number): Promise<boolean> {
    return this.on(link.code).recordHealth(link, expectedVersion);
  }

  private owner(code: string): InMemoryLinkShard {
    return this.shards[murmur32(code) % this.shards.length];
  }

  /** The shard of `code`, or SHARD_UNAVAILABLE when it is down. */
  private on(code: string): InMemoryLinkShard {
    const shard = this.owner(code);
    if (this.down.has(shard.shardName)) throw unavailable(shard);
    return shard;
  }
}

/** A shard that is down, as the sharding lib answers it. */
const unavailable = (shard: InMemoryLinkShard) =>
  new DomainError(ErrorCode.SHARD_UNAVAILABLE, `shard ${shard.shardName} is unavailable`, { shard: shard.shardName, retryAfterSeconds: 1 });
