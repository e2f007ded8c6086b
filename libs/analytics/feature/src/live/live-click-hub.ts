import { randomUUID } from 'crypto';
import type { ClickBatch, ClickEvent, ClickEventSource, ConversionBatch, ConversionEvent, ConversionEventSource } from '@shortlink/clicks-domain';
import { DomainError, ErrorCode } from '@shortlink/core';
import type { UserAgentClassifier } from '@shortlink/visitors-domain';
import { formatEventId, LiveEventId } from './event-id';
import { FilterableClick } from './live-filter';
import { ReplayRing } from './replay-ring';

/** A click as the stream sends it (the `data` of an SSE `click` event). Never the IP address. */
export interface LiveClickView {
  readonly id: string;
  /** ISO 8601, when the redirect answered. */
  readonly time: string;
  readonly domain: string;
  readonly code: string;
  readonly country: string | null;
  readonly region: string | null;
  readonly city: string | null;
  readonly referer: string | null;
  readonly device: string;
  readonly browser: string;
  readonly os: string;
  readonly bot: boolean;
  readonly variant: number | null;
  readonly source: 'qr' | 'link';
  /** The daily visitor id (a keyed hash), as the visits list gives it. */
  readonly visitor: string;
}

/**
 * A lead or a sale as the stream sends it (the `data` of an SSE `lead` or `sale` event), as counted:
 * the link it is attributed to, what the tenant reported; never the metadata (it may hold what the
 * tenant keeps about its customer), never the link's internal id (docs/design.md, "Conversions").
 */
export interface LiveConversionView {
  readonly id: string;
  /** ISO 8601, when the track API took it. */
  readonly time: string;
  readonly domain: string;
  readonly code: string;
  /** `cnv_<32 hex>`: the same id as the webhook's `conversion.id`. */
  readonly conversionId: string;
  readonly eventName: string;
  readonly customerId: string;
  /** The click id of the lead (a sale: its customer's lead's, or the click it is attributed to). */
  readonly clickId: string;
}

/** A sale adds the amount (minor units; negative: a refund), its currency and invoice id. */
export interface LiveSaleView extends LiveConversionView {
  readonly amount: number;
  readonly currency: string;
  readonly invoiceId: string | null;
}

/** The SSE event types of the stream (besides `gap`). */
export type LiveEventKind = 'click' | 'lead' | 'sale';

/** An event as the hub holds it: its place in this instance's sequence and in its tenant's, its tenant, its type and its view. */
export interface LiveClick extends FilterableClick {
  /** Its place among every click of this instance (the replay window's order); never sent. */
  readonly seq: number;
  /** Its place among its tenant's clicks on this instance: the `<n>` of its event id. */
  readonly tenantSeq: number;
  /** Epoch ms it reached this instance (the replay window's clock). */
  readonly at: number;
  readonly tenantId: string;
  /** The SSE event type: a click, or a lead or sale counted for one of the tenant's links. */
  readonly kind: LiveEventKind;
  readonly view: LiveClickView | LiveConversionView | LiveSaleView;
}

/** What a new stream starts with: what to replay, and whether a gap comes first. */
export interface Resume {
  readonly replay: readonly LiveClick[];
  /** Why the client may have missed clicks: its id is older than the window, or not of this instance (a restart, another instance). */
  readonly gap: 'expired' | 'unknown' | null;
}

export interface LiveClickHubOptions {
  /** Clicks the replay window holds at most (ANALYTICS_STREAM_REPLAY_EVENTS). */
  readonly replayEvents: number;
  /** Seconds the replay window reaches back at most (ANALYTICS_STREAM_REPLAY_SECONDS). */
  readonly replaySeconds: number;
  /** Open streams per tenant on this instance (ANALYTICS_STREAM_MAX_PER_TENANT). */
  readonly maxPerTenant: number;
  readonly instanceId?: string;
  readonly now?: () => number;
  /** A start that failed (a broker down) is tried again after this (default 5 s). */
  readonly restartMs?: number;
  /** Event keys of leads and sales remembered to stream each once (default 10 000; a resend of one older is streamed again). */
  readonly rememberedConversions?: number;
  readonly onError?: (message: string) => void;
}

type Listener = (event: LiveClick) => void;

/** One open stream as the hub knows it: its tenant, where its clicks go, how to end it. */
export interface Subscription {
  /** Stops delivery and frees the stream's slot (idempotent). */
  close(): void;
}

/**
 * The live click stream of one analytics instance (docs/design.md, "Live click stream"): a consumer
 * of the click topic of its own (LIVE_CLICK_SOURCE: from the end, nothing committed) numbers each
 * click of a tenant `<instanceId>.<n>`, n counting that tenant's clicks only (a count over every
 * tenant would tell each tenant the others' click volume), keeps it in the replay window, and hands
 * it to the open streams of its tenant. Orphan visits (no tenant) are not streamed. With a
 * conversions source (LIVE_CONVERSION_SOURCE, read the same way), the tenant's leads and sales
 * join its sequence, window and streams as `lead` and `sale` events, each event key once.
 */
