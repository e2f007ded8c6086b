import { Clock, systemClock } from '@shortlink/core';
import { RingStore } from './ports';
import { RingSpec } from './ring';
import { RoutingLease, RoutingState, RoutingTarget } from './routing-state';

export interface RingWatcherOptions {
  /** Names this instance in the ring store (unique per process). */
  readonly instanceId: string;
  readonly app: string;
  /** How often the ring store is read: a new version is routed with at most this much later (plus one read). */
  readonly pollMs: number;
  /**
   * How often it is read while a move is under way (`pollMs` when absent): the frozen step holds
   * the writes of moving links until every instance has read two versions, so that hold lasts
   * about two of these (docs/design.md, "Online resharding").
   */
  readonly movePollMs?: number;
  /** Writes stop when the ring could not be read for this long (docs/design.md, "Online resharding"). */
  readonly leaseMs: number;
  /** Longest wait for the operations of the previous version before the new one is reported anyway. */
  readonly drainTimeoutMs?: number;
  /** Written as version 1 when the store has no ring yet (the configured shards). */
  readonly bootstrap: RingSpec;
  readonly log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  readonly clock?: Clock;
}

export interface RingWatcherStatus {
  readonly version: number;
  readonly phase: string;
  readonly shards: readonly string[];
  readonly moveTo: readonly string[] | null;
  readonly lastReadAgeMs: number | null;
  readonly leaseValid: boolean;
  readonly lastError: string | null;
  /** A newer version this instance could not route with (e.g. a shard it has no address for). */
  readonly refused: { readonly version: number; readonly reason: string } | null;
}

/**
 * Keeps a repository's routing equal to the newest ring version in the meta database: reads it
 * every `pollMs`, swaps the RoutingState, waits until no operation of the old state runs, then
 * reports the version (the resharding tool waits for every live instance's report before its next
 * step). Each successful read renews a lease of `leaseMs`; without it the repository refuses
 * writes, since a move may have started unseen (docs/design.md, "Online resharding").
 */
export class RingWatcher implements RoutingLease {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;
  private lastReadAt: number | null = null;
  private lastError: string | null = null;
  private refused: { version: number; reason: string } | null = null;
  private readonly clock: Clock;
  private readonly log: NonNullable<RingWatcherOptions['log']>;

  constructor(
    private readonly store: RingStore,
    private readonly repository: RoutingTarget,
    private readonly options: RingWatcherOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? (() => undefined);
    repository.attachLease(this);
  }

  /**
   * First read (waited for at most `firstReadTimeoutMs`: a meta database that is down does not stop
   * the boot), then every `pollMs`, or every `movePollMs` while the ring it routes with has a move.
   */
  async start(firstReadTimeoutMs = 3000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.poll(), new Promise<void>((r) => (timer = setTimeout(r, firstReadTimeoutMs)))]);
    clearTimeout(timer);
    this.schedule();
  }

  /** How long until the next read: shorter while a move is under way. */
  nextPollMs(): number {
    const moving = this.repository.routing.ring.move !== null;
    return moving ? (this.options.movePollMs ?? this.options.pollMs) : this.options.pollMs;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.poll().finally(() => this.schedule()), this.nextPollMs());
    this.timer.unref?.();
  }

  /** One read of the ring store (skipped while the previous one still runs). */
  poll(): Promise<void> {
    this.running ??= this.readOnce().finally(() => (this.running = null));
    return this.running;
  }

  valid(): boolean {
    return this.lastReadAt !== null && this.clock.now() - this.lastReadAt < this.options.leaseMs;
  }

  describe(): string {
    const age = this.lastReadAt === null ? 'since this instance started' : `for ${Math.round((this.clock.now() - this.lastReadAt) / 1000)} s`;
    return `the shard ring could not be read ${age}${this.lastError ? ` (${this.lastError})` : ''}`;
  }

  get version(): number {
    return this.repository.routing.version;
  }

  status(): RingWatcherStatus {
    const state = this.repository.routing;
    return {
      version: state.version,
      phase: state.phase ?? 'stable',
      shards: state.ring.spec.shards.map((s) => s.name),
      moveTo: state.ring.move ? state.ring.move.to.shards.map((s) => s.name) : null,
      lastReadAgeMs: this.lastReadAt === null ? null : this.clock.now() - this.lastReadAt,
      leaseValid: this.valid(),
      lastError: this.lastError,
      refused: this.refused,
    };
  }

  /** Stops reading and tells the store this instance is gone, so that nobody waits for it. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
    await this.store.forget(this.options.instanceId).catch(() => undefined);
  }

  private async readOnce(): Promise<void> {
    // The lease counts from before the read: the version read was current at least then.
    const startedAt = this.clock.now();
    try {
      let ring = await this.store.current();
      if (!ring) {
        await this.store.publish({ version: 1, spec: this.options.bootstrap, move: null }, null);
        ring = await this.store.current();
      }
      if (ring && ring.version !== this.repository.routing.version && ring.version !== this.refused?.version) {
        await this.apply(ring.version, () => new RoutingState(ring!));
      }
      await this.store.heartbeat(this.options.instanceId, this.options.app, this.repository.routing.version);
      this.lastReadAt = startedAt;
      if (this.lastError) this.log('info', 'shard ring readable again');
      this.lastError = null;
    } catch (error) {
      if (this.lastError === null) this.log('warn', `reading the shard ring failed: ${(error as Error).message}`);
      this.lastError = (error as Error).message;
    }
  }

  private async apply(version: number, build: () => RoutingState): Promise<void> {
    let previous: RoutingState;
    try {
      previous = this.repository.setRouting(build());
    } catch (error) {
      this.refused = { version, reason: (error as Error).message };
      this.log('error', `cannot route with shard ring version ${version}: ${(error as Error).message}; staying on version ${this.repository.routing.version}`);
      return;
    }
    this.refused = null;
    const state = this.repository.routing;
    this.log('info', `routing with shard ring version ${version} (${state.phase ?? 'stable'}: ${state.shards().join(' ')})`);
    if (!(await previous.drained(this.options.drainTimeoutMs ?? 5000))) {
      this.log(
        'warn',
        `${previous.inFlight} operations of ring version ${previous.version} still running after ${this.options.drainTimeoutMs ?? 5000} ms; reporting version ${version} anyway`,
      );
    }
  }
}
