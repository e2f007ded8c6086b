import { randomUUID } from 'crypto';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { Plan } from './tenant';

/**
 * Leased slots shared by every instance (Redis on the real stack, in-process on the embedded
 * profile): at most `limit` holders per key, each slot lapsing `leaseMs` after it was taken or last
 * renewed, so an instance that dies frees its slots within a lease.
 */
export interface SlotStore {
  /** Takes a slot of `key` for `holder` unless `limit` others hold one; true when taken (or already held). */
  acquire(key: string, holder: string, limit: number, leaseMs: number): Promise<boolean>;
  /** Extends the holder's slot by `leaseMs` from now (takes it again if it lapsed meanwhile). */
  renew(key: string, holder: string, leaseMs: number): Promise<void>;
  release(key: string, holder: string): Promise<void>;
}

export const SLOT_STORE = Symbol('SLOT_STORE');

/** Slots in this process: the embedded profile's store, and every instance's own count. */
export class LocalSlots implements SlotStore {
  private readonly slots = new Map<string, Map<string, number>>();

  constructor(private readonly clock: Clock = systemClock) {}

  async acquire(key: string, holder: string, limit: number, leaseMs: number): Promise<boolean> {
    const held = this.live(key);
    if (!held.has(holder) && held.size >= limit) return false;
    held.set(holder, this.clock.now() + leaseMs);
    this.slots.set(key, held);
    return true;
  }

  async renew(key: string, holder: string, leaseMs: number): Promise<void> {
    const held = this.live(key);
    held.set(holder, this.clock.now() + leaseMs);
    this.slots.set(key, held);
  }

  async release(key: string, holder: string): Promise<void> {
    const held = this.slots.get(key);
    held?.delete(holder);
    if (held?.size === 0) this.slots.delete(key);
  }

  /** The key's slots that have not lapsed (lapsed ones are dropped). */
  private live(key: string): Map<string, number> {
    const held = this.slots.get(key) ?? new Map<string, number>();
    const now = this.clock.now();
    for (const [holder, until] of held) if (until <= now) held.delete(holder);
    return held;
  }
}

/** A running batch's slot: released once, when the batch's answer has ended (or failed). */
export interface HeldSlot {
  release(): void;
}

export interface BatchSlotOptions {
  /** A slot lapses this long after its last renewal (BATCH_LEASE_MS); renewed every third of it. */
  readonly leaseMs: number;
  /** Told when the shared store fails (true) and when it answers again (false). */
  readonly onFallback?: (down: boolean, error?: unknown) => void;
}

/**
 * Batches a tenant runs at once, per plan (docs/design.md, "Tenants, keys and plans"): a slot is
 * taken before a batch starts and held while its answer streams, so trickling batch requests
 * cannot pile up. Every instance counts its own batches as well: while the shared store fails,
 * each instance admits up to the limit on its own (limits loosen by the number of instances, as the
 * plan windows do), and a slot taken there is renewed and released there.
 */
export class BatchSlots {
  private readonly local: LocalSlots;
  private sharedDown = false;

  constructor(
    private readonly shared: SlotStore,
    private readonly plans: Readonly<Record<Plan, { readonly concurrentBatches: number }>>,
    private readonly options: BatchSlotOptions,
    clock: Clock = systemClock,
  ) {
    this.local = new LocalSlots(clock);
  }

  /** A slot for one batch of the tenant, or 429 BATCH_CONCURRENCY_LIMIT when its plan's are all taken. */
  async acquire(tenantId: string, plan: Plan): Promise<HeldSlot> {
    const limit = this.plans[plan].concurrentBatches;
    const key = `slots:batch:${tenantId}`;
    const holder = randomUUID();
    const { leaseMs } = this.options;
    const refusal = () =>
      new DomainError(ErrorCode.BATCH_CONCURRENCY_LIMIT, `the ${plan} plan runs ${limit} batch requests at once per tenant; retry when one has finished`, {
        limit,
        retryAfterSeconds: Math.max(1, Math.ceil(leaseMs / 1000)),
      });
    if (!(await this.local.acquire(key, holder, limit, leaseMs))) throw refusal();
    const stores: SlotStore[] = [this.local];
    try {
      const taken = await this.shared.acquire(key, holder, limit, leaseMs);
      this.sharedAnswered();
      if (!taken) {
        await this.local.release(key, holder);
        throw refusal();
      }
      stores.push(this.shared);
    } catch (error) {
      if (error instanceof DomainError) throw error;
      this.sharedFailed(error);
    }
    const renew = setInterval(() => stores.forEach((s) => s.renew(key, holder, leaseMs).catch(() => undefined)), Math.max(1, Math.floor(leaseMs / 3)));
    renew.unref?.();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        clearInterval(renew);
        for (const s of stores) s.release(key, holder).catch(() => undefined);
      },
    };
  }

  private sharedAnswered(): void {
    if (!this.sharedDown) return;
    this.sharedDown = false;
    this.options.onFallback?.(false);
  }

  private sharedFailed(error: unknown): void {
    if (this.sharedDown) return;
    this.sharedDown = true;
    this.options.onFallback?.(true, error);
  }
}
