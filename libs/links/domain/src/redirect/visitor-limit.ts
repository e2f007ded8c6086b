import type { LRUCache } from 'lru-cache';
import { boundedLru, ALLOW, Clock, RateDecision, systemClock } from '@shortlink/core';

/** The window of the per-link visitor limit (`clicksPerIpPerMinute`). */
export const VISITOR_WINDOW_MS = 60_000;

export interface VisitorWindowHit {
  readonly allowed: boolean;
  /** The visitor's redirects of the link counted in this window, this one included when it was counted. */
  readonly count: number;
  /** Until the window ends (when a refused visitor may come back). */
  readonly waitMs: number;
}

/**
 * Fixed windows per (link, client address) that every redirect instance shares (Redis on the real
 * stack, in-process on the embedded profile): docs/design.md, "Link options". A window is
 * `floor(now / windowMs)`, so every instance cuts the same windows.
 */
export interface VisitorWindowStore {
  /**
   * Whether the visitor may have one more redirect of the link in the current window (fewer than
   * `limit` counted so far), and, when it may and `counts` (a GET), counts it, in one atomic step.
   * A refused hit is not counted. `counts` false (a HEAD) only looks.
   */
  hit(linkId: string, address: string, limit: number, windowMs: number, counts: boolean): Promise<VisitorWindowHit>;
}

export const VISITOR_WINDOW_STORE = Symbol('VISITOR_WINDOW_STORE');

/** The decision on one window's count; the Redis script does the same arithmetic in Lua (the contract suite holds both to it). */
export function visitorWindowHit(counted: number, limit: number, now: number, windowMs: number, counts: boolean): VisitorWindowHit {
  const waitMs = (Math.floor(now / windowMs) + 1) * windowMs - now;
  if (counted >= limit) return { allowed: false, count: counted, waitMs };
  return { allowed: true, count: counts ? counted + 1 : counted, waitMs };
}

/** The windows in this process: the embedded profile's store (one process serves every request). */
export class LocalVisitorWindows implements VisitorWindowStore {
  private readonly windows: LRUCache<string, { window: number; count: number }>;

  constructor(
    private readonly clock: Clock = systemClock,
    /** (link, address) pairs tracked at most; the least recently seen are forgotten first. */
    maxKeys = 100_000,
  ) {
    this.windows = boundedLru({ maxEntries: maxKeys });
  }

  async hit(linkId: string, address: string, limit: number, windowMs: number, counts: boolean): Promise<VisitorWindowHit> {
    const now = this.clock.now();
    const window = Math.floor(now / windowMs);
    const key = `${linkId}\u0000${address}`;
    const entry = this.windows.get(key);
    const hit = visitorWindowHit(entry !== undefined && entry.window === window ? entry.count : 0, limit, now, windowMs, counts);
    if (hit.allowed && counts) this.windows.set(key, { window, count: hit.count });
    return hit;
  }
}

export interface SharedVisitorLimitOptions {
  /** After the shared store failed, how long only the in-process window decides before the store is asked again. */
  readonly retryAfterFailureMs?: number;
  /** Called when the shared store fails (true) and when it answers again (false). */
  readonly onFallback?: (down: boolean, error?: unknown) => void;
}

/**
 * The per-link visitor limit across instances (docs/design.md, "Link options"). `LinkRules` counts
 * each visitor in this process first (a fixed window of its own; it refuses without a round trip,
 * and it is the whole limit while the shared store is unreachable); a redirect it allowed is then
 * counted here, in the window every instance shares, before a click is taken from maxClicks. A
 * store that fails or does not answer lets the request through (the in-process count stands) and
 * is left alone for `retryAfterFailureMs`, so a Redis outage costs no wait per request.
 */
export class SharedVisitorLimit {
  private downUntil = 0;
  private down = false;

  constructor(
    private readonly store: VisitorWindowStore,
    private readonly options: SharedVisitorLimitOptions = {},
    private readonly clock: Clock = systemClock,
  ) {}

  async admit(linkId: string, address: string, limit: number, counts: boolean): Promise<RateDecision> {
    if (this.down && this.clock.now() < this.downUntil) return ALLOW;
    try {
      const hit = await this.store.hit(linkId, address, limit, VISITOR_WINDOW_MS, counts);
      if (this.down) {
        this.down = false;
        this.options.onFallback?.(false);
      }
      return hit.allowed ? ALLOW : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(hit.waitMs / 1000)) };
    } catch (error) {
      if (!this.down) this.options.onFallback?.(true, error);
      this.down = true;
      this.downUntil = this.clock.now() + (this.options.retryAfterFailureMs ?? 1000);
      return ALLOW;
    }
  }
}
