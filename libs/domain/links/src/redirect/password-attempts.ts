import { ALLOW, KeyedWindowLimiter, RateDecision } from '@shortlink/core';
import { CacheStore } from '../ports';

export interface PasswordAttemptOptions {
  /** Wrong passwords allowed per visitor and link within the window. */
  readonly attempts: number;
  readonly windowMs: number;
}

/**
 * Wrong passwords per visitor (client address) and link (docs/design.md, "Link options"). Counted
 * in the shared cache, so a guesser spreading attempts over instances gets no more of them, and
 * in this process as well, so the limit still holds while the shared cache is unreachable. The
 * shared window starts at the visitor's first wrong password (the local one is a fixed window);
 * until it ends, the visitor gets 429 on that link before any password is checked.
 */
export class PasswordAttempts {
  private readonly local: KeyedWindowLimiter;

  constructor(
    private readonly store: CacheStore,
    private readonly options: PasswordAttemptOptions,
  ) {
    this.local = new KeyedWindowLimiter({ limit: options.attempts, windowMs: options.windowMs });
  }

  /** Whether the visitor may try a password on the link now. */
  async check(linkId: string, address: string, now = Date.now()): Promise<RateDecision> {
    const local = this.local.check(keyOf(linkId, address), now);
    if (!local.allowed) return local;
    try {
      const key = sharedKey(linkId, address);
      const failures = Number((await this.store.get(key)) ?? 0);
      if (failures < this.options.attempts) return ALLOW;
      const left = await this.store.pttl(key);
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((left > 0 ? left : this.options.windowMs) / 1000)) };
    } catch {
      return ALLOW; // the local count still applies
    }
  }

  /** A wrong password: counted here and in the shared cache. */
  async failed(linkId: string, address: string, now = Date.now()): Promise<void> {
    this.local.hit(keyOf(linkId, address), now);
    await this.store.incrBy(sharedKey(linkId, address), 1, this.options.windowMs).catch(() => undefined);
  }
}

const keyOf = (linkId: string, address: string) => `${linkId}\u0000${address}`;
const sharedKey = (linkId: string, address: string) => `shortlink:password-failures:${linkId}:${address}`;
