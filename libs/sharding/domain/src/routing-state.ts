import { ShardRouter } from '@shortlink/shard-router';
import { MovePhase, RingSpec, RingVersion, routerOf, shardsOf } from './ring';

/** Whether the routing an instance holds is known to be current (the ring watcher's lease). */
export interface RoutingLease {
  valid(): boolean;
  /** Why not, for the error a refused write carries. */
  describe(): string;
}

/** What a ring watcher keeps current: the routing of a repository, and the lease its writes need. */
export interface RoutingTarget {
  /** The routing operations start under now. */
  readonly routing: RoutingState;
  /**
   * Operations started from now on use `next`; those already running finish under the state they
   * started with (`previous.drained()` tells when). Throws, keeping the current state, when `next`
   * cannot be routed with here (a shard without a store).
   */
  setRouting(next: RoutingState): RoutingState;
  attachLease(lease: RoutingLease | null): void;
}

/** Where a code lives under one routing state. */
export type Route =
  { readonly moving: false; readonly owner: string } | { readonly moving: true; readonly from: string; readonly to: string; readonly phase: MovePhase };

/**
 * The routing an operation runs under: the ring of one version and, while a move runs, the ring it
 * leads to (docs/design.md, "Online resharding"). Immutable; the apps swap the whole state when the
 * version in the meta database changes. Each operation counts itself in while it runs, so that a
 * watcher can wait until no operation of an older state is left before it reports the new version.
 */
export class RoutingState {
  readonly before: ShardRouter;
  readonly after: ShardRouter | null;
  private running = 0;
  private idle: Array<() => void> = [];

  constructor(readonly ring: RingVersion) {
    this.before = routerOf(ring.spec);
    this.after = ring.move ? routerOf(ring.move.to) : null;
  }

  /** A state of a fixed router (version 0): a repository built without a ring store. */
  static fixed(router: ShardRouter, virtualNodes?: number): RoutingState {
    const spec: RingSpec = { strategy: router.strategy, virtualNodes: virtualNodes ?? 150, shards: router.shards().map((name) => ({ name })) };
    const state = new RoutingState({ version: 0, spec, move: null });
    (state as { before: ShardRouter }).before = router;
    return state;
  }

  get version(): number {
    return this.ring.version;
  }

  get phase(): MovePhase | null {
    return this.ring.move?.phase ?? null;
  }

  route(code: string): Route {
    const from = this.before.shardFor(code);
    if (!this.after) return { moving: false, owner: from };
    const to = this.after.shardFor(code);
    return from === to ? { moving: false, owner: from } : { moving: true, from, to, phase: this.ring.move!.phase };
  }

  /** Shards of the ring and of the ring a move leads to. */
  shards(): string[] {
    return this.after ? shardsOf(this.ring) : [...this.before.shards()];
  }

  /**
   * Shards that take part in the move: keys leave every shard of a ring when one joins (and jump
   * hash or a weight change moves keys between shards that stay), so this is every shard of both.
   */
  shardsInMove(): Set<string> {
    return this.ring.move ? new Set(shardsOf(this.ring)) : new Set();
  }

  enter(): void {
    this.running++;
  }

  leave(): void {
    if (--this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  /** Operations started under this state that have not finished. */
  get inFlight(): number {
    return this.running;
  }

  /** Resolves true once no operation of this state is running, false after `timeoutMs`. */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.running === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.idle = this.idle.filter((f) => f !== done);
        resolve(false);
      }, timeoutMs);
      timer.unref?.();
      this.idle.push(done);
    });
  }
}
