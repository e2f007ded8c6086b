import { Link, LinkListQuery, OutboxStamp, RetiredCode, ShortUrlIdentifier, UNCLAIMED } from '@shortlink/links-domain';
import { JournalEntry, MovableShardStore, StoredRow } from '@shortlink/sharding-domain';
import { LazyOpen, MysqlConnectionOptions } from '@shortlink/sql';
import { MysqlLinkShardStore } from './mysql-link-shard-store';

/** A MySQL shard opened (and migrated) on first use; a down shard fails its calls, not the boot. */
export class LazyMysqlLinkShardStore implements MovableShardStore {
  private readonly store: LazyOpen<MysqlLinkShardStore>;

  constructor(
    readonly shardName: string,
    options: MysqlConnectionOptions,
    stamp: OutboxStamp = UNCLAIMED,
  ) {
    this.store = new LazyOpen(`shard ${shardName}`, () => MysqlLinkShardStore.open(shardName, options, stamp));
  }

  async insert(link: Link) {
    return (await this.store.get()).insert(link);
  }
  async insertMany(links: readonly Link[]) {
    return (await this.store.get()).insertMany(links);
  }
  async findByCode(id: ShortUrlIdentifier) {
    return (await this.store.get()).findByCode(id);
  }

  async replace(link: Link, expectedVersion: number) {
    return (await this.store.get()).replace(link, expectedVersion);
  }

  async remove(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date) {
    return (await this.store.get()).remove(id, expectedVersion, retiredUntil);
  }

  async retiredUntil(id: ShortUrlIdentifier, now: Date) {
    return (await this.store.get()).retiredUntil(id, now);
  }

  async findMany(ids: readonly ShortUrlIdentifier[]) {
    return (await this.store.get()).findMany(ids);
  }

  async retiredAmong(ids: readonly ShortUrlIdentifier[], now: Date) {
    return (await this.store.get()).retiredAmong(ids, now);
  }

  async listByTenant(query: LinkListQuery) {
    return (await this.store.get()).listByTenant(query);
  }

  async expireDue(now: Date, limit: number) {
    return (await this.store.get()).expireDue(now, limit);
  }

  async purgeExpired(before: Date, limit: number) {
    return (await this.store.get()).purgeExpired(before, limit);
  }
  async crawlableCodes(domain: string, limit: number) {
    return (await this.store.get()).crawlableCodes(domain, limit);
  }
  async tagsOf(tenantId: string, limit: number) {
    return (await this.store.get()).tagsOf(tenantId, limit);
  }
  async addClicks(id: ShortUrlIdentifier, linkId: string, delta: number) {
    return (await this.store.get()).addClicks(id, linkId, delta);
  }
  async clickCount(id: ShortUrlIdentifier, linkId: string) {
    return (await this.store.get()).clickCount(id, linkId);
  }
  async listIdentifiers(afterId: string | null, limit: number) {
    return (await this.store.get()).listIdentifiers(afterId, limit);
  }
  async listLinks(afterId: string | null, limit: number) {
    return (await this.store.get()).listLinks(afterId, limit);
  }
  async recordHealth(link: Link, expectedVersion: number) {
    return (await this.store.get()).recordHealth(link, expectedVersion);
  }
  async scanRows(afterId: string | null, limit: number) {
    return (await this.store.get()).scanRows(afterId, limit);
  }
  async rowsByIds(ids: readonly string[]) {
    return (await this.store.get()).rowsByIds(ids);
  }
  async upsertRows(rows: readonly StoredRow[]) {
    return (await this.store.get()).upsertRows(rows);
  }
  async upsertLink(link: Link) {
    return (await this.store.get()).upsertLink(link);
  }
  async removeCopy(id: ShortUrlIdentifier, linkId: string, retiredUntil: Date) {
    return (await this.store.get()).removeCopy(id, linkId, retiredUntil);
  }
  async deleteRows(ids: readonly string[]) {
    return (await this.store.get()).deleteRows(ids);
  }
  async scanRetired(after: ShortUrlIdentifier | null, limit: number) {
    return (await this.store.get()).scanRetired(after, limit);
  }
  async upsertRetired(codes: readonly RetiredCode[]) {
    return (await this.store.get()).upsertRetired(codes);
  }
  async deleteRetired(ids: readonly ShortUrlIdentifier[]) {
    return (await this.store.get()).deleteRetired(ids);
  }
  async carryClicks(carries: ReadonlyArray<{ readonly id: string; readonly clicks: number }>) {
    return (await this.store.get()).carryClicks(carries);
  }
  async clearTombstones() {
    return (await this.store.get()).clearTombstones();
  }
  async insertJournaled(links: readonly Link[]) {
    return (await this.store.get()).insertJournaled(links);
  }
  async replaceJournaled(link: Link, expectedVersion: number) {
    return (await this.store.get()).replaceJournaled(link, expectedVersion);
  }
  async removeJournaled(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date) {
    return (await this.store.get()).removeJournaled(id, expectedVersion, retiredUntil);
  }
  async journal(entries: readonly JournalEntry[]) {
    return (await this.store.get()).journal(entries);
  }
  async journalPage(afterId: string | null, limit: number) {
    return (await this.store.get()).journalPage(afterId, limit);
  }
  async clearJournal() {
    return (await this.store.get()).clearJournal();
  }
  async leased(owner: string, afterId: string | null, limit: number) {
    return (await this.store.get()).leased(owner, afterId, limit);
  }
  async claimExpired(owner: string, now: Date, until: Date, limit: number) {
    return (await this.store.get()).claimExpired(owner, now, until, limit);
  }
  async renew(owner: string, until: Date, ids?: readonly string[]) {
    return (await this.store.get()).renew(owner, until, ids);
  }
  async settle(owner: string, ids: readonly string[]) {
    return (await this.store.get()).settle(owner, ids);
  }
  async backlog() {
    return (await this.store.get()).backlog();
  }
  async ping() {
    return (await this.store.get()).ping();
  }
  close() {
    return this.store.close();
  }
}
