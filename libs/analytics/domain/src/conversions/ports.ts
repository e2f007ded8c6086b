import type { ConversionEvent } from './conversion';

/**
 * Which lead's link a customer's sales go to (docs/analytics.md, "Conversions"): `first`, the link
 * of its first lead (the default), or `last`, of its latest reported click.
 */
export type Attribution = 'first' | 'last';
export const ATTRIBUTIONS: readonly Attribution[] = ['first', 'last'];

/** A customer's first lead: the link its sales are attributed to (first touch; with last touch, its latest click's). */
export interface Customer {
  readonly tenantId: string;
  readonly customerId: string;
  readonly linkId: string;
  readonly domain: string;
  readonly code: string;
  readonly clickId: string;
  readonly createdAt: Date;
}

/**
 * The conversions' own records in the shard-independent database (MySQL meta, SQLite on the embedded
 * profile; docs/design.md, "Conversions"): who each customer's lead came from, and which invoices were
 * counted. Both are decided here, synchronously, so a retried call answers as the first did.
 */
export interface ConversionStore {
  /** Keeps `customer` unless the tenant has that customer already; returns the stored one and whether it is new. */
  addCustomer(customer: Customer): Promise<{ readonly created: boolean; readonly customer: Customer }>;
  customer(tenantId: string, customerId: string): Promise<Customer | null>;
  /** Forgets a customer just added (its event could not be sent). */
  removeCustomer(tenantId: string, customerId: string): Promise<void>;
  /** Claims an invoice id for a sale: false when it was counted before. */
  claimInvoice(tenantId: string, invoiceId: string, at: Date): Promise<boolean>;
  /** Gives a claim back (its event could not be sent). */
  releaseInvoice(tenantId: string, invoiceId: string): Promise<void>;
  /** Moves a customer's attribution to a newer click (last-touch attribution): its link and click id. */
  touchCustomer(customer: Customer): Promise<void>;
  /** The tenant's attribution model of sales: `first` (the default) or `last`. */
  attribution(tenantId: string): Promise<Attribution>;
  setAttribution(tenantId: string, attribution: Attribution): Promise<void>;
  /**
   * The tenant's tags with conversion tracking, each with its click id parameter (docs/design.md,
   * "Conversions"): the links context's TagTrackingStore, kept with the other conversion settings.
   */
  trackedTags(tenantId: string): Promise<ReadonlyMap<string, string>>;
  /** Turns tracking on for a tag with this parameter, or off (null). */
  setTagTracking(tenantId: string, tag: string, conversionParam: string | null): Promise<void>;
  /** The tenant's Stripe receiver (docs/stripe.md), or null when none is configured. */
  stripeSettings(tenantId: string): Promise<StripeSettings | null>;
  /** Keeps the tenant's Stripe receiver (replaces the one it had). */
  saveStripeSettings(settings: StripeSettings): Promise<void>;
  /** Forgets the tenant's Stripe receiver: false when it had none. */
  removeStripeSettings(tenantId: string): Promise<boolean>;
  /** Remembers that a Stripe customer is one of the tenant's customers (whose lead came by a Stripe checkout); the first mapping stays. */
  linkStripeCustomer(tenantId: string, stripeCustomerId: string, customerId: string): Promise<void>;
  /** The tenant's customer id of a Stripe customer, or null when no checkout linked them. */
  stripeCustomer(tenantId: string, stripeCustomerId: string): Promise<string | null>;
}

/**
 * A tenant's Stripe receiver (docs/stripe.md): the signing secret of its Stripe webhook endpoint,
 * sealed (AES-256-GCM under a key derived from SHORTLINK_CODE_SECRET), and the last characters of it
 * the API may show.
 */
export interface StripeSettings {
  readonly tenantId: string;
  readonly sealedSecret: string;
  readonly secretHint: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The conversions topic's producer side (Kafka, or the in-process log on the embedded profile); resolves once the bus holds the events. */
export interface ConversionEventSink {
  send(events: readonly ConversionEvent[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * One batch of the conversions topic, with where it came from: the consumer's guards are those of the
 * clicks (docs/analytics.md, "Exactly once"), keyed by source and partition.
 */
export interface ConversionBatch {
  readonly source: string;
  readonly partition: number;
  readonly messages: ReadonlyArray<{ readonly offset: string; readonly event: ConversionEvent }>;
}

/** A member of the analytics consumer group on the conversions topic: a batch is committed after the handler resolved. */
export interface ConversionEventSource {
  start(handler: (batch: ConversionBatch) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** A link by its id, as conversions need it (the links' repository, which looks on every shard). */
export interface ConversionLinks {
  linkById(linkId: string): Promise<{ readonly tenantId: string; readonly domain: string; readonly code: string } | null>;
}

/** Per-link conversion totals over a range: leads, sales, and revenue per currency (minor units). */
export interface ConversionTotals {
  readonly leads: number;
  readonly sales: number;
  readonly revenue: Readonly<Record<string, number>>;
}

export const CONVERSION_STORE = Symbol('CONVERSION_STORE');
export const CONVERSION_EVENT_SINK = Symbol('CONVERSION_EVENT_SINK');
export const CONVERSION_EVENT_SOURCE = Symbol('CONVERSION_EVENT_SOURCE');
/**
 * ConversionEventSource for the live stream (docs/design.md, "Live click stream"): as
 * LIVE_CLICK_SOURCE, a reader of this instance's own from the end of the conversions topic,
 * committing nothing, so every analytics instance streams every tenant's leads and sales.
 */
export const LIVE_CONVERSION_SOURCE = Symbol('LIVE_CONVERSION_SOURCE');
