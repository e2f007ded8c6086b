import { Clock, DomainError, ErrorCode, parseIsoInstant, systemClock } from '@shortlink/core';
import { AuditContext, AuditEntry, AuditFacts, auditEntry, StoredAuditEntry } from './audit-entry';
import { AuditLogStore, AuditQuery } from './ports';

/**
 * Seals a page's last position into an opaque cursor bound to a scope and filters, and opens it
 * again: the links listing's `ListCursors` (links domain) has this shape, and the apps hand the
 * same kind of object here, so both listings seal alike (docs/design.md, "Listing").
 */
export interface AuditCursors {
  seal(scope: string, filters: Readonly<Record<string, string>>, position: { readonly createdAt: Date; readonly id: string }): string;
  open(scope: string, filters: Readonly<Record<string, string>>, cursor: string): { createdAt: Date; id: string };
}

/** A reader's request, as the API received it (filters validated here). */
export interface AuditListRequest {
  readonly limit: number;
  readonly cursor?: string | null;
  /** The actor's id (a key's, a person's). */
  readonly actor?: string;
  /** An action (`link.created`) or a family (`link`). */
  readonly action?: string;
  /** The target's id: a link's code, a key's or tenant's id, a domain. */
  readonly target?: string;
  /** ISO 8601, inclusive. */
  readonly from?: string;
  /** ISO 8601, exclusive. */
  readonly to?: string;
}

export interface AuditPage {
  readonly entries: StoredAuditEntry[];
  /** Opaque; null on the last page. */
  readonly nextCursor: string | null;
}

/** What happens to entries written after their change (links) when the meta database does not take them at once. */
export interface AuditDeliveryEvents {
  /** The entry waits in memory and is tried again every `retryMs`; `pending` entries wait. */
  deferred?(error: unknown, pending: number): void;
  /** Waiting entries were stored after all. */
  delivered?(count: number): void;
  /** Entries given up: more than `maxPending` waited, or the process stopped with them still waiting. */
  dropped?(count: number): void;
}

export interface AuditLogOptions {
  readonly cursors: AuditCursors;
  /** Entries are kept this long (AUDIT_RETENTION_DAYS). */
  readonly retentionMs: number;
  readonly clock?: Clock;
  /** How long a request waits for its entry to be stored before leaving it to the retries (2 s). */
  readonly appendWaitMs?: number;
  readonly retryMs?: number;
  readonly maxPending?: number;
  /** Entries deleted per statement by the retention job, and statements per run at most. */
  readonly purgeBatch?: number;
  readonly purgeBatchesPerRun?: number;
  readonly events?: AuditDeliveryEvents;
}

const ACTION_FILTER = /^[a-z_]{1,32}(\.[a-z_]{1,32})?$/;

/**
 * The audit log (docs/design.md, "Audit log"): builds entries from a request's context, appends the
 * entries of changes stored outside the meta database right after the change, pages through a log
 * newest first with sealed cursors, and deletes what is past its retention.
 *
 * Entries of changes in the meta database (keys, tenants, domains; members) are not written here:
 * they go to the store method that makes the change, in its transaction.
 */
export class AuditLog {
  private readonly clock: Clock;
  private readonly appendWaitMs: number;
  private readonly retryMs: number;
  private readonly maxPending: number;
  private readonly purgeBatch: number;
  private readonly purgeBatchesPerRun: number;
  private pending: AuditEntry[] = [];
  private retryTimer: NodeJS.Timeout | null = null;
  private retrying: Promise<void> | null = null;

  constructor(
    private readonly store: AuditLogStore,
    private readonly options: AuditLogOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.appendWaitMs = options.appendWaitMs ?? 2000;
    this.retryMs = options.retryMs ?? 1000;
    this.maxPending = options.maxPending ?? 10_000;
    this.purgeBatch = options.purgeBatch ?? 1000;
    this.purgeBatchesPerRun = options.purgeBatchesPerRun ?? 20;
  }

  /** An entry of `context`'s actor and address, now. */
  entry(context: AuditContext, facts: AuditFacts): AuditEntry {
    return auditEntry(context, facts, new Date(this.clock.now()));
  }

  /**
   * Stores the entry of a change the caller made elsewhere (a shard), after that change was
   * acknowledged: never transactional with it (docs/design.md, "Audit log" says what a crash can
   * lose). Never fails the caller, whose change is made: an entry the meta database does not take
   * within `appendWaitMs` waits in memory and is tried again (appends are idempotent by entry id).
   */
  async record(entry: AuditEntry): Promise<void> {
    try {
      await withDeadline(this.store.append([entry]), this.appendWaitMs);
    } catch (error) {
      this.defer([entry], error);
    }
  }

  /**
   * A person's sign-in, or a failed one, in the tenant's log (for the sign-in routes: the person is
   * both the actor and the target; `reason` says why a sign-in failed, never what was typed).
   */
  recordSignIn(input: {
    readonly tenantId: string;
    readonly person: { readonly id: string; readonly email: string };
    readonly clientAddress: string | null;
    readonly succeeded: boolean;
    readonly method: 'password' | 'oidc';
    readonly reason?: string;
  }): Promise<void> {
    const context = { actor: { type: 'person' as const, id: input.person.id, name: input.person.email }, clientAddress: input.clientAddress };
    return this.record(
      this.entry(context, {
        log: input.tenantId,
        action: input.succeeded ? 'auth.signed_in' : 'auth.sign_in_failed',
        target: { type: 'member', id: input.person.id, domain: null },
        details: { method: input.method, ...(input.reason ? { reason: input.reason } : {}) },
      }),
    );
  }

