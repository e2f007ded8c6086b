import { Clock, systemClock } from '@shortlink/core';
import { parseFeed } from './feed-formats';
import { LiveRecheck } from './live-recheck';
import { FeedReader, FeedStateStore, FeedValidator, LeaseStore } from './ports';
import { ReputationService } from './reputation';
import { FeedSpec, ThreatIndex } from './threats';

export interface FeedWatcherOptions {
  /** This instance, as the holder of a feed's recheck lease. */
  readonly owner: string;
  /** How long a recheck may hold its lease before another instance may take it over. */
  readonly leaseMs: number;
  readonly onLoaded?: (spec: FeedSpec, entries: number) => void;
  readonly onRechecked?: (spec: FeedSpec, result: { links: number; escalated: number }) => void;
  readonly onFailed?: (spec: FeedSpec, error: unknown) => void;
}

/** A feed's identity across instances and restarts. */
const feedName = (spec: FeedSpec) => `${spec.format}:${spec.location}`;

/**
 * The configured feeds, read on a schedule (docs/design.md, "Trust and safety"): each refresh reads
 * every feed (skipping one its validator says is unchanged), parses it, and puts it in use for the
 * checks at create and edit. When what a feed lists is not what the live links were last checked
 * against (the digest the meta database keeps per feed), the links on the hosts it adds are judged
 * again, by one instance at a time (a lease per feed); the digest is saved once that went through,
 * so a recheck cut short is done again at the next refresh. A feed that cannot be read or parsed
 * keeps its last good entries.
 */
export class FeedWatcher {
  private readonly validators = new Map<number, FeedValidator>();
  /** The digest each feed's live links were last checked against, as far as this instance knows. */
  private readonly applied = new Map<number, string>();
  /** The index whose digest the meta database had when this instance loaded a feed: what a later load is diffed against. */
  private readonly checkedAgainst = new Map<number, ThreatIndex>();

  constructor(
    private readonly specs: readonly FeedSpec[],
    private readonly reader: FeedReader,
    private readonly reputation: ReputationService,
    private readonly store: FeedStateStore & LeaseStore,
    private readonly recheck: LiveRecheck,
    private readonly options: FeedWatcherOptions,
    private readonly clock: Clock = systemClock,
  ) {}

  /** One refresh of every feed. */
  async refresh(): Promise<void> {
    for (const [slot, spec] of this.specs.entries()) {
      try {
        await this.load(slot, spec);
        await this.recheckIfNew(slot, spec);
      } catch (error) {
        this.options.onFailed?.(spec, error);
      }
    }
  }

  private async load(slot: number, spec: FeedSpec): Promise<void> {
    const read = await this.reader.read(spec.location, this.validators.get(slot) ?? null);
    if (read === 'unchanged') return;
    const index = new ThreatIndex(spec, parseFeed(spec.format, read.text));
    const previous = this.reputation.feeds.get(slot) ?? null;
    this.reputation.feeds.set(slot, index);
    this.validators.set(slot, read.validator);
    const added = index.hostsAddedSince(previous);
    this.reputation.forgetHosts([...added.covering, ...added.exact]);
    this.options.onLoaded?.(spec, index.size);
  }

  private async recheckIfNew(slot: number, spec: FeedSpec): Promise<void> {
    const index = this.reputation.feeds.get(slot);
    if (!index || this.applied.get(slot) === index.digest) return;
    const name = feedName(spec);
    const stored = await this.store.feedDigest(name);
    if (stored === index.digest) {
      this.applied.set(slot, index.digest);
      this.checkedAgainst.set(slot, index);
      return;
    }
    if (!(await this.store.claimLease(`feed-recheck:${name}`, this.options.owner, this.options.leaseMs))) return;
    try {
      if ((await this.store.feedDigest(name)) === index.digest) {
        this.applied.set(slot, index.digest);
        this.checkedAgainst.set(slot, index);
        return;
      }
      // Only what was added since the entries the live links were checked against (all of it when that is not known here).
      const base = this.checkedAgainst.get(slot);
      const hosts = index.hostsAddedSince(base && base.digest === stored ? base : null);
      const result = await this.recheck.hosts(hosts);
      await this.store.saveFeedDigest(name, index.digest, index.size, new Date(this.clock.now()));
      this.applied.set(slot, index.digest);
      this.checkedAgainst.set(slot, index);
      this.options.onRechecked?.(spec, result);
    } finally {
      await this.store.releaseLease(`feed-recheck:${name}`, this.options.owner).catch(() => undefined);
    }
  }
}
