import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { InsertOptions, Link, LinkListQuery, LinkRepository, newestFirst, RetiredCode, ShortUrlIdentifier, StatementOutcome } from '@shortlink/links-domain';
import { ShardRouter } from '@shortlink/shard-router';
import { isMovable, LinkShardStore, MovableShardStore } from './ports';
import { Route, RoutingLease, RoutingState, RoutingTarget } from './routing-state';
import { GuardedCall, ShardGuard } from './shard-guard';

export interface ShardedLinkRepositoryOptions {
  /** The store of a shard a new ring names that is not open yet (the spare shard); null: unknown shard. */
  readonly resolveStore?: (name: string) => LinkShardStore | null;
  /** Longest one shard operation may take before it fails with SHARD_UNAVAILABLE; 0: unbounded. */
  readonly timeoutMs?: number;
  /**
   * The same for a multi-row insert (a batch chunk of up to 1000 rows), which a loaded shard may
   * take seconds over; a look-up's bound would fail rows the shard was about to write. Default:
   * ten times `timeoutMs` (docs/design.md, "Batch creation").
   */
  readonly bulkTimeoutMs?: number;
  /** Consecutive failures after which a shard fails fast for `breakerOpenMs` (docs/design.md, "Failure containment"). */
  readonly breakerFailures?: number;
  readonly breakerOpenMs?: number;
  /** A redirect's look-ups (findForRedirect) in flight per shard at most; default unbounded (docs/design.md, "Failure containment"). */
  readonly redirectLookupsPerShard?: number | null;
  /** Look-ups beyond that share that may wait for it per shard, and for how long; default none (503 at once). */
  readonly redirectLookupQueue?: { readonly max: number; readonly waitMs: number };
  /** Longest a write of a moving key waits while its move is frozen before it gets 503. */
  readonly frozenWaitMs?: number;
  readonly clock?: Clock;
}

/**
 * Routes every link operation to the shard that owns the code (the shard key is the short code:
 * docs/design.md, "Identity, shards and codes"), as the current RoutingState says. While a move
 * runs, a moving key is read from the new owner first and written to both, the old owner's write
 * entering its id in that shard's move journal in the same transaction (docs/design.md,
 * "Online resharding"). A failing shard surfaces as SHARD_UNAVAILABLE with its name, within
 * `timeoutMs`, and fails fast after repeated failures (docs/design.md, "Failure containment").
 */
export class ShardedLinkRepository implements LinkRepository, RoutingTarget {
  private readonly stores = new Map<string, LinkShardStore>();
  private readonly guards = new Map<string, ShardGuard>();
  private state: RoutingState;
  private lease: RoutingLease | null = null;
  private readonly changeWaiters = new Set<() => void>();
  private readonly clock: Clock;
  /** Writes of moving links that waited for a frozen move to switch, and the longest of those waits (ms), since start. */
  readonly frozenWaits = { count: 0, longestMs: 0 };

  constructor(
    routing: ShardRouter | RoutingState,
    stores: readonly LinkShardStore[],
    private readonly options: ShardedLinkRepositoryOptions = {},
  ) {
    for (const s of stores) this.stores.set(s.shardName, s);
    this.clock = options.clock ?? systemClock;
    this.state = routing instanceof RoutingState ? routing : RoutingState.fixed(routing);
    this.check(this.state);
  }

  /** The routing operations start under now. */
  get routing(): RoutingState {
    return this.state;
  }

  /** The ring's router (the ring a move starts from, while one runs). */
  get router(): ShardRouter {
    return this.state.before;
  }

  /**
   * Operations started from now on use `next`; those already running finish under the state they
   * started with (`previous.drained()` tells when). Throws, keeping the current state, when a shard
   * of `next` has no store or cannot take part in a move.
   */
  setRouting(next: RoutingState): RoutingState {
    this.check(next);
    const previous = this.state;
    this.state = next;
    for (const wake of [...this.changeWaiters]) wake();
    return previous;
  }

  attachLease(lease: RoutingLease | null): void {
    this.lease = lease;
  }

  /** The shard that decides for the code now (the old owner while a move copies, the new one once frozen). */
  shardNameFor(code: string): string {
    return authoritative(this.state.route(code));
  }

  storeFor(code: string): LinkShardStore {
    return this.store(this.shardNameFor(code));
  }

  /** The stores of every shard of the current routing (both rings while a move runs). */
  allStores(): readonly LinkShardStore[] {
    return this.state.shards().map((name) => this.store(name));
  }

  /** Every store opened so far, routed to or not (to close them). */
  openedStores(): readonly LinkShardStore[] {
    return [...this.stores.values()];
  }