export class LiveClickHub {
  readonly instanceId: string;
  private readonly ring: ReplayRing<LiveClick>;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly enders = new Set<() => void>();
  private readonly open = new Map<string, number>();
  private readonly now: () => number;
  private seq = 0;
  /** Tenant -> its clicks numbered here so far (the last event id's n); one number per tenant that had a click since start. */
  private readonly tenantSeqs = new Map<string, number>();
  private clicks = 0;
  private conversionsSeen = 0;
  /** `tenant/event key` of the leads and sales streamed lately, oldest first: a resend of one (a retry whose first send landed) is not streamed twice. */
  private readonly conversionKeys = new Set<string>();
  private stopped = false;
  private readonly retries = new Set<NodeJS.Timeout>();

  constructor(
    private readonly source: ClickEventSource,
    private readonly classifier: Pick<UserAgentClassifier, 'classify'>,
    private readonly options: LiveClickHubOptions,
    private readonly conversions: ConversionEventSource | null = null,
  ) {
    this.instanceId = options.instanceId ?? randomUUID().replace(/-/g, '').slice(0, 12);
    this.now = options.now ?? Date.now;
    this.ring = new ReplayRing<LiveClick>(options.replayEvents, options.replaySeconds * 1000, this.now);
  }

  /** Starts the consumers; one that fails to start (Kafka down) is started again until stop(). */
  start(): void {
    this.stopped = false;
    this.keepStarting('click', () => this.source.start(async (batch) => this.accept(batch)));
    const conversions = this.conversions;
    if (conversions) this.keepStarting('conversion', () => conversions.start(async (batch) => this.acceptConversions(batch)));
  }

  private keepStarting(what: string, start: () => Promise<void>): void {
    start().catch((error: unknown) => {
      if (this.stopped) return;
      this.options.onError?.(`live ${what} consumer did not start (${(error as Error)?.message}); trying again`);
      const retry = setTimeout(() => {
        this.retries.delete(retry);
        if (!this.stopped) this.keepStarting(what, start);
      }, this.options.restartMs ?? 5000);
      this.retries.add(retry);
    });
  }

  /** Ends every open stream and the consumers. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const retry of this.retries) clearTimeout(retry);
    this.retries.clear();
    this.endStreams();
    await this.source.close();
    await this.conversions?.close();
  }

  /** Ends every open stream (before the HTTP server closes: it waits for open connections). */
  endStreams(): void {
    for (const end of [...this.enders]) end();
  }

  /** Numbers, keeps and hands out the clicks of a batch (synchronous: a stream opening between two clicks sees both or neither). */
  accept(batch: Pick<ClickBatch, 'messages'>): void {
    for (const { event } of batch.messages) {
      if (event.kind !== 'click' || event.tenantId === '') continue;
      this.clicks++;
      this.hand(this.toLive(event));
    }
  }

  /**
   * Numbers, keeps and hands out the leads and sales of a batch of the conversions topic, each event
   * key once while remembered (the consumer's counting guard, docs/design.md "Conversions"; a
   * resend after a send whose answer was lost is on the topic twice).
   */
  acceptConversions(batch: Pick<ConversionBatch, 'messages'>): void {
    for (const { event } of batch.messages) {
      if ((event.kind !== 'lead' && event.kind !== 'sale') || event.tenantId === '') continue;
      const key = `${event.tenantId}/${event.key}`;
      if (this.conversionKeys.has(key)) continue;
      this.conversionKeys.add(key);
      while (this.conversionKeys.size > Math.max(1, this.options.rememberedConversions ?? 10_000)) {
        this.conversionKeys.delete(this.conversionKeys.values().next().value!);
      }
      this.conversionsSeen++;
      this.hand(this.toLiveConversion(event));
    }
  }

  private hand(event: LiveClick): void {
    this.ring.push(event);
    const listeners = this.listeners.get(event.tenantId);
    if (listeners) for (const listener of listeners) listener(event);
  }

