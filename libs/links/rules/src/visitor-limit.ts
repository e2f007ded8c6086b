import type { LRUCache } from 'lru-cache';
import { ALLOW, boundedLru, Clock, RateDecision, systemClock } from '@shortlink/core';

/** The window of the per-link visitor limit (`clicksPerIpPerMinute`). */
export const VISITOR_WINDOW_MS = 60_000;

/** Redirects of one visitor (client address) of one link, counted by one instance in one window, to be added to the shared count. */
export interface VisitorWindowCount {
  readonly linkId: string;
  readonly address: string;
  /** `floor(time / windowMs)`. */
  readonly window: number;
  /** Counted since this instance last added to the window (0: only reads the total). */
  readonly delta: number;
}

/**
 * The windows every redirect instance shares (Redis on the real stack, in-process on the embedded
 * profile): one counter per (link, client address, window), gone when its window is over.
 */
export interface VisitorWindowStore {
  /**
   * Adds each count to its window's counter and answers each counter's total after it, in the
   * order given. A window that is already over is neither counted nor read (its total is 0).
   */
  add(counts: readonly VisitorWindowCount[], windowMs: number): Promise<number[]>;
}

export const VISITOR_WINDOW_STORE = Symbol('VISITOR_WINDOW_STORE');

/** The windows in this process: the embedded profile's store (one process serves every request). */
export class LocalVisitorWindows implements VisitorWindowStore {
  private readonly windows: LRUCache<string, number>;

  constructor(
    private readonly clock: Clock = systemClock,
    /** (link, address, window) counters kept at most; the least recently used are forgotten first. */
    maxKeys = 100_000,
  ) {
    this.windows = boundedLru({ maxEntries: maxKeys });
  }

  async add(counts: readonly VisitorWindowCount[], windowMs: number): Promise<number[]> {
    const current = Math.floor(this.clock.now() / windowMs);
    return counts.map(({ linkId, address, window, delta }) => {
      if (window < current) return 0;
      const key = `${linkId}\u0000${address}\u0000${window}`;
      const count = (this.windows.get(key) ?? 0) + delta;
      if (delta > 0) this.windows.set(key, count);
      return count;
    });
  }
}

/** One visitor of one link, as this instance knows it in the current window. */
interface Seen {
  readonly linkId: string;
  readonly address: string;
  window: number;
  /** The shared total as last read (this instance's counts that reached the store included). */
  shared: number;
  /** Counted here and not yet sent. */
  unsent: number;
  /** Sent, not yet answered. */
  sending: number;
  /** In the list of the next merge. */
  dirty: boolean;
}

export interface VisitorLimitOptions {
  /** How often this instance's counts are added to the shared windows and the totals read back (100 ms). */
  readonly syncIntervalMs?: number;
  /** (link, address) pairs tracked at most; the least recently seen are forgotten first. */
  readonly maxKeys?: number;
  /** Called when the shared store fails (true) and when it answers again (false). */
  readonly onFallback?: (down: boolean, error?: unknown) => void;
}

/**
 * The per-link visitor limit (`clicksPerIpPerMinute`) across instances, without a round trip per
 * request (docs/design.md, "Link options"): each instance counts a visitor's redirects of a link in
 * a fixed window of its own and decides on its own count plus the shared total it last read; every
 * `syncIntervalMs` it adds what it counted to the window every instance shares and reads the total
 * back, for the visitors it counted. An instance thus learns the others' counts of a visitor at its
 * next merge after its own next redirect of that visitor, which bounds what a visitor spread over N
 * instances gets: about limit + N × (interval + round trip) × its rate at one instance (one past the
 * limit per instance for a visitor slower than one request per interval), and never more than N ×
 * the limit (docs/design.md, "Per-link visitor limit"). When the store fails, the counts stay here
 * (sent again with the next merge) and each instance decides on what it knows.
 */
export class VisitorLimit {
  private readonly seen: LRUCache<string, Seen>;
  private dirty: Seen[] = [];
  private readonly syncIntervalMs: number;
  private timer: NodeJS.Timeout | null = null;
  private merging: Promise<void> | null = null;
  private down = false;

  constructor(
    /** null: this instance's own windows only (a single process, or tests). */
    private readonly store: VisitorWindowStore | null,
    private readonly options: VisitorLimitOptions = {},
    private readonly clock: Clock = systemClock,
  ) {
    this.syncIntervalMs = options.syncIntervalMs ?? 100;
    this.seen = boundedLru({ maxEntries: options.maxKeys ?? 100_000 });
  }

  start(): void {
    if (this.timer || this.store === null) return;
    this.timer = setInterval(() => void this.merge(), this.syncIntervalMs);
    this.timer.unref();
  }

  /** Stops the merges and sends what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.merge();
  }

  /**
   * Whether the visitor may have one more redirect of the link in this window (fewer than `limit`
   * known: the shared total last read and what this instance counted since), and, when it may and
   * `counts` (a GET), counts it. A HEAD only looks. Synchronous: no store is asked here.
   */
  hit(linkId: string, address: string, limit: number, counts: boolean, now = this.clock.now()): RateDecision {
    const window = Math.floor(now / VISITOR_WINDOW_MS);
    const key = `${linkId}\u0000${address}`;
    let seen = this.seen.get(key);
    if (seen === undefined) {
      seen = { linkId, address, window, shared: 0, unsent: 0, sending: 0, dirty: false };
      this.seen.set(key, seen);
    } else if (seen.window !== window) {
      // A new window: what was counted in the last one and not yet sent no longer matters.
      seen.window = window;
      seen.shared = seen.unsent = seen.sending = 0;
    }
    if (seen.shared + seen.unsent + seen.sending >= limit) {
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(((window + 1) * VISITOR_WINDOW_MS - now) / 1000)) };
    }
    if (counts) {
      seen.unsent++;
      if (!seen.dirty && this.store !== null) {
        seen.dirty = true;
        this.dirty.push(seen);
      }
    }
    return ALLOW;
  }

  /** Adds what was counted here to the shared windows and reads their totals back; one merge at a time. */
  merge(): Promise<void> {
    this.merging ??= this.mergeOnce().finally(() => (this.merging = null));
    return this.merging;
  }

  get usage(): { keys: number } {
    return { keys: this.seen.size };
  }

  private async mergeOnce(): Promise<void> {
    if (this.store === null || this.dirty.length === 0) return;
    const batch = this.dirty;
    this.dirty = [];
    const sent = batch.map((s) => {
      s.dirty = false;
      const delta = s.unsent;
      s.sending += delta;
      s.unsent = 0;
      return { window: s.window, delta };
    });
    try {
      const totals = await this.store.add(
        batch.map((s, i) => ({ linkId: s.linkId, address: s.address, window: sent[i].window, delta: sent[i].delta })),
        VISITOR_WINDOW_MS,
      );
      batch.forEach((s, i) => {
        if (s.window !== sent[i].window) return; // the window turned meanwhile
        s.sending -= sent[i].delta;
        s.shared = Math.max(s.shared, totals[i]);
      });
      if (this.down) {
        this.down = false;
        this.options.onFallback?.(false);
      }
    } catch (error) {
      // Sent again with the next merge: counted twice if the store took it after all, never lost.
      batch.forEach((s, i) => {
        if (s.window !== sent[i].window) return;
        s.sending -= sent[i].delta;
        s.unsent += sent[i].delta;
        if (!s.dirty) {
          s.dirty = true;
          this.dirty.push(s);
        }
      });
      if (!this.down) this.options.onFallback?.(true, error);
      this.down = true;
    }
  }
}
