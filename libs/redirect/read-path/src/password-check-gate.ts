import { KeyedWindowLimiter } from '@shortlink/core';

export interface PasswordCheckGateOptions {
  /** Password checks (argon2, each ~50 ms of a thread-pool thread) running at once in this instance. */
  readonly concurrency: number;
  /** Checks one visitor (client address) may have run per minute in this instance, right and wrong passwords alike; 0: no limit. */
  readonly perVisitorPerMinute: number;
  /** Checks of one tenant's links waiting for a slot at most; beyond, refused at once (default: 4 × concurrency). */
  readonly waitingPerTenant?: number;
  /** Longest a check waits for a slot before it is refused (default 2000 ms). */
  readonly maxWaitMs?: number;
}

/** A slot to check a password in, to be handed back with `done()`, or why there is none. */
export type CheckSlot =
  { readonly allowed: true; done(): void } | { readonly allowed: false; readonly reason: 'visitor' | 'busy'; readonly retryAfterSeconds: number };

interface Waiter {
  readonly grant: (slot: CheckSlot) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * The instance's budget of password checks, shared fairly (docs/design.md, "Link options"): each
 * visitor has a per-minute budget that right passwords spend as well as wrong ones, and when every
 * slot is busy the waiting checks are served round-robin by tenant, so one client hammering its
 * own link (or one tenant's crowd) delays others by about one check at most and cannot starve them.
 * Runs in the event loop; the checks themselves stay on the thread pool.
 */
export class PasswordCheckGate {
  private running = 0;
  /** Waiting checks per tenant; the Map's order is the round-robin order (a tenant served moves to the end). */
  private readonly waiting = new Map<string, Waiter[]>();
  private readonly visitors: KeyedWindowLimiter;
  private readonly waitingPerTenant: number;
  private readonly maxWaitMs: number;

  constructor(private readonly options: PasswordCheckGateOptions) {
    this.visitors = new KeyedWindowLimiter({ limit: options.perVisitorPerMinute, windowMs: 60_000 });
    this.waitingPerTenant = options.waitingPerTenant ?? options.concurrency * 4;
    this.maxWaitMs = options.maxWaitMs ?? 2000;
  }

  /** A slot for one check of a link of `tenantId` by `visitor`: at once, after a fair wait, or refused. */
  acquire(tenantId: string, visitor: string, now = Date.now()): Promise<CheckSlot> {
    const budget = this.visitors.hit(visitor, now);
    if (!budget.allowed) return Promise.resolve({ allowed: false, reason: 'visitor', retryAfterSeconds: budget.retryAfterSeconds });
    if (this.running < this.options.concurrency && this.waiting.size === 0) return Promise.resolve(this.slot());
    const queue = this.waiting.get(tenantId) ?? [];
    if (queue.length >= this.waitingPerTenant) return Promise.resolve(BUSY);
    return new Promise<CheckSlot>((grant) => {
      const waiter: Waiter = {
        grant,
        timer: setTimeout(() => {
          const q = this.waiting.get(tenantId);
          const i = q?.indexOf(waiter) ?? -1;
          if (i >= 0) q!.splice(i, 1);
          if (q?.length === 0) this.waiting.delete(tenantId);
          grant(BUSY);
        }, this.maxWaitMs),
      };
      queue.push(waiter);
      this.waiting.set(tenantId, queue);
    });
  }

  /** Checks running now and waiting, for metrics and tests. */
  get usage(): { running: number; waiting: number } {
    let waiting = 0;
    for (const q of this.waiting.values()) waiting += q.length;
    return { running: this.running, waiting };
  }

  private slot(): CheckSlot {
    this.running++;
    let released = false;
    return {
      allowed: true,
      done: () => {
        if (released) return;
        released = true;
        this.running--;
        this.next();
      },
    };
  }

  /** Hands a free slot to the first waiting check of the tenant whose turn it is. */
  private next(): void {
    while (this.running < this.options.concurrency && this.waiting.size > 0) {
      const [tenantId, queue] = this.waiting.entries().next().value as [string, Waiter[]];
      this.waiting.delete(tenantId);
      const waiter = queue.shift()!;
      if (queue.length > 0) this.waiting.set(tenantId, queue); // to the end of the round
      clearTimeout(waiter.timer);
      waiter.grant(this.slot());
    }
  }
}

const BUSY: CheckSlot = { allowed: false, reason: 'busy', retryAfterSeconds: 1 };
