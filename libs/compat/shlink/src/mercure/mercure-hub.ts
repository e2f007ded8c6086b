import { randomUUID } from 'crypto';
import type { ClickBatch, ClickEvent, ClickEventSource, VisitRow } from '@shortlink/clicks-domain';
import { UserAgentClassifier } from '@shortlink/visitors-domain';
import { MercureGrant, TOPIC, topicMatches } from './mercure-token';

/** One Mercure update: its id (`urn:uuid:…`), the topics it is published on, its JSON `data`. */
export interface MercureUpdate {
  readonly id: string;
  readonly topics: readonly string[];
  readonly data: unknown;
}

/** How the hub turns a click into Shlink's payloads: the visit, and for a link's visit the short URL as it is now. */
export interface MercurePayloads {
  visit(row: VisitRow, orphan: boolean): unknown;
  /** The short URLs of a tenant's visited links (with their visit counts), keyed `domain/code`; a link gone is left out. */
  shortUrls(tenantId: string, links: ReadonlyArray<{ domain: string; code: string }>): Promise<Map<string, unknown>>;
}

export interface MercureHubOptions {
  /** Open subscriptions per tenant on this instance. */
  readonly maxPerTenant: number;
  readonly onError?: (message: string) => void;
  /** A start that failed (a broker down) is tried again after this (default 5 s). */
  readonly restartMs?: number;
  /** Updates kept for a reconnecting subscriber (`Last-Event-ID`): at most this many (default 1000) … */
  readonly historySize?: number;
  /** … and none older than this (default 5 min); a tenant's updates are made this long after its last subscription closed. */
  readonly historyMs?: number;
}

/** The hub's answer to a subscription's `Last-Event-ID`: the `Last-Event-ID` of its response. */
export const EARLIEST = 'earliest';

interface Recorded {
  readonly update: MercureUpdate;
  readonly at: number;
  /** Whose it is: the grants that may receive it (re-evaluated at replay). */
  readonly whose: (grant: MercureGrant) => boolean;
}

interface Subscriber {
  readonly grant: MercureGrant;
  readonly topics: readonly string[];
  readonly send: (update: MercureUpdate) => void;
  readonly end: () => void;
}

/**
 * The Mercure hub of Shlink's real-time updates (docs/design.md, "Compatible APIs", Mercure), fed by
 * the click topic (a consumer of this instance's own, from the end, committing nothing; started with
 * the first subscription): a link's visit is published on `https://shlink.io/new-visit` and
 * `https://shlink.io/new-visit/{shortCode}` with `{shortUrl, visit}`, an orphan visit on
 * `https://shlink.io/new-orphan-visit` with `{visit}`. A subscriber gets the updates of its token's
 * tenant (orphan visits: of its token's domains) on the topics it asked for that its token allows.
 * The short URLs of a batch are read once per link, and only for tenants with a subscriber (or one
 * that closed within the history's span). The last updates (1000, 5 min) are kept for a subscriber
 * that reconnects with `Last-Event-ID` (`replay`): in memory, this instance's only.
 */
export class MercureHub {
  private readonly subscribers = new Set<Subscriber>();
  private readonly perTenant = new Map<string, number>();
  private readonly classifier = new UserAgentClassifier(2_000);
  private started = false;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;
  private queue: Promise<void> = Promise.resolve();
  private readonly history: Recorded[] = [];
  /** Tenants whose last subscription closed, and when: their updates are still made (and kept) for a reconnection. */
  private readonly recentTenants = new Map<string, number>();
  private lastSubscriberAt = 0;
  private readonly historySize: number;
  private readonly historyMs: number;

  constructor(
    private readonly source: ClickEventSource | null,
    private readonly payloads: MercurePayloads,
    private readonly options: MercureHubOptions,
  ) {
    this.historySize = options.historySize ?? 1000;
    this.historyMs = options.historyMs ?? 5 * 60_000;
  }

  /** Whether this instance can serve subscriptions (it has a click stream). */
  get available(): boolean {
    return this.source !== null;
  }

  get openSubscriptions(): number {
    return this.subscribers.size;
  }

