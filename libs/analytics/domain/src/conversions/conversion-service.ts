import { randomBytes } from 'crypto';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { ClickIds } from '../click-id';
import { checkLead, checkSale, ConversionEvent } from './conversion';
import { Attribution, ATTRIBUTIONS, ConversionEventSink, ConversionLinks, ConversionStore, Customer } from './ports';

export interface ConversionServiceOptions {
  /** How long after its click a click id may be reported (days, default 90). */
  readonly clickIdTtlDays: number;
  readonly maxMetadataBytes: number;
}

/** What a track call answers: the event, or (`duplicate`) that it was counted before and nothing was sent. */
export interface TrackResult {
  readonly duplicate: boolean;
  readonly event: ConversionEvent | null;
}

/**
 * What the caller's plan allows (docs/analytics.md, "Conversions"): fewer metadata bytes than the
 * service's maximum, and `admit`, which takes one counted event of the plan's month or throws
 * (CONVERSION_LIMIT_REACHED). Asked only for an event that is new: a duplicate costs nothing.
 */
export interface ConversionCaps {
  readonly maxMetadataBytes?: number;
  readonly admit?: () => Promise<void>;
}

/** Told of each conversion sent (the webhooks' `lead.created` and `sale.created`). */
export type ConversionObserver = (event: ConversionEvent) => void;

const DAY_MS = 86_400_000;
/** How long a link found by a lead is kept, and how many are (the oldest goes first). */
const LINK_CACHE_MS = 10_000;
const LINK_CACHE_ENTRIES = 10_000;
const clickIdNotFound = () =>
  new DomainError(ErrorCode.CLICK_ID_NOT_FOUND, 'no click of your links has this click id, or it is older than the attribution window', { field: 'clickId' });

/**
 * Leads and sales (docs/analytics.md, "Conversions"). A lead opens its click id (no store of clicks:
 * the id names its link and its minute, docs/design.md "Conversions"), checks it is a click of one
 * of the caller's links within the window, keeps the customer's first lead and sends the event; a
 * sale goes to the link of its customer's first lead (first touch), once per invoice id. The event is
 * on the bus when the call answers; a send that fails gives the customer or the invoice back and
 * answers 503, so a retry counts it.
 */
export class ConversionService {
  private readonly producer = randomBytes(4).toString('hex');
  private seq = 0;
  /**
   * Links by id, as leads found them, for LINK_CACHE_MS: a campaign's leads name a few links, and
   * each lookup asks every shard. A link's domain and code never change; a link deleted or moved to
   * another tenant is seen at most that late (docs/design.md, "Conversions").
   */
  private readonly linkCache = new Map<string, { readonly at: number; readonly link: { tenantId: string; domain: string; code: string } | null }>();

  constructor(
    private readonly parts: { store: ConversionStore; sink: ConversionEventSink; links: ConversionLinks; clickIds: ClickIds; observer?: ConversionObserver },
    private readonly options: ConversionServiceOptions,
    private readonly clock: Clock = systemClock,
  ) {}

  async lead(tenantId: string, body: unknown, caps: ConversionCaps = {}): Promise<TrackResult> {
    const input = checkLead(body, this.metadataBytes(caps));
    const now = this.clock.now();
    const opened = this.parts.clickIds.open(input.clickId);
    if (opened === null || opened.issuedAt < now - this.options.clickIdTtlDays * DAY_MS || opened.issuedAt > now + 60_000) throw clickIdNotFound();
    const link = await this.linkOf(opened.linkId, now);
    if (link === null || link.tenantId !== tenantId) throw clickIdNotFound();
    const candidate: Customer = {
      tenantId,
      customerId: input.customerId,
      linkId: opened.linkId,
      domain: link.domain,
      code: link.code,
      clickId: input.clickId,
      createdAt: new Date(now),
    };
    const { created, customer } = await this.unavailableAs(() => this.parts.store.addCustomer(candidate));
    if (!created) {
      // Last touch (the tenant's setting): a newer click of a known customer becomes the one its sales go to; no lead is counted.
      const before = this.parts.clickIds.open(customer.clickId);
      if (customer.clickId !== input.clickId && (before === null || before.issuedAt <= opened.issuedAt))
        if ((await this.unavailableAs(() => this.parts.store.attribution(tenantId))) === 'last')
          await this.unavailableAs(() => this.parts.store.touchCustomer(candidate));
      return { duplicate: true, event: null };
    }
    await this.admit(caps, () => this.parts.store.removeCustomer(tenantId, customer.customerId));
    const event = this.eventOf('lead', `lead:${customer.customerId}`, customer, now, {
      eventName: input.eventName,
      amount: 0,
      currency: '',
      invoiceId: null,
      metadata: input.metadata,
    });
    await this.send(event, () => this.parts.store.removeCustomer(tenantId, customer.customerId));
    return { duplicate: false, event };
  }

