import { ALLOW, RateDecision } from '@shortlink/core';
import { CacheKeys } from './cache-keys';
import { CacheStore } from './ports';

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
      const total = await this.store.incrBy(CacheKeys.redirectsInSecond(second), delta, 5000);
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