  /**
   * Adds a subscriber of `topics` (each one its token allows: the caller checked); `end` is called when
   * the hub stops. Returns its close. False when the tenant is at its limit of open subscriptions.
   */
  subscribe(grant: MercureGrant, topics: readonly string[], send: (update: MercureUpdate) => void, end: () => void): (() => void) | false {
    const open = this.perTenant.get(grant.tenantId) ?? 0;
    if (open >= this.options.maxPerTenant) return false;
    this.perTenant.set(grant.tenantId, open + 1);
    const subscriber: Subscriber = { grant, topics, send, end };
    this.subscribers.add(subscriber);
    this.start();
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.subscribers.delete(subscriber);
      this.lastSubscriberAt = Date.now();
      this.recentTenants.set(grant.tenantId, this.lastSubscriberAt);
      const left = (this.perTenant.get(grant.tenantId) ?? 1) - 1;
      if (left > 0) this.perTenant.set(grant.tenantId, left);
      else this.perTenant.delete(grant.tenantId);
    };
  }

  /**
   * What a reconnecting subscriber missed (the Mercure protocol's reconciliation): given the last event
   * id it received (`Last-Event-ID`, or `earliest` for everything kept), sends it the kept updates
   * after that one which its grant may receive on the topics it asks for, and returns the response's
   * `Last-Event-ID`: the last update it may receive before the first one sent, or `earliest` when the
   * id is not in this instance's history (too old, another instance's, before a restart) and nothing
   * could be replayed. Called right before `subscribe`, in the same turn, so nothing falls in between.
   */
  replay(grant: MercureGrant, topics: readonly string[], lastEventId: string, send: (update: MercureUpdate) => void): string {
    this.prune(Date.now());
    const allowed = (r: Recorded) => r.whose(grant) && r.update.topics.some((topic) => grant.subscribe.some((selector) => topicMatches(selector, topic)));
    const asked = (r: Recorded) => r.update.topics.some((topic) => topics.some((t) => topicMatches(t, topic)));
    let from = 0;
    if (lastEventId !== EARLIEST) {
      const at = this.history.findIndex((r) => r.update.id === lastEventId);
      if (at < 0 || !allowed(this.history[at])) return EARLIEST;
      from = at + 1;
    }
    let before: string = lastEventId;
    let sent = false;
    for (const r of this.history.slice(from)) {
      if (!allowed(r)) continue;
      if (asked(r)) {
        send(r.update);
        sent = true;
      } else if (!sent) {
        before = r.update.id;
      }
    }
    return before;
  }

  /** Ends every subscription (before the HTTP server closes: it waits for open connections); the source is its port's to close. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    for (const s of [...this.subscribers]) s.end();
  }

  /** The updates of a batch of clicks, in order (batches one after another). */
  accept(batch: Pick<ClickBatch, 'messages'>): Promise<void> {
    const events = batch.messages.map((m) => m.event);
    this.queue = this.queue
      .then(() => this.publish(events))
      .catch((error: unknown) => this.options.onError?.(`Mercure updates not published: ${(error as Error)?.message}`));
    return this.queue;
  }

  private start(): void {
    if (this.started || this.stopped || !this.source) return;
    this.started = true;
    this.source
      .start(async (batch) => {
        await this.accept(batch);
      })
      .catch((error: unknown) => {
        if (this.stopped) return;
        this.started = false;
        this.options.onError?.(`Mercure click consumer did not start (${(error as Error)?.message}); trying again`);
        this.retry = setTimeout(() => this.subscribers.size && this.start(), this.options.restartMs ?? 5000);
      });
  }

  private async publish(events: readonly ClickEvent[]): Promise<void> {
    const now = Date.now();
    this.prune(now);
    // Nobody listens, nor did within the history's span: nothing to send or keep.
    if (this.subscribers.size === 0 && now - this.lastSubscriberAt > this.historyMs) return;
    const tenants = new Set([...[...this.subscribers].map((s) => s.grant.tenantId), ...this.recentTenants.keys()]);
    const byTenant = new Map<string, ClickEvent[]>();
    for (const event of events) {
      if (event.kind === 'orphan' || event.tenantId === '') {
        this.offer({ id: `urn:uuid:${randomUUID()}`, topics: [TOPIC.newOrphanVisit], data: { visit: this.payloads.visit(this.rowOf(event), true) } }, (g) =>
          g.orphanDomains.includes(event.domain.toLowerCase()),
        );
      } else if (tenants.has(event.tenantId)) {
        byTenant.set(event.tenantId, [...(byTenant.get(event.tenantId) ?? []), event]);
      }
    }
    for (const [tenantId, clicks] of byTenant) {
      const links = [...new Map(clicks.map((c) => [`${c.domain.toLowerCase()}/${c.code}`, { domain: c.domain.toLowerCase(), code: c.code }])).values()];
      const shortUrls = await this.payloads.shortUrls(tenantId, links);
      for (const click of clicks) {
        const shortUrl = shortUrls.get(`${click.domain.toLowerCase()}/${click.code}`);
        if (!shortUrl) continue;
        const update = {
          id: `urn:uuid:${randomUUID()}`,
          topics: [TOPIC.newVisit, TOPIC.newShortUrlVisit(click.code)],
          data: { shortUrl, visit: this.payloads.visit(this.rowOf(click), false) },
        };
        this.offer(update, (g) => g.tenantId === tenantId);
      }
    }
  }

  private offer(update: MercureUpdate, whose: (grant: MercureGrant) => boolean): void {
    this.history.push({ update, at: Date.now(), whose });
    if (this.history.length > this.historySize) this.history.splice(0, this.history.length - this.historySize);
    for (const s of this.subscribers) {
      if (!whose(s.grant)) continue;
      // Asked for, and allowed by the token (the hub checked the asked topics against it at subscription).
      if (update.topics.some((topic) => s.topics.some((asked) => topicMatches(asked, topic)))) s.send(update);
    }
  }

  /** Drops the kept updates, and the tenants no longer listened to, older than the history's span. */
  private prune(now: number): void {
    let old = 0;
    while (old < this.history.length && now - this.history[old].at > this.historyMs) old++;
    if (old > 0) this.history.splice(0, old);
    for (const [tenantId, at] of this.recentTenants) if (now - at > this.historyMs) this.recentTenants.delete(tenantId);
  }

  private rowOf(event: ClickEvent): VisitRow {
    const ua = this.classifier.classify(event.userAgent);
    return {
      id: '0',
      time: event.occurredAt,
      tenantId: event.tenantId,
      domain: event.domain.toLowerCase(),
      code: event.code,
      linkId: event.linkId,
      country: event.country,
      region: event.region,
      city: event.city,
      refererHost: event.refererHost,
      device: ua.device,
      browser: ua.browser,
      os: ua.os,
      variant: event.variant,
      source: event.source,
      bot: ua.bot,
      visitor: event.visitor,
      producer: event.producer,
      seq: event.seq,
    } as VisitRow;
  }
}
