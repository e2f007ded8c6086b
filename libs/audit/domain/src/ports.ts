import { AuditEntry, StoredAuditEntry } from './audit-entry';

/** Where a page of the log ends: the last entry's time and sequence number (newest first: at, then seq). */
export interface AuditPosition {
  readonly at: Date;
  readonly seq: string;
}

/** One page of a log, newest first, after `after`, narrowed by the filters that are given. */
export interface AuditQuery {
  readonly log: string;
  readonly after: AuditPosition | null;
  readonly limit: number;
  readonly actorId?: string;
  /** One action (`link.created`), or with `actionFamily` every action of a family (`link` → `link.*`). */
  readonly action?: string;
  readonly actionFamily?: string;
  readonly targetId?: string;
  /** Inclusive. */
  readonly from?: Date;
  /** Exclusive. */
  readonly to?: Date;
}

/**
 * The audit log in the meta database (docs/design.md, "Audit log"). Changes stored in the meta
 * database write their entry in their own transaction (the tenant store takes it); `append` is for
 * changes stored elsewhere (links, on the shards), after the change.
 */
export interface AuditLogStore {
  /** Stores the entries; an entry whose id is stored already is skipped (a retried append stores nothing twice). */
  append(entries: readonly AuditEntry[]): Promise<void>;
  /** Newest first: by time, then by sequence number. */
  list(query: AuditQuery): Promise<StoredAuditEntry[]>;
  /** Deletes at most `limit` entries older than `before`, oldest first; how many it deleted. */
  purgeBefore(before: Date, limit: number): Promise<number>;
}

export const AUDIT_LOG_STORE = Symbol('AUDIT_LOG_STORE');
