import { BoundedLru, boundedLru, Clock, systemClock } from '@shortlink/core';
import { targetsOf } from '@shortlink/links-domain';
import { linkHealthOf } from './health';
import { SafetyLinks, SafetyNotices } from './notices';
import { CheckRecord, LinkTargetIndex, TargetHttp, TargetRecord } from './ports';
import { probeTarget, ProbeOutcome } from './probe';

export interface TargetCheckOptions {
  /** How often a target that answers is checked again (LINK_CHECK_INTERVAL_HOURS). */
  readonly intervalMs: number;
  /** The first check again after a failure; it doubles with each failure in a row, up to `intervalMs`. */
  readonly retryMs: number;
  /** Failed checks in a row before a target counts as broken (one bad minute of a site is not a dead link). */
  readonly failuresToBreak: number;
  /** The budget: requests per second to targets, every hop and GET retry counted (LINK_CHECK_REQUESTS_PER_SECOND). */
  readonly requestsPerSecond: number;
  /** At most one check of a host per this long (LINK_CHECK_HOST_INTERVAL_MS). */
  readonly hostIntervalMs: number;
  readonly maxRedirects: number;
  /** Checks in flight at once. */
  readonly concurrency: number;
  /** Targets read per round. */
  readonly batch?: number;
  /** Links whose new targets wait for their first check in memory; beyond, the newest are left to the scheduled rounds. */
  readonly maxFirstChecks?: number;
}

/** How the next check of a target spreads: ±10 % of its interval, so that links made together are not checked together for ever. */
const JITTER = 0.1;
/** A host that timed out, refused connections or asked us to wait is left alone this long at first, doubling up to an hour. */
const HOST_BACKOFF_MIN_MS = 60_000;
const HOST_BACKOFF_MAX_MS = 3_600_000;
const NETWORK_FAILURES = new Set(['timeout', 'connection-refused', 'connection-failed', 'tls']);

interface HostPace {
  /** Not before this time (epoch ms). */
  next: number;
  /** The current backoff after failures at the network level or a request to wait; 0 while the host behaves. */
  backoffMs: number;
}

/**
 * The scheduled dead-link checks (docs/design.md, "Trust and safety"): the due targets, as many as
 * the request budget allows, each host at most once per `hostIntervalMs` and left alone for a
 * growing while after it timed out or asked us to wait. Each target is checked once however many
 * links send visitors there; what it found goes to every such link (LinkService.recordHealth), and
 * a link that turns broken is told by webhook. `round()` is one step, driven by the caller's timer
 * (and by tests, with a clock of their own).
 */
export class TargetChecks {
  private tokens: number;
  private refilledAt: number;
  private readonly hosts: BoundedLru<string, HostPace>;
  private readonly batch: number;
  /** Links of this instance's creates and edits whose targets were never checked (insertion order). */
  private readonly fresh = new Set<string>();
  private firstRunning: Promise<number> | null = null;

  constructor(
    private readonly index: LinkTargetIndex,
    private readonly http: TargetHttp,
    private readonly links: SafetyLinks,
    private readonly notices: SafetyNotices,
    private readonly options: TargetCheckOptions,
    private readonly clock: Clock = systemClock,
    private readonly random: () => number = Math.random,
    /** Called after each target's check (Web Risk's screening of the same target rides on it). */
    private readonly afterCheck?: (target: TargetRecord) => Promise<void>,
  ) {
    this.tokens = options.requestsPerSecond;
    this.refilledAt = clock.now();
    this.hosts = boundedLru({ maxEntries: 100_000 });
    this.batch = options.batch ?? Math.max(10, Math.ceil(options.requestsPerSecond * 2));
  }

  /** Requests the budget allows now (negative after a round that took more than it reserved). */
  get budget(): number {
    return this.tokens;
  }