  async insert(link: Link, options: InsertOptions = {}): Promise<void> {
    await this.write([link.code], options, async (state) => {
      const route = state.route(link.code);
      if (!route.moving) return this.on(route.owner, (s) => s.insert(link));
      // The journal entry commits with the row: the frozen step compares what changed since verify began.
      await this.on(route.from, (s) => movable(s).insertJournaled([link]));
      await this.on(route.to, (s) => movable(s).upsertLink(link));
    });
  }

  /**
   * Groups the links by shard once and inserts each group in statements of at most
   * `rowsPerStatement` (shards in parallel, a shard's statements in order); a moving key is
   * journaled with its row on the old owner, then copied to its new owner. A statement a duplicate refused reports it and stops nothing else.
   */
  async insertInStatements(links: readonly Link[], rowsPerStatement: number): Promise<StatementOutcome[]> {
    return this.write(
      links.map((l) => l.code),
      {},
      async (state) => {
        const groups = new Map<string, { authority: string; copy: string | null; links: Link[] }>();
        for (const link of links) {
          const route = state.route(link.code);
          const authority = route.moving ? route.from : route.owner;
          const copy = route.moving ? route.to : null;
          const key = `${authority}>${copy ?? ''}`;
          const group = groups.get(key) ?? { authority, copy, links: [] };
          group.links.push(link);
          groups.set(key, group);
        }
        const perGroup = await Promise.all(
          [...groups.values()].map(async (g) => {
            const outcomes: StatementOutcome[] = [];
            for (let i = 0; i < g.links.length; i += rowsPerStatement) {
              const statement = g.links.slice(i, i + rowsPerStatement);
              let running: Promise<void> | null = null;
              try {
                await this.on(g.authority, (s) => (running = g.copy ? movable(s).insertJournaled(statement) : s.insertMany(statement)), 'bulk');
                if (g.copy) for (const link of statement) await this.on(g.copy, (s) => movable(s).upsertLink(link));
                outcomes.push({ links: statement, error: null });
              } catch (error) {
                outcomes.push({ links: statement, error, settled: this.ended(running, this.bulkDeadlineMs) });
              }
            }
            return outcomes;
          }),
        );
        return perGroup.flat();
      },
    );
  }

  findByCode(id: ShortUrlIdentifier): Promise<Link | null> {
    return this.find(id, 'single');
  }

  findForRedirect(id: ShortUrlIdentifier, onQuery?: () => void): Promise<Link | null> {
    return this.find(id, 'redirect', onQuery);
  }

  /**
   * A write that fails after its statement was sent may be committed all the same (the deadline
   * stops the waiting, not the statement): its event commits with it, and the outbox relay tells
   * the caches then (docs/design.md, "Edits reach every instance").
   */
  async replace(link: Link, expectedVersion: number): Promise<boolean> {
    return this.write([link.code], {}, async (state) => {
      const route = state.route(link.code);
      if (!route.moving) return this.on(route.owner, (s) => s.replace(link, expectedVersion));
      const replaced = await this.on(route.from, (s) => movable(s).replaceJournaled(link, expectedVersion));
      if (replaced) await this.on(route.to, (s) => movable(s).upsertLink(link));
      return replaced;
    });
  }

  async remove(id: ShortUrlIdentifier, expectedVersion: number, retiredUntil: Date): Promise<boolean> {
    return this.write([id.code], {}, async (state) => {
      const route = state.route(id.code);
      if (!route.moving) return this.on(route.owner, (s) => s.remove(id, expectedVersion, retiredUntil));
      // The copy is deleted by the link's id, which leaves a tombstone a late copy cannot pass.
      const row = await this.on(route.from, (s) => s.findByCode(id));
      if (!row || row.version !== expectedVersion) return false;
      const removed = await this.on(route.from, (s) => movable(s).removeJournaled(id, expectedVersion, retiredUntil));
      if (removed) await this.on(route.to, (s) => movable(s).removeCopy(id, row.id, retiredUntil));
      return removed;
    });
  }

  async retiredUntil(id: ShortUrlIdentifier, now: Date): Promise<Date | null> {
    return this.read((state) => this.on(authoritative(state.route(id.code)), (s) => s.retiredUntil(id, now)));
  }

  /** Counted where the row is authoritative (the old owner while a move runs; see docs/design.md, "Max clicks"). */
  async addClicks(id: ShortUrlIdentifier, linkId: string, delta: number): Promise<number | null> {
    return this.read((state) => this.on(authoritative(state.route(id.code)), (s) => s.addClicks(id, linkId, delta)));
  }

