import { KeyedWindowLimiter } from '@shortlink/core';
import { CacheKeys } from './cache-keys';
import { CacheStore } from './ports';

export interface PasswordAttemptOptions {
  /** Passwords a visitor may have checked per link within the window, beyond those accepted. */
  readonly attempts: number;
  readonly windowMs: number;
}

/** One attempt taken from the visitor's budget before its password is checked. */
export type AttemptReservation =
  | {
      readonly allowed: true;
      /** The password was right: the attempt goes back (only wrong ones use the budget up). */
      giveBack(): Promise<void>;
    }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

/**
 * Password attempts per visitor (client address) and link (docs/design.md, "Link options"). An
 * attempt is reserved before the password is evaluated, in one atomic step per counter, so that
 * guesses in flight count: of any number of concurrent posts, at most `attempts` are evaluated.
 * A wrong password keeps its reservation; a right one gives it back.
 *
 * Counted in the shared cache (one INCRBY with an expiry set on the first attempt), so a guesser
 * spreading attempts over instances gets no more of them, and in this process as well, so the
 * limit still holds while the shared cache is unreachable. The shared window starts at the
 * visitor's first counted attempt (the local one is a fixed window).
 */
export class PasswordAttempts {
  private readonly local: KeyedWindowLimiter;

  constructor(
    private readonly store: CacheStore,
    private readonly options: PasswordAttemptOptions,
  ) {
    this.local = new KeyedWindowLimiter({ limit: options.attempts, windowMs: options.windowMs });
  }

  /** Takes one attempt of the visitor on the link, or says how long until there is one again. */
  async reserve(linkId: string, address: string, now = Date.now()): Promise<AttemptReservation> {
    const localKey = `${linkId}\u0000${address}`;
    const local = this.local.hit(localKey, now);
    if (!local.allowed) return { allowed: false, retryAfterSeconds: local.retryAfterSeconds };
    const key = CacheKeys.passwordAttempts(linkId, address);
    let counted: boolean;
    try {
      const count = await this.store.incrBy(key, 1, this.options.windowMs);
      if (count > this.options.attempts) {
        // Not evaluated: only the local count is taken back (the shared one is past the limit anyway and expires with its window).
        this.local.giveBack(localKey, now);
        const left = await this.store.pttl(key).catch(() => -2);
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((left > 0 ? left : this.options.windowMs) / 1000)) };
      }
      counted = true;
    } catch {
      counted = false; // the shared cache is unreachable: the local count still applies
    }
    return {
      allowed: true,
      giveBack: async () => {
        this.local.giveBack(localKey);
        if (counted) await this.store.incrBy(key, -1, this.options.windowMs).catch(() => undefined);
      },
    };
  }
}
