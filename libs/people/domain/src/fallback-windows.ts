import { Clock, systemClock } from '@shortlink/core';
import { LocalRateWindows, RateWindowStore, WindowHit } from '@shortlink/tenants-domain';

/**
 * The shared sliding windows (RATE_WINDOW_STORE: Redis on the real stack) or, while they fail, this
 * instance's own: a count goes on when the shared store is down, each instance counting alone
 * (docs/design.md, "Throttling sign-in").
 */
export class FallbackWindows implements RateWindowStore {
  private readonly local: LocalRateWindows;

  constructor(
    private readonly shared: RateWindowStore,
    /** Called when the shared windows fail (the instance then counts on its own). */
    private readonly onFallback?: (error: unknown) => void,
    clock: Clock = systemClock,
  ) {
    this.local = new LocalRateWindows(clock);
  }

  async hit(key: string, limit: number, windowMs: number, cost: number): Promise<WindowHit> {
    try {
      return await this.shared.hit(key, limit, windowMs, cost);
    } catch (error) {
      this.onFallback?.(error);
      return this.local.hit(key, limit, windowMs, cost);
    }
  }
}
