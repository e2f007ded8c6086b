import { createHash } from 'crypto';
import { Link, RetiredCode, ShortUrlIdentifier } from '@shortlink/links-domain';
import { InMemoryLinkShard, InMemoryOutbox } from '@shortlink/links-domain/testing';
import { JournalEntry, LinkShardStore, MoveProgress, MoveRecord, RingStore, RingWatcherInfo, ShardMoveStore, StoredRow, UpsertOutcome } from '../ports';
import { RingVersion } from '../ring';

const key = (id: ShortUrlIdentifier) => `${id.domain}/${id.code}`;
/** Stored links are never changed in place (a write stores a new object), so a checksum is computed once per object. */
const checksums = new WeakMap<Link, string>();
const checksumOf = (link: Link) =>
  checksums.get(link) ?? checksums.set(link, createHash('sha1').update(JSON.stringify(link)).digest('hex').slice(0, 16)).get(link)!;
const toRow = (link: Link, clicks: number): StoredRow => ({
  id: link.id,
  domain: link.domain,
  code: link.code,
  version: link.version,
  checksum: checksumOf(link),
  data: structuredClone(link),
  clicks,
});

/** InMemoryLinkShard with the move operations, by the same rules as the SQL stores; `down` makes every call fail. */
export class InMemoryMovableShard extends InMemoryLinkShard implements LinkShardStore, ShardMoveStore {
  readonly tombstones = new Set<string>();
  /** Link ids whose clicks were carried here from their old owner (until clearTombstones). */
  readonly carried = new Set<string>();
  /** The move journal: ids of moving links written here while a move runs, by id. */
  readonly journaled = new Map<string, JournalEntry>();
  override down = false;

  constructor(shardName: string, outbox?: ConstructorParameters<typeof InMemoryLinkShard>[1]) {
    super(shardName, outbox);
    const methods = [InMemoryOutbox, InMemoryLinkShard, InMemoryMovableShard].flatMap((c) => Object.getOwnPropertyNames(c.prototype));
    for (const m of methods) {
      // The getter `events` is no call; `record` runs inside a write that already checked.
      if (['constructor', 'sorted', 'upsertOne', 'record', 'events'].includes(m)) continue;
      const f = (this as unknown as Record<string, unknown>)[m];
      if (typeof f !== 'function') continue;
      (this as unknown as Record<string, unknown>)[m] = (...args: unknown[]) =>
        this.down ? Promise.reject(new Error(`ECONNREFUSED ${shardName}`)) : (f as (...a: unknown[]) => unknown).apply(this, args);
    }
  }

  private byId: { changes: number; rows: Link[] } = { changes: -1, rows: [] };

  /** The rows in id order, sorted again only after a change (a move scans a shard batch by batch). */
  private sorted(): Link[] {
    if (this.byId.changes !== this.rows.changes) {
      this.byId = { changes: this.rows.changes, rows: [...this.rows.values()].sort((a, b) => Number(a.id) - Number(b.id)) }; // test ids stay below 2^53
    }
    return this.byId.rows;
  }

