import { LRUCache } from 'lru-cache';
import { CacheStore } from '../ports';

export interface RateDecision {
  readonly allowed: boolean;
  readonly retryAfterSeconds: number;
}

const ALLOW: RateDecision = { allowed: true, retryAfterSeconds: 0 };

/** Fixed-window counter per client IP, LRU-bounded so a botnet cannot exhaust memory. */
export class PerIpRateLimiter {
  private readonly windows: LRUCache<string, { window: number; count: number }>;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    maxTracked = 100_000,
  ) {
    this.windows = new LRUCache({ max: maxTracked });
  }

  allow(ip: string, now = Date.now()): RateDecision {
    if (this.limit <= 0) return ALLOW;
    const window = Math.floor(now / this.windowMs);
    const entry = this.windows.get(ip);
    if (!entry || entry.window !== window) {
      this.windows.set(ip, { window, count: 1 });
      return ALLOW;
    }
    entry.count++;
    if (entry.count <= this.limit) return ALLOW;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(((window + 1) * this.windowMs - now) / 1000)) };
  }
}

/**
 * A global requests-per-second limit shared by all instances. Each instance counts locally and
 * adds its count to one Redis counter per second every `syncMs` (one INCRBY per instance per tick,
 * not per request, so the counter key is never a hot key). While Redis is unreachable each
 * instance enforces `localFallbackLimit` on its own.
 */
export class GlobalRateLimiter {
  private second = 0;
  private localCount = 0;
  private unsynced = 0;
  private knownGlobal = 0;
  private redisHealthy = true;
  private timer: NodeJS.Timeout | null = null;
  private syncing = false;

  constructor(
    private readonly store: CacheStore,
    private readonly limitPerSecond: number,
    private readonly localFallbackLimit: number,
    private readonly syncMs = 100,
  ) {}

  start(): void {
    if (this.limitPerSecond <= 0 || this.timer) return;
    this.timer = setInterval(() => void this.sync(), this.syncMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  allow(now = Date.now()): RateDecision {
    if (this.limitPerSecond <= 0) return ALLOW;
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.second = second;
      this.localCount = 0;
      this.unsynced = 0;
      this.knownGlobal = 0;
    }
    const limit = this.redisHealthy ? this.limitPerSecond : this.localFallbackLimit;
    const seen = this.redisHealthy ? this.knownGlobal + this.unsynced : this.localCount;
    if (seen >= limit) return { allowed: false, retryAfterSeconds: 1 };
    this.localCount++;
    this.unsynced++;
    return ALLOW;
  }

  get mode(): 'shared' | 'local' {
    return this.redisHealthy ? 'shared' : 'local';
  }

  async sync(): Promise<void> {
    if (this.syncing) return;
    this.syncing = true;
    const second = this.second;
    const delta = this.unsynced;
    try {
      const total = await this.store.incrBy(`shortlink:ratelimit:global:${second}`, delta, 5000);
      if (this.second === second) {
        this.unsynced -= delta;
        this.knownGlobal = total;
      }
      this.redisHealthy = true;
    } catch {
      this.redisHealthy = false;
    } finally {
      this.syncing = false;
    }
  }
}