  /**
   * Links this instance just created or edited (their targets are in the index): each target never
   * checked gets its first check from this instance within a round or two, ahead of the scheduled
   * rounds' backlog and whichever instance holds their lease, so that a link made with a dead target
   * is told so within seconds. Past `maxFirstChecks` waiting links the rest are left to the rounds
   * (a large import: its targets are due in the index all the same).
   */
  queueFirstChecks(linkIds: readonly string[]): void {
    const max = this.options.maxFirstChecks ?? 10_000;
    for (const id of linkIds) {
      if (this.fresh.size >= max) return;
      this.fresh.add(id);
    }
  }

  /** Links waiting for the first check of their targets. */
  get firstChecksWaiting(): number {
    return this.fresh.size;
  }

  /**
   * The first checks of the queued links' targets never checked, within the same budget and
   * per-host pace as the rounds (a host not yet allowed leaves its target to the rounds, where it is
   * due); how many were checked. Every instance runs this for its own links; the lease holder's
   * round runs it first.
   */
  firstChecks(): Promise<number> {
    this.firstRunning ??= this.takeFirstChecks().finally(() => (this.firstRunning = null));
    return this.firstRunning;
  }

  private async takeFirstChecks(): Promise<number> {
    let checked = 0;
    while (this.fresh.size) {
      const now = this.clock.now();
      this.refill(now);
      if (this.tokens < 1) return checked;
      const ids = [...this.fresh].slice(0, this.batch);
      const found = await this.index.targetsOfLinks(ids);
      const chosen = new Map<string, TargetRecord>();
      const done = new Set(ids);
      for (const { linkId, target } of found) {
        if (target.checkedAt !== null || chosen.has(target.urlHash)) continue;
        const pace = this.hosts.get(target.host);
        if (pace !== undefined && pace.next > now) continue; // the host's turn is later: the rounds find it due
        if (this.tokens < 1) {
          done.delete(linkId); // its turn comes with the next tokens
          continue;
        }
        this.tokens -= 1;
        this.hosts.set(target.host, { next: now + this.options.hostIntervalMs, backoffMs: pace?.backoffMs ?? 0 });
        chosen.set(target.urlHash, target);
      }
      for (const id of done) this.fresh.delete(id);
      await pool([...chosen.values()], this.options.concurrency, (target) => this.check(target));
      checked += chosen.size;
      if (done.size < ids.length) return checked;
    }
    return checked;
  }

  /** One round: the first checks of this instance's new links, then the due targets the budget and the hosts allow; how many were checked. */
  async round(): Promise<number> {
    const first = this.fresh.size ? await this.firstChecks() : 0;
    const now = this.clock.now();
    this.refill(now);
    if (this.tokens < 1) return first;
    const due = await this.index.dueTargets(new Date(now), Math.min(this.batch, Math.floor(this.tokens) * 4));
    const chosen: TargetRecord[] = [];
    const waiting = new Map<number, string[]>();
    for (const target of due) {
      const pace = this.hosts.get(target.host);
      if (pace !== undefined && pace.next > now) {
        // Another check of this host is due later: the target waits for its turn (not a round per target).
        const list = waiting.get(pace.next) ?? [];
        list.push(target.urlHash);
        waiting.set(pace.next, list);
        continue;
      }
      if (this.tokens < 1) break;
      this.tokens -= 1;
      this.hosts.set(target.host, { next: now + this.options.hostIntervalMs, backoffMs: pace?.backoffMs ?? 0 });
      chosen.push(target);
    }
    for (const [until, hashes] of waiting) await this.index.postpone(hashes, new Date(until));
    await pool(chosen, this.options.concurrency, (target) => this.check(target));
    return first + chosen.length;
  }

  private refill(now: number): void {
    const rate = this.options.requestsPerSecond;
    this.tokens = Math.min(rate, this.tokens + ((now - this.refilledAt) / 1000) * rate);
    this.refilledAt = now;
  }

  private async check(target: TargetRecord): Promise<void> {
    const outcome = await probeTarget(this.http, target.url, { maxRedirects: this.options.maxRedirects, now: () => this.clock.now() });
    // One request was reserved for the check; the hops and GET retries it took are charged now.
    this.tokens -= outcome.requests - 1;
    const now = this.clock.now();
    this.pace(target.host, outcome, now);
    const record = this.recordOf(target, outcome, now);
    await this.index.recordCheck(target.urlHash, record);
    const after: TargetRecord = { ...target, ...record };
    if (outcome.kind !== 'wait') await this.fanOut(after);
    await this.afterCheck?.(after);
  }