  /**
   * Opens a stream of the tenant's clicks: the clicks to replay after `lastEventId` (with the gap,
   * if any), then each new click given to `listener`, in order. A tenant at its limit of open
   * streams on this instance gets 429 STREAM_LIMIT_REACHED. `end` is called when the hub stops.
   */
  subscribe(tenantId: string, lastEventId: LiveEventId | null, listener: Listener, end: () => void): Resume & Subscription {
    const count = this.open.get(tenantId) ?? 0;
    if (count >= this.options.maxPerTenant) {
      throw new DomainError(ErrorCode.STREAM_LIMIT_REACHED, `at most ${this.options.maxPerTenant} open streams per tenant; close one first`, {
        limit: this.options.maxPerTenant,
        retryAfterSeconds: 5,
      });
    }
    const resume = this.resume(tenantId, lastEventId);
    this.open.set(tenantId, count + 1);
    let listeners = this.listeners.get(tenantId);
    if (!listeners) this.listeners.set(tenantId, (listeners = new Set()));
    listeners.add(listener);
    this.enders.add(end);
    let closed = false;
    return {
      ...resume,
      close: () => {
        if (closed) return;
        closed = true;
        this.enders.delete(end);
        const set = this.listeners.get(tenantId);
        set?.delete(listener);
        if (set?.size === 0) this.listeners.delete(tenantId);
        const left = (this.open.get(tenantId) ?? 1) - 1;
        if (left > 0) this.open.set(tenantId, left);
        else this.open.delete(tenantId);
      },
    };
  }

  /** Open streams on this instance, all tenants. */
  get openStreamCount(): number {
    let n = 0;
    for (const count of this.open.values()) n += count;
    return n;
  }

  /** Clicks numbered since this instance started. */
  get streamedClicks(): number {
    return this.clicks;
  }

  /** Leads and sales numbered since this instance started. */
  get streamedConversions(): number {
    return this.conversionsSeen;
  }

  /** Open streams of a tenant on this instance. */
  openStreams(tenantId: string): number {
    return this.open.get(tenantId) ?? 0;
  }

  /**
   * The tenant's clicks after its click `lastEventId` held in the window. A gap when the next one
   * is no longer held (too many clicks of any tenant since, or too old): the client gets what is held, and is told.
   */
  private resume(tenantId: string, lastEventId: LiveEventId | null): Resume {
    if (lastEventId === null) return { replay: [], gap: null };
    const numbered = this.tenantSeqs.get(tenantId) ?? 0;
    // Another instance's id, or this one's before a restart: nothing here follows from it.
    if (lastEventId.instanceId !== this.instanceId || lastEventId.seq > numbered) return { replay: [], gap: 'unknown' };
    if (lastEventId.seq === numbered) return { replay: [], gap: null };
    const replay = this.ring.all().filter((c) => c.tenantId === tenantId && c.tenantSeq > lastEventId.seq);
    const complete = replay.length > 0 && replay[0].tenantSeq === lastEventId.seq + 1;
    return { replay, gap: complete ? null : 'expired' };
  }

  /** The next place in this instance's sequence and in the tenant's. */
  private number(tenantId: string): { seq: number; tenantSeq: number } {
    const tenantSeq = (this.tenantSeqs.get(tenantId) ?? 0) + 1;
    this.tenantSeqs.set(tenantId, tenantSeq);
    return { seq: ++this.seq, tenantSeq };
  }

  private toLiveConversion(event: ConversionEvent): LiveClick {
    const { seq, tenantSeq } = this.number(event.tenantId);
    const domain = event.domain.toLowerCase();
    const base: LiveConversionView = {
      id: formatEventId({ instanceId: this.instanceId, seq: tenantSeq }),
      time: new Date(event.at).toISOString(),
      domain,
      code: event.code,
      conversionId: event.id,
      eventName: event.eventName,
      customerId: event.customerId,
      clickId: event.clickId,
    };
    const view: LiveConversionView | LiveSaleView =
      event.kind === 'sale' ? { ...base, amount: event.amount, currency: event.currency, invoiceId: event.invoiceId } : base;
    // Not a click: never a bot's (the bots filter's `only` shows none of them).
    return { seq, tenantSeq, at: this.now(), tenantId: event.tenantId, kind: event.kind, domain, code: event.code, linkId: event.linkId, bot: false, view };
  }

  private toLive(event: ClickEvent): LiveClick {
    const { seq, tenantSeq } = this.number(event.tenantId);
    const ua = this.classifier.classify(event.userAgent);
    const domain = event.domain.toLowerCase();
    return {
      seq,
      tenantSeq,
      at: this.now(),
      tenantId: event.tenantId,
      kind: 'click',
      domain,
      code: event.code,
      linkId: event.linkId,
      bot: ua.bot,
      view: {
        id: formatEventId({ instanceId: this.instanceId, seq: tenantSeq }),
        time: new Date(event.occurredAt).toISOString(),
        domain,
        code: event.code,
        country: event.country,
        region: event.region,
        city: event.city,
        referer: event.refererHost,
        device: ua.device,
        browser: ua.browser,
        os: ua.os,
        bot: ua.bot,
        variant: event.variant,
        source: event.source,
        visitor: String(event.visitor),
      },
    };
  }
}
