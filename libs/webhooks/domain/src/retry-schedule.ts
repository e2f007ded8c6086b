/** When attempts are made (docs/design.md, "Webhooks"); configured by WEBHOOK_RETRY_* so tests can shrink it. */
export interface RetrySchedule {
  /** The delay before the second attempt; each next one doubles, up to `maxDelayMs`. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** How long after the event attempts go on (24 h). */
  readonly windowMs: number;
}

/**
 * The next attempt after `attempts` failed ones of a delivery created at `createdAt`, or null when
 * the window is over. Full jitter on the upper half (delay/2 .. delay) keeps many failed
 * deliveries of one outage from coming back at once.
 */
export function nextAttemptAt(schedule: RetrySchedule, attempts: number, createdAt: Date, now: Date, random: () => number = Math.random): Date | null {
  const exp = Math.min(schedule.maxDelayMs, schedule.baseDelayMs * 2 ** Math.max(0, Math.min(attempts - 1, 40)));
  const delay = exp / 2 + random() * (exp / 2);
  const at = now.getTime() + delay;
  if (at > createdAt.getTime() + schedule.windowMs) return null;
  return new Date(at);
}