  private async linkOf(linkId: string, now: number): Promise<{ tenantId: string; domain: string; code: string } | null> {
    const held = this.linkCache.get(linkId);
    if (held && now - held.at < LINK_CACHE_MS) return held.link;
    const found = await this.unavailableAs(() => this.parts.links.linkById(linkId));
    const link = found && { tenantId: found.tenantId, domain: found.domain, code: found.code };
    if (this.linkCache.size >= LINK_CACHE_ENTRIES) this.linkCache.delete(this.linkCache.keys().next().value!);
    this.linkCache.set(linkId, { at: now, link });
    return link;
  }

  /** The tenant's conversion settings: its attribution model (`first` unless set). */
  async settings(tenantId: string): Promise<{ attribution: Attribution }> {
    return { attribution: await this.unavailableAs(() => this.parts.store.attribution(tenantId)) };
  }

  async configure(tenantId: string, body: unknown): Promise<{ attribution: Attribution }> {
    const attribution = (body as { attribution?: unknown } | null)?.attribution;
    if (!ATTRIBUTIONS.includes(attribution as Attribution))
      throw new DomainError(ErrorCode.VALIDATION_FAILED, 'attribution must be "first" or "last"', { field: 'attribution' });
    await this.unavailableAs(() => this.parts.store.setAttribution(tenantId, attribution as Attribution));
    return { attribution: attribution as Attribution };
  }

  async sale(tenantId: string, body: unknown, caps: ConversionCaps = {}): Promise<TrackResult> {
    const input = checkSale(body, this.metadataBytes(caps));
    const now = this.clock.now();
    const customer = await this.unavailableAs(() => this.parts.store.customer(tenantId, input.customerId));
    if (customer === null)
      throw new DomainError(ErrorCode.CUSTOMER_NOT_FOUND, 'no lead was reported for this customer; report its lead first', { field: 'customerId' });
    const id = this.newId();
    if (input.invoiceId !== null && !(await this.unavailableAs(() => this.parts.store.claimInvoice(tenantId, input.invoiceId!, new Date(now)))))
      return { duplicate: true, event: null };
    await this.admit(caps, async () => {
      if (input.invoiceId !== null) await this.parts.store.releaseInvoice(tenantId, input.invoiceId);
    });
    const key = input.invoiceId === null ? `sale:${id}` : `invoice:${input.invoiceId}`;
    const event = this.eventOf('sale', key, customer, now, input, id);
    await this.send(event, async () => {
      if (input.invoiceId !== null) await this.parts.store.releaseInvoice(tenantId, input.invoiceId);
    });
    return { duplicate: false, event };
  }

  private eventOf(
    kind: ConversionEvent['kind'],
    key: string,
    customer: Customer,
    at: number,
    fields: Pick<ConversionEvent, 'eventName' | 'amount' | 'currency' | 'invoiceId' | 'metadata'>,
    id = this.newId(),
  ): ConversionEvent {
    return {
      kind,
      id,
      key,
      tenantId: customer.tenantId,
      at,
      linkId: customer.linkId,
      domain: customer.domain,
      code: customer.code,
      customerId: customer.customerId,
      clickId: customer.clickId,
      ...this.clickAtOf(customer.clickId),
      eventName: fields.eventName,
      amount: fields.amount,
      currency: fields.currency,
      invoiceId: fields.invoiceId,
      metadata: fields.metadata,
    };
  }

  /** The minute of a click (what its id says), for the consumer's lookup of its dimensions. */
  private clickAtOf(clickId: string): { clickAt?: number } {
    const opened = this.parts.clickIds.open(clickId);
    return opened === null ? {} : { clickAt: opened.issuedAt };
  }

  private metadataBytes(caps: ConversionCaps): number {
    return Math.min(this.options.maxMetadataBytes, caps.maxMetadataBytes ?? Infinity);
  }

  /** The plan's admission of a new event; refused, what was claimed for it is given back. */
  private async admit(caps: ConversionCaps, undo: () => Promise<void>): Promise<void> {
    if (!caps.admit) return;
    try {
      await caps.admit();
    } catch (error) {
      await undo().catch(() => undefined);
      throw error;
    }
  }

  /** `cnv_` + this process + its count + random bits: unique without a round trip. */
  private newId(): string {
    return `cnv_${this.producer}${(this.seq++).toString(16).padStart(8, '0')}${randomBytes(8).toString('hex')}`;
  }

  private async send(event: ConversionEvent, undo: () => Promise<void>): Promise<void> {
    try {
      await this.parts.sink.send([event]);
    } catch (error) {
      await undo().catch(() => undefined);
      throw new DomainError(
        ErrorCode.DEPENDENCY_UNAVAILABLE,
        'the event bus did not take the conversion; retry shortly',
        { retryAfterSeconds: 1 },
        { cause: error },
      );
    }
    this.parts.observer?.(event);
  }

  private async unavailableAs<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'a store is unavailable; retry shortly', { retryAfterSeconds: 1 }, { cause: error });
    }
  }
}