  /** The host's next turn: its interval, or a growing backoff after it failed at the network level or asked us to wait. */
  private pace(host: string, outcome: ProbeOutcome, now: number): void {
    const previous = this.hosts.get(host);
    const troubled = outcome.kind === 'wait' || (outcome.kind === 'broken' && outcome.error !== null && NETWORK_FAILURES.has(outcome.error));
    if (!troubled) {
      this.hosts.set(host, { next: Math.max(previous?.next ?? 0, now + this.options.hostIntervalMs), backoffMs: 0 });
      return;
    }
    const backoffMs = Math.min(HOST_BACKOFF_MAX_MS, previous?.backoffMs ? previous.backoffMs * 2 : HOST_BACKOFF_MIN_MS);
    const asked = outcome.kind === 'wait' ? (outcome.retryAfterMs ?? 0) : 0;
    this.hosts.set(host, { next: now + Math.max(backoffMs, Math.min(asked, HOST_BACKOFF_MAX_MS)), backoffMs });
  }

  private recordOf(target: TargetRecord, outcome: ProbeOutcome, now: number): CheckRecord {
    const { intervalMs, retryMs, failuresToBreak } = this.options;
    const spread = (ms: number) => new Date(now + Math.round(ms * (1 - JITTER + 2 * JITTER * this.random())));
    if (outcome.kind === 'wait') {
      const waitMs = Math.min(intervalMs, Math.max(retryMs, outcome.retryAfterMs ?? 0));
      return { ...kept(target), lastStatus: outcome.status, lastError: 'asked-to-wait', checkedAt: new Date(now), nextCheckAt: new Date(now + waitMs) };
    }
    if (outcome.kind === 'ok') {
      const since = target.state === 'ok' && target.since ? target.since : new Date(now);
      return { state: 'ok', since, lastStatus: outcome.status, lastError: null, checkedAt: new Date(now), failures: 0, nextCheckAt: spread(intervalMs) };
    }
    const failures = target.failures + 1;
    const state = failures >= failuresToBreak ? 'broken' : target.state;
    const since = state === target.state ? target.since : new Date(now);
    const again = Math.min(intervalMs, retryMs * 2 ** (failures - 1));
    return { state, since, lastStatus: outcome.status, lastError: outcome.error, checkedAt: new Date(now), failures, nextCheckAt: spread(again) };
  }

  /** What the check found, to every link of the target (a page of links at a time). */
  private async fanOut(target: TargetRecord): Promise<void> {
    let after: string | null = null;
    for (;;) {
      const refs = await this.index.linksOfTarget(target.urlHash, after, FAN_OUT_PAGE);
      if (refs.length === 0) return;
      after = refs[refs.length - 1].linkId;
      const targets = await this.index.targetsOfLinks(refs.map((r) => r.linkId));
      for (const ref of refs) {
        const link = await this.links.find(ref);
        if (!link || link.id !== ref.linkId) continue;
        // Only the targets the link has now (an edit may have changed them since they were indexed).
        const current = new Set(targetsOf(link));
        const own = targets.filter((t) => t.linkId === ref.linkId && current.has(t.target.url)).map((t) => t.target);
        const health = linkHealthOf(link.targetUrl, own);
        if (health === null) continue;
        const change = await this.links.recordHealth(ref, ref.linkId, health);
        if (change && change.after.health?.state === 'broken' && change.before.health?.state !== 'broken') await this.notices.broken(change);
      }
      if (refs.length < FAN_OUT_PAGE) return;
    }
  }
}

const FAN_OUT_PAGE = 200;

/** A target's state as it was (a check that got no verdict). */
const kept = (t: TargetRecord): Pick<CheckRecord, 'state' | 'since' | 'failures'> => ({ state: t.state, since: t.since, failures: t.failures });

/** Runs `work` over `items`, at most `concurrency` at once. */
async function pool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
