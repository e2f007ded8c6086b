import { AuditEntry, StoredAuditEntry } from '../audit-entry';
import { AuditLogStore, AuditQuery } from '../ports';

/** An AuditLogStore in an array, for unit tests of the domain: the adapters' contract suite holds it too (link-store's in-memory-doubles.spec.ts). */
export class InMemoryAuditLogStore implements AuditLogStore {
  readonly entries: StoredAuditEntry[] = [];
  private seq = 0;

  async append(entries: readonly AuditEntry[]): Promise<void> {
    for (const entry of entries) this.add(entry);
  }

  /** Synchronous, for the in-memory tenant store's "transactions". */
  add(entry: AuditEntry): void {
    if (this.entries.some((e) => e.id === entry.id)) return;
    this.entries.push({ ...entry, seq: String(++this.seq) });
  }

  async list(q: AuditQuery): Promise<StoredAuditEntry[]> {
    const newestFirst = (a: StoredAuditEntry, b: StoredAuditEntry) => b.at.getTime() - a.at.getTime() || Number(b.seq) - Number(a.seq);
    return this.entries
      .filter(
        (e) =>
          e.log === q.log &&
          (!q.after || e.at < q.after.at || (e.at.getTime() === q.after.at.getTime() && Number(e.seq) < Number(q.after.seq))) &&
          (q.actorId === undefined || e.actor.id === q.actorId) &&
          (q.action === undefined || e.action === q.action) &&
          (q.actionFamily === undefined || e.action.startsWith(`${q.actionFamily}.`)) &&
          (q.targetId === undefined || e.target.id === q.targetId) &&
          (q.from === undefined || e.at >= q.from) &&
          (q.to === undefined || e.at < q.to),
      )
      .sort(newestFirst)
      .slice(0, q.limit);
  }

  async purgeBefore(before: Date, limit: number): Promise<number> {
    const doomed = new Set(
      this.entries
        .filter((e) => e.at < before)
        .sort((a, b) => a.at.getTime() - b.at.getTime())
        .slice(0, limit),
    );
    const kept = this.entries.filter((e) => !doomed.has(e));
    this.entries.splice(0, this.entries.length, ...kept);
    return doomed.size;
  }
}
