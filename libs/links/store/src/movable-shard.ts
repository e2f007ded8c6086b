import { Link, LinkEventOutbox, RetiredCode, ShortUrlIdentifier } from '@shortlink/links-domain';
import { JournalEntry, ShardMoveStore, StoredRow } from '@shortlink/sharding-domain';

/**
 * The move operations of a backend (docs/design.md, "Online resharding"), without the shard's name
 * and the journaled writes (the store's own writes, each with its journal entry in one transaction).
 */
export type MoveOps = Omit<ShardMoveStore, 'shardName' | 'insertJournaled' | 'replaceJournaled' | 'removeJournaled'>;

/**
 * A shard store whose move operations are those of its backend's MoveOps, and whose outbox
 * operations those of its backend's outbox (docs/design.md, "Edits reach every instance").
 */
export abstract class MovableShard implements MoveOps, Omit<LinkEventOutbox, 'shardName'> {
  protected abstract readonly moves: MoveOps;
  protected abstract readonly outbox: LinkEventOutbox;

  leased(owner: string, afterId: string | null, limit: number) {
    return this.outbox.leased(owner, afterId, limit);
  }
  claimExpired(owner: string, now: Date, until: Date, limit: number) {
    return this.outbox.claimExpired(owner, now, until, limit);
  }
  renew(owner: string, until: Date, ids?: readonly string[]) {
    return this.outbox.renew(owner, until, ids);
  }
  settle(owner: string, ids: readonly string[]) {
    return this.outbox.settle(owner, ids);
  }
  backlog() {
    return this.outbox.backlog();
  }

  scanRows(afterId: string | null, limit: number) {
    return this.moves.scanRows(afterId, limit);
  }
  rowsByIds(ids: readonly string[]) {
    return this.moves.rowsByIds(ids);
  }
  upsertRows(rows: readonly StoredRow[]) {
    return this.moves.upsertRows(rows);
  }
  upsertLink(link: Link) {
    return this.moves.upsertLink(link);
  }
  removeCopy(id: ShortUrlIdentifier, linkId: string, retiredUntil: Date) {
    return this.moves.removeCopy(id, linkId, retiredUntil);
  }
  deleteRows(ids: readonly string[]) {
    return this.moves.deleteRows(ids);
  }
  scanRetired(after: ShortUrlIdentifier | null, limit: number) {
    return this.moves.scanRetired(after, limit);
  }
  upsertRetired(codes: readonly RetiredCode[]) {
    return this.moves.upsertRetired(codes);
  }
  deleteRetired(ids: readonly ShortUrlIdentifier[]) {
    return this.moves.deleteRetired(ids);
  }
  carryClicks(carries: ReadonlyArray<{ readonly id: string; readonly clicks: number }>) {
    return this.moves.carryClicks(carries);
  }
  clearTombstones() {
    return this.moves.clearTombstones();
  }
  journal(entries: readonly JournalEntry[]) {
    return this.moves.journal(entries);
  }
  journalPage(afterId: string | null, limit: number) {
    return this.moves.journalPage(afterId, limit);
  }
  clearJournal() {
    return this.moves.clearJournal();
  }
}
