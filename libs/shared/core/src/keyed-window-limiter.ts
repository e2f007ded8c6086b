import { BoundedLru, boundedLru } from './bounded-lru';

export interface RateDecision {
  readonly allowed: boolean;
  readonly retryAfterSeconds: number;
}

export const ALLOW: RateDecision = { allowed: true, retryAfterSeconds: 0 };

export interface KeyedWindowLimiterOptions {
  /** Events allowed per key and window; 0 turns the limiter off. */
  readonly limit: number;
  readonly windowMs: number;
  /** Keys tracked at most; the least recently seen go first. */
  readonly maxKeys?: number;
  /** Memory for keys and counters at most (a key's UTF-16 bytes plus a fixed overhead). */
  readonly maxBytes?: number;
}

/** Bytes an entry is charged beyond its key: the counter object and the LRU's bookkeeping. */
const ENTRY_OVERHEAD_BYTES = 96;

/**
 * Fixed-window counter per key (a client address, a key prefix), bounded by entries and by bytes
 * so that many or long keys cannot exhaust memory; the least recently seen keys are forgotten
 * first (an attacker rotating keys only forgets its own counts).
 */
export class KeyedWindowLimiter {
  private readonly windows: BoundedLru<string, { window: number; count: number }>;

  constructor(private readonly options: KeyedWindowLimiterOptions) {
    this.windows = boundedLru({
      maxEntries: options.maxKeys ?? 100_000,
      maxBytes: options.maxBytes ?? 16 * 1024 * 1024,
      sizeOf: (_value, key) => key.length * 2 + ENTRY_OVERHEAD_BYTES,
    });
  }

  /** Counts one event for the key and says whether it is within the limit (the limiter's, or one per key, e.g. a link's own). */
  hit(key: string, now = Date.now(), limit = this.options.limit): RateDecision {
    if (limit <= 0) return ALLOW;
    const window = Math.floor(now / this.options.windowMs);
    const entry = this.windows.get(key);
    if (!entry || entry.window !== window) {
      this.windows.set(key, { window, count: 1 });
      return ALLOW;
    }
    entry.count++;
    return entry.count <= limit ? ALLOW : this.refusal(window, now);
  }

  /** Takes back one event `hit` counted in this window (a reservation that turned out not to count); nothing after the window turned. */
  giveBack(key: string, now = Date.now()): void {
    const entry = this.windows.peek(key);
    if (entry && entry.window === Math.floor(now / this.options.windowMs) && entry.count > 0) entry.count--;
  }

  /** Whether the key is already over the limit in this window, without counting. */
  check(key: string, now = Date.now(), limit = this.options.limit): RateDecision {
    if (limit <= 0) return ALLOW;
    const window = Math.floor(now / this.options.windowMs);
    const entry = this.windows.peek(key);
    return entry && entry.window === window && entry.count >= limit ? this.refusal(window, now) : ALLOW;
  }

  /** Keys tracked and the bytes charged for them. */
  get usage(): { keys: number; bytes: number } {
    return { keys: this.windows.size, bytes: this.windows.countedBytes };
  }

  private refusal(window: number, now: number): RateDecision {
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(((window + 1) * this.options.windowMs - now) / 1000)) };
  }
}