  async clickCount(id: ShortUrlIdentifier, linkId: string): Promise<number | null> {
    return this.read((state) => this.on(authoritative(state.route(id.code)), (s) => s.clickCount(id, linkId)));
  }

  /**
   * The stored links among `ids`, asked of every shard (not only the one the router names): batch
   * creation checks aliases against every shard, so that a code left on another shard (a move
   * under way, a leftover of one) is never created twice (docs/design.md, "Batch creation").
   */
  async findOnEveryShard(ids: readonly ShortUrlIdentifier[]): Promise<Link[]> {
    if (ids.length === 0) return [];
    const found = await this.read((state) => Promise.all(state.shards().map((name) => this.on(name, (s) => s.findMany(ids)))));
    return found.flat();
  }

  /**
   * The link with this id, from every shard's primary key (the first row at or after it, kept when it
   * is that id); while a move runs, the copy of the shard that decides for its code.
   */
  async findById(id: string): Promise<Link | null> {
    if (!/^\d{1,19}$/.test(id)) return null;
    const after = id === '0' ? null : (BigInt(id) - 1n).toString();
    return this.read(async (state) => {
      const found = await Promise.all(state.shards().map((name) => this.on(name, (s) => s.listLinks(after, 1)).then((rows) => ({ name, link: rows[0] }))));
      const held = found.filter((f) => f.link?.id === id);
      return (held.find((f) => authoritative(state.route(f.link!.code)) === f.name) ?? held[0])?.link ?? null;
    });
  }

  /** Retired codes among `ids` on every shard (see findOnEveryShard). */
  async retiredOnEveryShard(ids: readonly ShortUrlIdentifier[], now: Date): Promise<RetiredCode[]> {
    if (ids.length === 0) return [];
    const found = await this.read((state) => Promise.all(state.shards().map((name) => this.on(name, (s) => s.retiredAmong(ids, now)))));
    return found.flat();
  }

  /**
   * A page of a tenant's links over every shard, newest first: each shard answers `limit + 1` rows
   * from its (tenant, created_at, id) index, and the pages are merged in the same order (creation
   * time, then id). The extra row tells whether there is a next page (docs/design.md, "Listing").
   * While a move runs a link is on two shards: each id is listed once, and rows a shard holds
   * without owning them (left over) are skipped.
   */
  async listByTenant(query: LinkListQuery): Promise<Link[]> {
    return this.read(async (state) => {
      const want = query.limit + 1;
      const perShard = await Promise.all(state.shards().map((name) => this.pageOf(name, state, query, want)));
      const byId = new Map<string, Link>();
      for (const link of perShard.flat()) {
        const seen = byId.get(link.id);
        if (!seen || link.version > seen.version) byId.set(link.id, link);
      }
      return [...byId.values()].sort(newestFirst).slice(0, want);
    });
  }

  /** Every shard of the ring (both sides of a move), each code once, only where the shard holds it; a shard that fails fails the call. */
  async crawlableCodes(domain: string, limit: number): Promise<string[]> {
    return this.read(async (state) => {
      const perShard = await Promise.all(
        state.shards().map(async (name) => (await this.on(name, (s) => s.crawlableCodes(domain, limit))).filter((code) => holds(state.route(code), name))),
      );
      return [...new Set(perShard.flat())].sort().slice(0, limit);
    });
  }

  /** The tenant's tags over every shard (a link in a move may be on both sides: each tag once), in order, at most `limit`. */
  async tagsOf(tenantId: string, limit: number): Promise<string[]> {
    return this.read(async (state) => {
      const perShard = await Promise.all(state.shards().map((name) => this.on(name, (s) => s.tagsOf(tenantId, limit))));
      return [...new Set(perShard.flat())].sort().slice(0, limit);
    });
  }

  /**
   * The expiry job, per shard. Shards that take part in a move wait until it is over (expiry would
   * change rows on one side only); the redirect answers 410 from `expiresAt` meanwhile anyway.
   */
  async expireDue(now: Date, limitPerShard: number): Promise<Link[]> {
    return this.read(async (state) => {
      const busy = state.shardsInMove();
      const names = state.shards().filter((n) => !busy.has(n));
      const all = await Promise.all(names.map((name) => this.on(name, (s) => s.expireDue(now, limitPerShard)).catch(() => [] as Link[])));
      return all.flat();
    });
  }