  /** A page of `log`, newest first; the cursor is bound to the log and the filters (400 INVALID_CURSOR otherwise). */
  async list(log: string, request: AuditListRequest): Promise<AuditPage> {
    const { query, filters } = this.query(log, request);
    const found = await this.store.list({ ...query, limit: request.limit + 1 });
    const entries = found.slice(0, request.limit);
    const last = entries[entries.length - 1];
    const nextCursor = found.length > request.limit ? this.options.cursors.seal(log, filters, { createdAt: last.at, id: last.seq }) : null;
    return { entries, nextCursor };
  }

  /**
   * Every entry of `log` the filters select from the cursor on, newest first, read a page at a time
   * (the CSV export). The request is checked now (a bad filter or cursor throws here, before anything
   * is answered); the entries are read as they are pulled.
   */
  every(log: string, request: Omit<AuditListRequest, 'limit'>, pageSize = 500): AsyncGenerator<StoredAuditEntry> {
    const { query } = this.query(log, { ...request, limit: pageSize });
    const store = this.store;
    return (async function* pages() {
      let next = query;
      for (;;) {
        const page = await store.list(next);
        yield* page;
        if (page.length < pageSize) return;
        const last = page[page.length - 1];
        next = { ...next, after: { at: last.at, seq: last.seq } };
      }
    })();
  }

  /** Deletes entries older than the retention, oldest first, in batches; how many it deleted. */
  async purgeExpired(): Promise<number> {
    const before = new Date(this.clock.now() - this.options.retentionMs);
    let total = 0;
    for (let batch = 0; batch < this.purgeBatchesPerRun; batch++) {
      const deleted = await this.store.purgeBefore(before, this.purgeBatch);
      total += deleted;
      if (deleted < this.purgeBatch) break;
    }
    return total;
  }

  /** Entries still waiting for the meta database. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /** At shutdown: one last try for the waiting entries, then what is left is dropped (and counted). */
  async stop(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.retrying;
    if (this.pending.length) await this.retryPending();
    if (this.pending.length) this.options.events?.dropped?.(this.pending.length);
    this.pending = [];
  }

  private query(log: string, request: AuditListRequest): { query: AuditQuery; filters: Record<string, string> } {
    const action = request.action;
    if (action !== undefined && !ACTION_FILTER.test(action))
      throw new DomainError(ErrorCode.VALIDATION_FAILED, 'action must be an action such as link.created, or a family such as link', { field: 'action' });
    const from = instant('from', request.from);
    const to = instant('to', request.to);
    if (from && to && from.getTime() >= to.getTime())
      throw new DomainError(ErrorCode.INVALID_TIME_RANGE, 'from must be before to', { from: request.from, to: request.to });
    // The cursor is bound to the filters as given, and to this listing (a links cursor never opens here).
    const filters = {
      listing: 'audit-log',
      actor: request.actor ?? '',
      action: action ?? '',
      target: request.target ?? '',
      from: request.from ?? '',
      to: request.to ?? '',
    };
    const position = request.cursor ? this.options.cursors.open(log, filters, request.cursor) : null;
    const query: AuditQuery = {
      log,
      after: position && { at: position.createdAt, seq: position.id },
      limit: request.limit,
      ...(request.actor !== undefined ? { actorId: request.actor } : {}),
      ...(action === undefined ? {} : action.includes('.') ? { action } : { actionFamily: action }),
      ...(request.target !== undefined ? { targetId: request.target } : {}),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
    };
    return { query, filters };
  }

  private defer(entries: readonly AuditEntry[], error: unknown): void {
    this.pending.push(...entries);
    const over = this.pending.length - this.maxPending;
    if (over > 0) {
      this.pending.splice(0, over);
      this.options.events?.dropped?.(over);
    }
    this.options.events?.deferred?.(error, this.pending.length);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.retrying) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.retrying = this.retryPending().finally(() => {
        this.retrying = null;
        if (this.pending.length) this.scheduleRetry();
      });
    }, this.retryMs);
    this.retryTimer.unref();
  }

  private async retryPending(): Promise<void> {
    while (this.pending.length) {
      const batch = this.pending.slice(0, 500);
      try {
        await withDeadline(this.store.append(batch), this.appendWaitMs);
      } catch {
        return;
      }
      // By identity: entries may have been added, or the oldest dropped, while the append ran.
      const stored = new Set(batch);
      this.pending = this.pending.filter((e) => !stored.has(e));
      this.options.events?.delivered?.(batch.length);
    }
  }
}

function instant(name: 'from' | 'to', value: string | undefined): Date | null {
  if (value === undefined || value === '') return null;
  const ms = parseIsoInstant(value);
  if (ms === null)
    throw new DomainError(ErrorCode.INVALID_TIME_RANGE, `${name} must be an ISO 8601 date or date-time with a zone, e.g. 2026-12-03T10:00:00Z`, {
      parameter: name,
    });
  return new Date(ms);
}

/** The promise, or a rejection once `ms` have passed (the promise itself goes on; appends are idempotent). */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the audit log did not answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