  async scanRows(afterId: string | null, limit: number) {
    const after = afterId === null ? -Infinity : Number(afterId);
    const rows = this.sorted();
    let [lo, hi] = [0, rows.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Number(rows[mid].id) > after) hi = mid;
      else lo = mid + 1;
    }
    return rows.slice(lo, lo + limit).map((l) => toRow(l, this.clicks.get(l.id) ?? 0));
  }

  async rowsByIds(ids: readonly string[]) {
    const found = [...new Set(ids)].flatMap((id) => {
      const link = this.rows.get(this.rows.keyOfId.get(id) ?? '');
      return link ? [link] : [];
    });
    return found.sort((a, b) => Number(a.id) - Number(b.id)).map((l) => toRow(l, this.clicks.get(l.id) ?? 0));
  }

  async upsertRows(rows: readonly StoredRow[]): Promise<UpsertOutcome> {
    let written = 0;
    let skipped = 0;
    let conflicts = 0;
    for (const row of rows) {
      const outcome = this.upsertOne(row.data as Link);
      if (outcome === 'written') written++;
      else if (outcome === 'conflict') conflicts++;
      else skipped++;
    }
    return { written, skipped, conflicts };
  }

  async upsertLink(link: Link) {
    return this.upsertOne(link) === 'written';
  }

  private upsertOne(link: Link): 'written' | 'skipped' | 'conflict' {
    if (this.tombstones.has(link.id)) return 'skipped';
    const existing = this.rows.get(key(link));
    if (existing && existing.id !== link.id) return 'conflict';
    if (existing && existing.version >= link.version) return 'skipped';
    this.rows.set(key(link), structuredClone(link));
    return 'written';
  }

  async removeCopy(id: ShortUrlIdentifier, linkId: string, retiredUntil: Date) {
    this.tombstones.add(linkId);
    if (this.rows.get(key(id))?.id === linkId) this.rows.delete(key(id));
    const until = this.retired.get(key(id));
    if (!until || until < retiredUntil) this.retired.set(key(id), retiredUntil);
  }

  async deleteRows(ids: readonly string[]) {
    const wanted = new Set(ids);
    let n = 0;
    for (const [k, l] of [...this.rows]) if (wanted.has(l.id) && this.rows.delete(k)) n++;
    for (const id of wanted) this.clicks.delete(id); // the click count goes with the row, as the SQL stores' click_count
    return n;
  }

  async scanRetired(after: ShortUrlIdentifier | null, limit: number): Promise<RetiredCode[]> {
    return [...this.retired.entries()]
      .map(([k, until]) => ({ domain: k.slice(0, k.indexOf('/')), code: k.slice(k.indexOf('/') + 1), retiredUntil: until }))
      .sort((a, b) => (a.domain + '\t' + a.code < b.domain + '\t' + b.code ? -1 : 1))
      .filter((c) => !after || c.domain + '\t' + c.code > after.domain + '\t' + after.code)
      .slice(0, limit);
  }

  async upsertRetired(codes: readonly RetiredCode[]) {
    for (const c of codes) {
      const until = this.retired.get(key(c));
      if (!until || until < c.retiredUntil) this.retired.set(key(c), c.retiredUntil);
    }
  }

  async deleteRetired(ids: readonly ShortUrlIdentifier[]) {
    for (const id of ids) this.retired.delete(key(id));
  }

  async carryClicks(carries: ReadonlyArray<{ readonly id: string; readonly clicks: number }>) {
    let n = 0;
    for (const { id, clicks } of carries) {
      if (this.carried.has(id)) continue;
      this.carried.add(id);
      if (this.rows.keyOfId.has(id)) this.clicks.set(id, (this.clicks.get(id) ?? 0) + clicks);
      n++;
    }
    return n;
  }

  async clearTombstones() {
    this.tombstones.clear();
    this.carried.clear();
    this.journaled.clear();
  }

  async insertJournaled(links: readonly Link[]) {
    await this.insertMany(links); // all or nothing, then the entries: one step, as one transaction
    for (const l of links) this.journaled.set(l.id, { id: l.id, domain: l.domain, code: l.code });
  }

  async replaceJournaled(link: Link, expectedVersion: number) {
    const replaced = await this.replace(link, expectedVersion);
    if (replaced) this.journaled.set(link.id, { id: link.id, domain: link.domain, code: link.code });
    return replaced;
  }

  async removeJournaled(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date) {
    const row = this.rows.get(key(id));
    const removed = await this.remove(id, expectedVersion, retiredUntil);
    if (removed && row) this.journaled.set(row.id, { id: row.id, domain: row.domain, code: row.code });
    return removed;
  }

  async journal(entries: readonly JournalEntry[]) {
    for (const e of entries) this.journaled.set(e.id, { id: e.id, domain: e.domain, code: e.code });
  }

  async journalPage(afterId: string | null, limit: number) {
    const after = afterId === null ? -1n : BigInt(afterId);
    return [...this.journaled.values()]
      .filter((e) => BigInt(e.id) > after)
      .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
      .slice(0, limit)
      .map((e) => ({ ...e }));
  }

  async clearJournal() {
    this.journaled.clear();
  }
}

/** The ring store in memory, with a clock the test moves (watchers' ages, move claims). */
export class InMemoryRingStore implements RingStore {
  readonly versions: RingVersion[] = [];
  readonly seen = new Map<string, { app: string; version: number; at: number }>();
  moves: Array<{ progress: MoveProgress; owner: string; at: number; finished: boolean }> = [];

  constructor(private readonly now: () => number = () => Date.now()) {}

  async current() {
    return this.versions[this.versions.length - 1] ?? null;
  }

  async publish(next: RingVersion, expected: number | null) {
    const latest = this.versions[this.versions.length - 1]?.version ?? null;
    if (latest !== expected || next.version !== (expected ?? 0) + 1) return false;
    this.versions.push(structuredClone(next));
    return true;
  }

  async history(limit: number) {
    return [...this.versions].reverse().slice(0, limit);
  }

  async heartbeat(instanceId: string, app: string, version: number) {
    this.seen.set(instanceId, { app, version, at: this.now() });
  }

  async watchers(withinMs: number): Promise<RingWatcherInfo[]> {
    return [...this.seen]
      .filter(([, w]) => this.now() - w.at < withinMs)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([instanceId, w]) => ({ instanceId, app: w.app, version: w.version, ageMs: this.now() - w.at }));
  }

  async forget(instanceId: string) {
    this.seen.delete(instanceId);
  }

  async latestMove(): Promise<MoveRecord | null> {
    const m = this.moves.find((x) => !x.finished) ?? this.moves[this.moves.length - 1];
    return m ? { id: m.progress.id, progress: structuredClone(m.progress), owner: m.owner, ownerAgeMs: this.now() - m.at, finished: m.finished } : null;
  }

  async saveMove(progress: MoveProgress, owner: string, finished: boolean) {
    const existing = this.moves.find((m) => m.progress.id === progress.id);
    const entry = { progress: structuredClone(progress), owner, at: this.now(), finished };
    if (existing) Object.assign(existing, entry);
    else this.moves.push(entry);
  }

  async claimMove(id: string, owner: string, staleAfterMs: number) {
    const m = this.moves.find((x) => x.progress.id === id);
    if (!m) return false;
    if (m.owner !== owner && this.now() - m.at < staleAfterMs) return false;
    m.owner = owner;
    m.at = this.now();
    return true;
  }

  async ping() {}

  async close() {}
}
