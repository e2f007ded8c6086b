import { DomainError, ErrorCode } from '@shortlink/core';
import { ShardRouter } from '@shortlink/shard-router';
import { Link, ShortUrlIdentifier } from './link';
import { DuplicateLinkError, LinkListQuery, LinkShardStore, RetiredCode } from './ports';

/**
 * Routes every link operation to the shard the router names for the code (the shard key is the
 * short code: docs/design.md, "Identity, shards and codes"). A failing shard surfaces as
 * SHARD_UNAVAILABLE with its name.
 */
export class ShardedLinkRepository {
  private readonly stores: ReadonlyMap<string, LinkShardStore>;

  constructor(
    readonly router: ShardRouter,
    stores: readonly LinkShardStore[],
  ) {
    this.stores = new Map(stores.map((s) => [s.shardName, s]));
    for (const shard of router.shards()) {
      if (!this.stores.has(shard)) throw new Error(`shard "${shard}" is on the router but has no store`);
    }
  }

  shardNameFor(code: string): string {
    return this.router.shardFor(code);
  }

  storeFor(code: string): LinkShardStore {
    return this.stores.get(this.router.shardFor(code))!;
  }

  allStores(): readonly LinkShardStore[] {
    return [...this.stores.values()];
  }

  async insert(link: Link): Promise<void> {
    const store = this.storeFor(link.code);
    await this.onShard(store, () => store.insert(link));
  }

  /** Groups by shard and inserts each group in one statement. */
  async insertMany(links: readonly Link[]): Promise<void> {
    const groups = new Map<LinkShardStore, Link[]>();
    for (const link of links) {
      const store = this.storeFor(link.code);
      groups.set(store, [...(groups.get(store) ?? []), link]);
    }
    await Promise.all([...groups].map(([store, group]) => this.onShard(store, () => store.insertMany(group))));
  }

  async findByCode(id: ShortUrlIdentifier): Promise<Link | null> {
    const store = this.storeFor(id.code);
    return this.onShard(store, () => store.findByCode(id));
  }

  async replace(link: Link, expectedVersion: number): Promise<boolean> {
    const store = this.storeFor(link.code);
    return this.onShard(store, () => store.replace(link, expectedVersion));
  }

  async remove(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date): Promise<boolean> {
    const store = this.storeFor(id.code);
    return this.onShard(store, () => store.remove(id, expectedVersion, retiredUntil));
  }

  async retiredUntil(id: ShortUrlIdentifier, now: Date): Promise<Date | null> {
    const store = this.storeFor(id.code);
    return this.onShard(store, () => store.retiredUntil(id, now));
  }

  async addClicks(id: ShortUrlIdentifier, linkId: string, delta: number): Promise<number | null> {
    const store = this.storeFor(id.code);
    return this.onShard(store, () => store.addClicks(id, linkId, delta));
  }

  async clickCount(id: ShortUrlIdentifier, linkId: string): Promise<number | null> {
    const store = this.storeFor(id.code);
    return this.onShard(store, () => store.clickCount(id, linkId));
  }

  /**
   * The stored links among `ids`, asked of every shard (not only the one the router names): batch
   * creation checks aliases against every shard, so that a code left on another shard (a move
   * under way, a leftover of one) is never created twice (docs/design.md, "Batch creation").
   */
  async findOnEveryShard(ids: readonly ShortUrlIdentifier[]): Promise<Link[]> {
    if (ids.length === 0) return [];
    const found = await Promise.all(this.allStores().map((store) => this.onShard(store, () => store.findMany(ids))));
    return found.flat();
  }

  /** Retired codes among `ids` on every shard (see findOnEveryShard). */
  async retiredOnEveryShard(ids: readonly ShortUrlIdentifier[], now: Date): Promise<RetiredCode[]> {
    if (ids.length === 0) return [];
    const found = await Promise.all(this.allStores().map((store) => this.onShard(store, () => store.retiredAmong(ids, now))));
    return found.flat();
  }

  /**
   * A page of a tenant's links over every shard, newest first: each shard answers `limit + 1` rows
   * from its (tenant, id) index, and the pages are merged by id. The extra row tells whether
   * there is a next page (docs/design.md, "Listing").
   */
  async listByTenant(query: LinkListQuery): Promise<Link[]> {
    const perShard = await Promise.all(this.allStores().map((store) => this.onShard(store, () => store.listByTenant({ ...query, limit: query.limit + 1 }))));
    return perShard
      .flat()
      .sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : BigInt(b.id) < BigInt(a.id) ? -1 : 0))
      .slice(0, query.limit + 1);
  }

  async expireDue(now: Date, limitPerShard: number): Promise<Link[]> {
    const all = await Promise.all(this.allStores().map((store) => this.onShard(store, () => store.expireDue(now, limitPerShard)).catch(() => [] as Link[])));
    return all.flat();
  }

  async purgeExpired(before: Date, limitPerShard: number): Promise<number> {
    const counts = await Promise.all(this.allStores().map((store) => this.onShard(store, () => store.purgeExpired(before, limitPerShard)).catch(() => 0)));
    return counts.reduce((a, b) => a + b, 0);
  }

  private async onShard<T>(store: LinkShardStore, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (error) {
      if (error instanceof DomainError || error instanceof DuplicateLinkError) throw error;
      throw new DomainError(ErrorCode.SHARD_UNAVAILABLE, `shard ${store.shardName} is unavailable`, { shard: store.shardName, retryAfterSeconds: 1 }, { cause: error });
    }
  }
}
