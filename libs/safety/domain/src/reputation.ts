import { BoundedLru, boundedLru, Clock, systemClock } from '@shortlink/core';
import type { CheckedUrl, ReputationVerdict, TargetReputation } from '@shortlink/url-policy';
import { strongerVerdict } from '@shortlink/url-policy';
import { RemoteReputation } from './ports';
import { ThreatIndex, verdictOf } from './threats';

/** The feeds loaded in this process, one index per configured feed (docs/design.md, "Trust and safety"). */
export class FeedSet {
  private readonly loaded = new Map<number, ThreatIndex>();

  /** The index of the feed configured at `slot` replaces the one it had. */
  set(slot: number, index: ThreatIndex): void {
    this.loaded.set(slot, index);
  }

  get(slot: number): ThreatIndex | undefined {
    return this.loaded.get(slot);
  }

  get feeds(): readonly ThreatIndex[] {
    return [...this.loaded.values()];
  }

  /** The strongest verdict of any feed against a target, or null. */
  judge(url: string, host: string): ReputationVerdict | null {
    let verdict: ReputationVerdict | null = null;
    for (const index of this.loaded.values()) {
      const threat = index.threatOf(url, host);
      if (threat !== null) verdict = strongerVerdict(verdict, verdictOf(index.spec, threat, url));
      if (verdict?.state === 'banned') break;
    }
    return verdict;
  }

  /** The strongest verdict of any feed against any of these targets. */
  judgeAll(targets: ReadonlyArray<{ readonly url: string; readonly host: string }>): ReputationVerdict | null {
    let verdict: ReputationVerdict | null = null;
    for (const t of targets) verdict = strongerVerdict(verdict, this.judge(t.url, t.host));
    return verdict;
  }
}

export interface ReputationOptions {
  /** Hosts whose remote answers are kept at most (WEB_RISK_CACHE_HOSTS); each keeps a few URLs. */
  readonly cacheHosts: number;
  /** How long "nothing known" from the remote service is believed (WEB_RISK_CACHE_SECONDS). */
  readonly missTtlMs: number;
  /** Remote look-ups per second at most, shared with the scheduled screening (WEB_RISK_REQUESTS_PER_SECOND). */
  readonly remotePerSecond: number;
  /** The longest a create or an edit waits for the remote service (WEB_RISK_TIMEOUT_MS). */
  readonly remoteTimeoutMs: number;
  /** Called when the remote service fails or is over budget (counted: the target was not screened by it). */
  readonly onRemoteSkipped?: (why: 'budget' | 'error' | 'timeout', error?: unknown) => void;
}

/** URLs kept per host in the cache of remote answers. */
const URLS_PER_HOST = 64;

interface Remembered {
  readonly verdict: ReputationVerdict | null;
  readonly until: number;
}

/**
 * The reputation of targets at create and edit (LinkService's TargetReputation; docs/design.md,
 * "Trust and safety"): the feeds loaded in memory (no I/O), then the remote service if one is
 * configured, its answers cached per host (each host keeps the answers of its URLs, so a feed that
 * changes a host drops them at once) and its calls held to a budget. A remote service that is over
 * budget, slow or failing leaves the verdict to the feeds (fail open) and is counted; the scheduled
 * checks screen the target again later.
 */
export class ReputationService implements TargetReputation {
  private readonly cache: BoundedLru<string, Map<string, Remembered>>;
  private tokens: number;
  private refilledAt: number;

  constructor(
    readonly feeds: FeedSet,
    private readonly remote: RemoteReputation | null,
    private readonly options: ReputationOptions,
    private readonly clock: Clock = systemClock,
  ) {
    this.cache = boundedLru({ maxEntries: Math.max(1, options.cacheHosts) });
    this.tokens = options.remotePerSecond;
    this.refilledAt = clock.now();
  }

  async judge(targets: readonly CheckedUrl[]): Promise<ReputationVerdict | null> {
    let verdict = this.feeds.judgeAll(targets);
    if (verdict?.state === 'banned' || this.remote === null) return verdict;
    for (const url of new Set(targets.map((t) => t.url))) {
      const host = targets.find((t) => t.url === url)!.host;
      verdict = strongerVerdict(verdict, await this.remoteVerdict(url, host, this.options.remoteTimeoutMs));
      if (verdict?.state === 'banned') break;
    }
    return verdict;
  }

  /**
   * The remote service's verdict on one URL, from the cache while it holds, else asked (within the
   * budget and `timeoutMs`); null when nothing is known or it could not be asked.
   */
  async remoteVerdict(url: string, host: string, timeoutMs: number): Promise<ReputationVerdict | null> {
    if (this.remote === null) return null;
    const now = this.clock.now();
    const remembered = this.cache.get(host)?.get(url);
    if (remembered !== undefined && remembered.until > now) return remembered.verdict;
    if (!this.take(now)) {
      this.options.onRemoteSkipped?.('budget');
      return null;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = await Promise.race([
        this.remote.lookup(url),
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), timeoutMs);
        }),
      ]);
      if (answer === 'timeout') {
        this.options.onRemoteSkipped?.('timeout');
        return null;
      }
      this.remember(host, url, {
        verdict: answer.verdict,
        until: answer.verdict ? (answer.expiresAt ?? now + this.options.missTtlMs) : now + this.options.missTtlMs,
      });
      return answer.verdict;
    } catch (error) {
      this.options.onRemoteSkipped?.('error', error);
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /** A feed changed what it says of these hosts: their cached remote answers go too (asked again on the next look-up). */
  forgetHosts(hosts: Iterable<string>): void {
    for (const host of hosts) this.cache.delete(host);
  }

  get hasRemote(): boolean {
    return this.remote !== null;
  }

  private remember(host: string, url: string, value: Remembered): void {
    const urls = this.cache.get(host) ?? new Map<string, Remembered>();
    urls.delete(url);
    urls.set(url, value);
    while (urls.size > URLS_PER_HOST) urls.delete(urls.keys().next().value!);
    this.cache.set(host, urls);
  }

  private take(now: number): boolean {
    const rate = this.options.remotePerSecond;
    this.tokens = Math.min(rate, this.tokens + ((now - this.refilledAt) / 1000) * rate);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
