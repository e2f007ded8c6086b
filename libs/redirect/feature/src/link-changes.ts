import { performance } from 'perf_hooks';
import { isDomainSettingsChange, LinkChange, LinkChangeFeed } from '@shortlink/links-domain';
import { RedirectPipeline } from '@shortlink/read-path';
import type { AdminHandler, ContextLogger } from '@shortlink/nest-platform';

export interface AppliedChange {
  readonly domain: string;
  readonly code: string;
  readonly version: number;
  /** Epoch milliseconds, fractional (performance.timeOrigin + now): when this instance applied it. */
  readonly appliedAtMs: number;
}

/** What else an instance holds per domain (its settings, its robots.txt): told of every change and every gap. */
export interface DomainChangeSink {
  changed(change: LinkChange): Promise<void>;
  dropAll(): Promise<void>;
}

export interface LinkChangeObserver {
  applied(): void;
  gap(): void;
}

/** What the listener works with: the read path whose L1 it drops from, the channel, its counters and log, and the domains' holdings. */
export interface LinkChangeListenerParts {
  readonly pipeline: RedirectPipeline;
  readonly feed: LinkChangeFeed;
  readonly observer: LinkChangeObserver;
  readonly logger: ContextLogger;
  readonly domains?: DomainChangeSink;
}

/** Changes kept for /internal/link-changes: enough for a test or an operator to look one up. */
const KEPT = 5000;

/**
 * Edits reach this instance (docs/design.md, "Edits reach every instance"): every change on the
 * channel drops the link from L1, pinned or not, and raises its version floor; an interruption of
 * the channel drops every link from L1, since changes may have been missed. Until the channel is
 * back, L1's TTL (REDIRECT_L1_TTL_MS, 60 s) bounds how long an edit can go unseen here. A change of
 * a domain's settings travels the same channel (docs/design.md, "Domain settings").
 */
export class LinkChangeListener {
  private readonly recent: AppliedChange[] = [];
  private next = 0;
  private gaps = 0;
  private unsubscribe: (() => Promise<void>) | null = null;
  private stopped = false;

  private readonly pipeline: RedirectPipeline;
  private readonly feed: LinkChangeFeed;
  private readonly observer: LinkChangeObserver;
  private readonly logger: ContextLogger;
  private readonly domains?: DomainChangeSink;

  constructor(parts: LinkChangeListenerParts) {
    ({ pipeline: this.pipeline, feed: this.feed, observer: this.observer, logger: this.logger, domains: this.domains } = parts);
  }

  /**
   * Subscribes before the instance serves. A channel that does not answer within `waitMs` does not
   * hold up the start: the subscription completes later, and then L1 is emptied once, since changes
   * made in between were not heard.
   */
  async start(waitMs = 2000): Promise<void> {
    let late = false;
    const subscribed = this.feed
      .subscribe(
        (change) => this.apply(change),
        () => this.gap(),
      )
      .then(
        (unsubscribe) => {
          if (this.stopped) return void unsubscribe().catch(() => undefined);
          this.unsubscribe = unsubscribe;
          if (late) this.gap();
        },
        (error) => this.logger.warn(`link change channel: ${(error as Error).message}; L1 entries live at most their TTL`),
      );
    const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), waitMs).unref());
    if ((await Promise.race([subscribed, timer])) === 'late') {
      late = true;
      this.logger.warn(`link change channel not ready after ${waitMs} ms; serving, L1 is emptied once it is`);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.unsubscribe?.().catch(() => undefined);
    this.unsubscribe = null;
  }

  /** A change without a code is a domain's settings (domainSettingsChange): no link of L1 is concerned. */
  apply(change: LinkChange): void {
    if (!isDomainSettingsChange(change)) this.pipeline.applyChange(change);
    void this.domains?.changed(change);
    const applied: AppliedChange = {
      domain: change.domain,
      code: change.code,
      version: change.version,
      appliedAtMs: performance.timeOrigin + performance.now(),
    };
    if (this.recent.length < KEPT) this.recent.push(applied);
    else this.recent[this.next] = applied;
    this.next = (this.next + 1) % KEPT;
    this.observer.applied();
  }

  gap(): void {
    this.gaps++;
    this.pipeline.dropLocalLinks();
    void this.domains?.dropAll();
    this.observer.gap();
  }

  /** `GET /internal/link-changes?code=&limit=` on the admin listener: changes applied here, newest first. */
  route(): AdminHandler {
    return (query) => {
      const code = query.get('code');
      const limit = Math.min(Math.max(Number(query.get('limit')) || 100, 1), KEPT);
      const ordered =
        this.recent.length < KEPT ? [...this.recent].reverse() : [...this.recent.slice(0, this.next).reverse(), ...this.recent.slice(this.next).reverse()];
      const changes = (code ? ordered.filter((c) => c.code === code) : ordered).slice(0, limit);
      return { body: { gaps: this.gaps, subscribed: this.unsubscribe !== null, changes } };
    };
  }
}
