import { DomainError, ErrorCode } from '@shortlink/core';
import type { RateWindowStore } from '@shortlink/tenants-domain';

export interface SignInThrottleLimits {
  /** Failures allowed per account (email) in `windowMs`; then 429 until the oldest leaves the window. */
  readonly perAccount: number;
  /** Failures allowed per client address in `windowMs`. */
  readonly perAddress: number;
  readonly windowMs: number;
}

/** Whose failures a check counts: the account's, and the client address's when it is given. */
export interface ThrottleSubject {
  readonly email: string;
  /** Undefined: only the account is counted (a check of a person already signed in, such as a password change). */
  readonly address?: string | null;
}

/**
 * The failures of everything that proves who a person is (docs/design.md, "Throttling sign-in"):
 * passwords and second-factor codes at sign-in, the current password of a password change, the
 * code or recovery code that turns the second factor off or moves it. Counted in the shared sliding
 * windows (FallbackWindows: Redis on the real stack, each instance's own while it fails), per account and per
 * client address; past either limit every such check is 429 with Retry-After before anything is
 * checked, for at most the window (no long lockout of the real owner).
 */
export class SignInThrottle {
  constructor(
    /** The shared windows (FallbackWindows over RATE_WINDOW_STORE). */
    private readonly windows: RateWindowStore,
    private readonly limits: SignInThrottleLimits,
  ) {}

  /** 429 RATE_LIMITED once the subject's failures reached a limit; counts nothing. */
  async admit(subject: ThrottleSubject, message: string): Promise<void> {
    for (const [key, limit] of this.keysOf(subject)) {
      // Checked without counting (cost 0 against limit - 1: refused once `limit` failures are in the window).
      const hit = await this.hit(key, limit - 1, 0);
      if (!hit.allowed) throw new DomainError(ErrorCode.RATE_LIMITED, message, { retryAfterSeconds: Math.max(1, Math.ceil(hit.waitMs / 1000)) });
    }
  }

  /** Counts one failure of the subject. */
  async fail(subject: ThrottleSubject): Promise<void> {
    for (const [key, limit] of this.keysOf(subject)) await this.hit(key, limit, 1);
  }

  private keysOf(subject: ThrottleSubject): Array<readonly [string, number]> {
    const keys: Array<readonly [string, number]> = [[`signin:account:${subject.email}`, this.limits.perAccount]];
    if (subject.address !== undefined) keys.push([`signin:address:${subject.address ?? 'unknown'}`, this.limits.perAddress]);
    return keys;
  }

  private hit(key: string, limit: number, cost: number) {
    return this.windows.hit(key, limit, this.limits.windowMs, cost);
  }
}