  async purgeExpired(before: Date, limitPerShard: number): Promise<number> {
    return this.read(async (state) => {
      const busy = state.shardsInMove();
      const names = state.shards().filter((n) => !busy.has(n));
      const counts = await Promise.all(names.map((name) => this.on(name, (s) => s.purgeExpired(before, limitPerShard)).catch(() => 0)));
      return counts.reduce((a, b) => a + b, 0);
    });
  }

  async *identifierPages(pageSize: number): AsyncGenerator<ShortUrlIdentifier[]> {
    for (const shard of this.allStores()) {
      let after: string | null = null;
      for (;;) {
        const page = await shard.listIdentifiers(after, pageSize);
        if (page.length === 0) break;
        yield page;
        after = page[page.length - 1].id;
      }
    }
  }

  /**
   * Every link, shard after shard in id order; while a move runs, a row is given only by the shard
   * that decides for its code, so a link held on both sides comes once.
   */
  async *linkPages(pageSize: number): AsyncGenerator<Link[]> {
    const state = this.state;
    for (const name of state.shards()) {
      let after: string | null = null;
      for (;;) {
        const page: Link[] = await this.on(name, (s) => s.listLinks(after, pageSize));
        if (page.length === 0) break;
        after = page[page.length - 1].id;
        const owned = page.filter((link) => authoritative(state.route(link.code)) === name);
        if (owned.length) yield owned;
      }
    }
  }

  /**
   * A health write without a version (docs/design.md, "Trust and safety"), on the shard that owns
   * the code. A moving code is skipped (false): an unjournaled write on one side would make the
   * two copies differ, and the next check writes it again.
   */
  async recordHealth(link: Link, expectedVersion: number): Promise<boolean> {
    return this.read(async (state) => {
      const route = state.route(link.code);
      if (route.moving) return false;
      return this.on(route.owner, (s) => s.recordHealth(link, expectedVersion));
    });
  }

  /** False while the shard fails fast after repeated failures. */
  isAvailable(shard: string): boolean {
    return this.guards.get(shard)?.available ?? true;
  }

  // ----------------------------------------------------------------------------- internals

  private store(name: string): LinkShardStore {
    let store = this.stores.get(name);
    if (!store) {
      store = this.options.resolveStore?.(name) ?? undefined;
      if (!store) throw new Error(`shard "${name}" is on the ring but has no store (not configured here)`);
      this.stores.set(name, store);
    }
    return store;
  }

  private check(state: RoutingState): void {
    for (const name of state.shards()) {
      const store = this.store(name);
      if (state.ring.move && !isMovable(store)) throw new Error(`shard "${name}" cannot take part in a move (its store has no copy operations)`);
    }
  }

  private leaseValid(): boolean {
    return this.lease?.valid() ?? true;
  }

  /** `onQuery` is called when a shard is asked, past its guard (not for a look-up its share or breaker refused). */
  private async find(id: ShortUrlIdentifier, call: GuardedCall, onQuery?: () => void): Promise<Link | null> {
    const ask = (s: LinkShardStore) => (onQuery?.(), s.findByCode(id));
    return this.read(async (state) => {
      const route = state.route(id.code);
      if (!route.moving) {
        const found = await this.on(route.owner, ask, call);
        return found || this.leaseValid() ? found : this.searchOthers(state, route.owner, ask);
      }
      if (route.phase === 'dual_write') return this.on(route.from, ask, call);
      // The new owner first: it has every key copied so far and every write since the move began.
      try {
        const found = await this.on(route.to, ask, call);
        // Frozen: the copy is complete; a key missing there was deleted (after the switch, on the new owner).
        if (found || route.phase === 'frozen') return found;
      } catch (error) {
        if (!(error instanceof DomainError)) throw error; // the new owner is down: the old one still has everything
      }
      return this.on(route.from, ask, call);
    });
  }

  /** Reads run under the state they started with. */
  private async read<T>(op: (state: RoutingState) => Promise<T>): Promise<T> {
    const state = this.state;
    state.enter();
    try {
      return await op(state);
    } finally {
      state.leave();
    }
  }

