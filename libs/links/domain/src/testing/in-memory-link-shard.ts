import { Clock } from '@shortlink/core';
import { createdEvent, deletedEvent, editedEvent, OutboxStamp } from '../events/link-events';
import { Link, ShortUrlIdentifier } from '../link';
import { isAfter, newestFirst } from '../listing';
import { DuplicateLinkError, LinkListQuery } from '../ports';
import { InMemoryOutbox } from './in-memory-outbox';

const keyOf = (id: ShortUrlIdentifier) => `${id.domain}/${id.code}`;
/** A store keeps values: what a caller does to a link (its dates) after handing it over or reading it changes nothing stored. */
const copy = (link: Link): Link => structuredClone(link);
/** Each identifier once, as an SQL `IN (…)` reads it. */
const distinct = (ids: readonly ShortUrlIdentifier[]) => [...new Map(ids.map((id) => [keyOf(id), id])).values()];

/** Rows by `domain/code`, indexed by id and counting its changes (kept by every set and delete, the move operations' too). */
export class LinkRows extends Map<string, Link> {
  /** The key of each row's id. */
  readonly keyOfId = new Map<string, string>();
  /** Grows with every change: a cache of the rows (their id order) is valid while it stays the same. */
  changes = 0;
  override set(key: string, link: Link) {
    const previous = this.get(key);
    if (previous) this.keyOfId.delete(previous.id);
    this.keyOfId.set(link.id, key);
    this.changes++;
    return super.set(key, link);
  }
  override delete(key: string) {
    const previous = this.get(key);
    if (previous) this.keyOfId.delete(previous.id);
    this.changes++;
    return super.delete(key);
  }
  override clear() {
    this.keyOfId.clear();
    this.changes++;
    super.clear();
  }
}

/**
 * A shard in a Map (the sharding lib's LinkShardStore), for the domain's own unit tests (which may not depend on the adapters): the
 * same rules as the SQL stores (unique id, unique domain + code, versioned replace, retired codes, values not references),
 * held by the stores' contract suites (libs/links/store/src/in-memory-doubles.spec.ts).
 */
export class InMemoryLinkShard extends InMemoryOutbox {
  readonly rows = new LinkRows();
  readonly retired = new Map<string, Date>();
  /** Redirects counted per link id (the click_count column of the SQL stores). */
  readonly clicks = new Map<string, number>();
  down = false;

  /** Its outbox is itself: the events of its changes (docs/design.md, "Edits reach every instance"), recorded with each change. */
  constructor(shardName: string, outbox: { readonly stamp?: OutboxStamp; readonly clock?: Clock } = {}) {
    super(shardName, outbox.stamp, outbox.clock);
  }

  async insert(link: Link) {
    await this.insertMany([link]);
  }

  async insertMany(links: readonly Link[]) {
    const keys = links.map(keyOf);
    const [seenKeys, seenIds] = [new Set<string>(), new Set<string>()];
    const duplicate = links.find((l, i) => {
      const taken = this.rows.has(keys[i]) || seenKeys.has(keys[i]) || this.rows.keyOfId.has(l.id) || seenIds.has(l.id);
      seenKeys.add(keys[i]);
      seenIds.add(l.id);
      return taken;
    });
    if (duplicate) throw new DuplicateLinkError(duplicate);
    links.forEach((l, i) => this.rows.set(keys[i], copy(l)));
    this.record(links.map(createdEvent));
  }

  async findByCode(id: ShortUrlIdentifier) {
    const link = this.rows.get(keyOf(id));
    return link ? copy(link) : null;
  }

  async replace(link: Link, expectedVersion: number) {
    const current = this.rows.get(`${link.domain}/${link.code}`);
    if (!current || current.version !== expectedVersion) return false;
    this.rows.set(keyOf(link), copy(link));
    this.record([editedEvent(link)]);
    return true;
  }

  async remove(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date) {
    const key = `${id.domain}/${id.code}`;
    const current = this.rows.get(key);
    if (current?.version !== expectedVersion) return false;
    this.rows.delete(key);
    this.retired.set(key, retiredUntil);
    this.record([deletedEvent(current)]);
    return true;
  }

  async retiredUntil(id: ShortUrlIdentifier, now: Date) {
    const until = this.retired.get(`${id.domain}/${id.code}`);
    return until && until > now ? until : null;
  }