  /**
   * Writes need a current ring (the lease), and wait while a key they touch is in a frozen move
   * (bounded by `frozenWaitMs`; a relocatable insert fails at once instead).
   */
  private async write<T>(codes: readonly string[], options: InsertOptions, op: (state: RoutingState) => Promise<T>): Promise<T> {
    const deadline = this.clock.now() + (this.options.frozenWaitMs ?? 10_000);
    let waitingSince: number | null = null;
    const waited = () => {
      if (waitingSince === null) return;
      this.frozenWaits.count++;
      this.frozenWaits.longestMs = Math.max(this.frozenWaits.longestMs, this.clock.now() - waitingSince);
      waitingSince = null;
    };
    for (;;) {
      if (!this.leaseValid()) {
        throw new DomainError(ErrorCode.SHARD_UNAVAILABLE, `links cannot be written now: ${this.lease!.describe()}`, {
          retryAfterSeconds: 1,
          reason: 'ring-unknown',
        });
      }
      const state = this.state;
      const frozen = state.phase === 'frozen' ? codes.map((c) => state.route(c)).find((r): r is Extract<Route, { moving: true }> => r.moving) : undefined;
      if (!frozen) {
        waited();
        state.enter();
        try {
          return await op(state);
        } finally {
          state.leave();
        }
      }
      const waitMs = deadline - this.clock.now();
      if (options.relocatable || waitMs <= 0) {
        waited();
        throw new DomainError(ErrorCode.SHARD_UNAVAILABLE, `the link is moving from shard ${frozen.from} to ${frozen.to}; retry in a moment`, {
          shard: frozen.to,
          moving: true,
          retryAfterSeconds: 1,
        });
      }
      waitingSince ??= this.clock.now();
      await this.nextRouting(Math.min(waitMs, 250));
    }
  }

  private nextRouting(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.changeWaiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.changeWaiters.add(wake);
    });
  }

  /** The routing may be out of date (lease expired): ask every other shard for the code (`ask` is find's question). */
  private async searchOthers(state: RoutingState, skip: string, ask: (store: LinkShardStore) => Promise<Link | null>): Promise<Link | null> {
    const names = [...new Set([...state.shards(), ...this.stores.keys()])].filter((n) => n !== skip);
    for (const name of names) {
      const found = await this.on(name, ask).catch(() => null);
      if (found) return found;
    }
    return null;
  }

  /** Up to `want` rows of a tenant's page that `name` holds as owner (or as either side of a move). */
  private async pageOf(name: string, state: RoutingState, query: LinkListQuery, want: number): Promise<Link[]> {
    const kept: Link[] = [];
    let after = query.after;
    for (let round = 0; round < 10 && kept.length < want; round++) {
      const page = await this.on(name, (s) => s.listByTenant({ ...query, after, limit: want }));
      kept.push(...page.filter((l) => holds(state.route(l.code), name)));
      if (page.length < want) break;
      const last = page[page.length - 1];
      after = { createdAt: last.createdAt, id: last.id };
    }
    return kept.slice(0, want);
  }

  /**
   * When a statement the guard gave up on has ended on its shard: its deadline does not stop it
   * there (docs/design.md, "Batch creation"). Waited for one more deadline (`waitMs`) at most; a
   * statement that never started (the breaker was open) has ended.
   */
  private ended(running: Promise<unknown> | null, waitMs: number): Promise<boolean> {
    if (running === null) return Promise.resolve(true);
    const done = (running as Promise<unknown>).then(
      () => true,
      () => true,
    );
    if (waitMs <= 0) return done;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), waitMs);
      timer.unref?.();
    });
    return Promise.race([done, late]).finally(() => clearTimeout(timer));
  }

  private get bulkDeadlineMs(): number {
    return this.options.bulkTimeoutMs ?? (this.options.timeoutMs ?? 0) * 10;
  }

  /** An operation on one shard, through that shard's guard. */
  private on<T>(name: string, op: (store: LinkShardStore) => Promise<T>, call: GuardedCall = 'single'): Promise<T> {
    const store = this.store(name);
    let guard = this.guards.get(name);
    if (!guard) {
      const timeoutMs = this.options.timeoutMs ?? 0;
      guard = new ShardGuard(name, {
        timeoutMs,
        bulkTimeoutMs: this.options.bulkTimeoutMs ?? timeoutMs * 10,
        failures: this.options.breakerFailures ?? 5,
        openMs: this.options.breakerOpenMs ?? 1000,
        redirectLookups: this.options.redirectLookupsPerShard ?? null,
        redirectLookupQueue: this.options.redirectLookupQueue ?? { max: 0, waitMs: 0 },
      });
      this.guards.set(name, guard);
    }
    return guard.run(() => op(store), call);
  }
}

/** The shard whose answer counts for a code: the old owner until the move freezes, then the new one. */
function authoritative(route: Route): string {
  if (!route.moving) return route.owner;
  return route.phase === 'frozen' ? route.to : route.from;
}

function holds(route: Route, shard: string): boolean {
  return route.moving ? shard === route.from || shard === route.to : shard === route.owner;
}

function movable(store: LinkShardStore): MovableShardStore {
  if (!isMovable(store)) throw new Error(`shard "${store.shardName}" cannot take part in a move`);
  return store;
}