  async findMany(ids: readonly ShortUrlIdentifier[]) {
    return distinct(ids).flatMap((id) => {
      const link = this.rows.get(keyOf(id));
      return link ? [copy(link)] : [];
    });
  }

  async retiredAmong(ids: readonly ShortUrlIdentifier[], now: Date) {
    return distinct(ids).flatMap((id) => {
      const until = this.retired.get(`${id.domain}/${id.code}`);
      return until && until > now ? [{ domain: id.domain, code: id.code, retiredUntil: until }] : [];
    });
  }

  async listByTenant(q: LinkListQuery) {
    return [...this.rows.values()]
      .filter((l) => l.tenantId === q.tenantId && (q.after === null || isAfter(l, q.after)))
      .filter((l) => (!q.status || l.status === q.status) && (!q.domain || l.domain === q.domain) && (!q.tag || l.tags.includes(q.tag)))
      .filter((l) => !q.search || [l.code, l.title ?? '', l.targetUrl].some((s) => s.toLowerCase().includes(q.search!.toLowerCase())))
      .filter((l) => !q.health || (l.health?.state ?? 'unchecked') === q.health)
      .sort(newestFirst)
      .slice(0, q.limit)
      .map(copy);
  }

  async tagsOf(tenantId: string, limit: number) {
    if (this.down) throw new Error('shard down');
    return [...new Set([...this.rows.values()].filter((l) => l.tenantId === tenantId).flatMap((l) => l.tags))].sort().slice(0, limit);
  }

  async crawlableCodes(domain: string, limit: number) {
    if (this.down) throw new Error('shard down');
    return [...this.rows.values()]
      .filter((l) => l.domain === domain && l.crawlable)
      .map((l) => l.code)
      .sort()
      .slice(0, limit);
  }

  async addClicks(id: ShortUrlIdentifier, linkId: string, delta: number) {
    if (this.down) throw new Error('shard down');
    if (this.rows.get(`${id.domain}/${id.code}`)?.id !== linkId) return null;
    const total = (this.clicks.get(linkId) ?? 0) + delta;
    this.clicks.set(linkId, total);
    return total;
  }

  async clickCount(id: ShortUrlIdentifier, linkId: string) {
    if (this.down) throw new Error('shard down');
    return this.rows.get(`${id.domain}/${id.code}`)?.id === linkId ? (this.clicks.get(linkId) ?? 0) : null;
  }

  async listLinks(afterId: string | null, limit: number) {
    return [...this.rows.values()]
      .filter((l) => afterId === null || BigInt(l.id) > BigInt(afterId))
      .sort((a, b) => (BigInt(a.id) > BigInt(b.id) ? 1 : -1))
      .slice(0, limit)
      .map(copy);
  }

  async recordHealth(link: Link, expectedVersion: number) {
    const current = this.rows.get(keyOf(link));
    if (!current || current.id !== link.id || current.version !== expectedVersion) return false;
    this.rows.set(keyOf(link), copy({ ...current, health: link.health ?? null }));
    return true;
  }

  async listIdentifiers(afterId: string | null, limit: number) {
    return [...this.rows.values()]
      .filter((l) => afterId === null || BigInt(l.id) > BigInt(afterId))
      .sort((a, b) => (BigInt(a.id) > BigInt(b.id) ? 1 : -1))
      .slice(0, limit)
      .map((l) => ({ id: l.id, domain: l.domain, code: l.code }));
  }

  async expireDue(now: Date, limit: number) {
    const due = [...this.rows.values()].filter((l) => l.status === 'active' && l.expiresAt !== null && l.expiresAt <= now).slice(0, limit);
    const expired = due.map((l): Link => ({ ...l, status: 'expired', version: l.version + 1, updatedAt: now }));
    for (const l of expired) this.rows.set(keyOf(l), l);
    this.record(expired.map(editedEvent));
    return expired.map(copy);
  }

  async purgeExpired(before: Date, limit: number) {
    const old = [...this.rows.entries()].filter(([, l]) => l.status === 'expired' && l.expiresAt !== null && l.expiresAt < before).slice(0, limit);
    for (const [key] of old) this.rows.delete(key);
    return old.length;
  }

  async ping() {}

  async close() {}
}
