import Stripe from 'stripe';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { ConversionCaps, ConversionService, ConversionStore, StripeSettings, TrackResult } from '@shortlink/clicks-domain';
import type { SecretBox } from '@shortlink/webhooks-domain';

/** The Stripe events that become conversions (docs/stripe.md). */
export const STRIPE_EVENTS = ['checkout.session.completed', 'invoice.paid', 'charge.refunded'] as const;

/** Where a Checkout Session's or an invoice's metadata may carry the click id or the tenant's own customer id. */
const CLICK_ID_KEYS = ['sl_cid', 'clickId', 'click_id'];
const CUSTOMER_ID_KEYS = ['customerId', 'customer_id', 'sl_customer_id'];

/** What the receiver made of one Stripe event (the 200 answer: Stripe needs a 2xx for every event it need not send again). */
export interface StripeOutcome {
  readonly eventId: string;
  readonly type: string;
  /** `counted`: a lead and/or a sale counted now; `duplicate`: counted before; `ignored`: not a conversion of the tenant's links (see `reason`). */
  readonly outcome: 'counted' | 'duplicate' | 'ignored';
  readonly reason: string | null;
  readonly lead: TrackResult | null;
  readonly sale: TrackResult | null;
}

/** The receiver as the API shows it: never the secret, only its last characters. */
export interface StripeSettingsView {
  readonly endpointPath: string;
  readonly events: readonly string[];
  readonly webhookSecretHint: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

const SECRET = /^whsec_[A-Za-z0-9+/=_-]{8,200}$/;
const invalidSecret = () =>
  new DomainError(ErrorCode.VALIDATION_FAILED, 'webhookSecret must be the signing secret Stripe shows for your endpoint (whsec_…)', { field: 'webhookSecret' });
const notConfigured = () => new DomainError(ErrorCode.STRIPE_NOT_CONFIGURED, 'no Stripe receiver is configured for this tenant', {});

type Metadata = Record<string, string> | null | undefined;
const fromMetadata = (keys: readonly string[], ...sources: Metadata[]): string | null => {
  for (const m of sources) for (const k of keys) if (m && typeof m[k] === 'string' && m[k].trim() !== '') return m[k].trim();
  return null;
};
const idOf = (v: string | { id: string } | null | undefined): string | null => (typeof v === 'string' ? v : (v?.id ?? null));

/**
 * Stripe's own webhooks, signed with the endpoint's secret (docs/stripe.md): verified with the
 * `stripe` package (`webhooks.constructEvent`: the HMAC-SHA256 of the raw body, a timestamp within
 * five minutes). `checkout.session.completed` carrying a click id (`client_reference_id`, or
 * `metadata.sl_cid`) reports a lead and the sale; one of a known customer (its own id in
 * `metadata.customerId`, or a Stripe customer a checkout linked) reports the sale; `invoice.paid`
 * reports the sale of a known customer; `charge.refunded` a negative sale of a known customer (refund).
 * A sale is idempotent by its invoice id, else by the event id, so Stripe's retries (and the same
 * invoice reported by `track/sale`) count once.
 */
export class StripeReceiver {
  // The API key is never used: the receiver only verifies signatures, it calls no Stripe API.
  private readonly stripe = new Stripe('sk_unused_by_shortlink');

  constructor(
    private readonly parts: {
      store: ConversionStore;
      conversions: ConversionService;
      box: SecretBox;
      /** The tenant's plan's caps (metadata bytes, events per 30 days), as the track API applies them. */
      caps?: (tenantId: string) => Promise<ConversionCaps>;
    },
    private readonly clock: Clock = systemClock,
  ) {}

  async configure(tenantId: string, webhookSecret: unknown): Promise<StripeSettingsView> {
    if (typeof webhookSecret !== 'string' || !SECRET.test(webhookSecret)) throw invalidSecret();
    const now = new Date(this.clock.now());
    const before = await this.parts.store.stripeSettings(tenantId);
    await this.parts.store.saveStripeSettings({
      tenantId,
      sealedSecret: this.parts.box.seal(webhookSecret),
      secretHint: webhookSecret.slice(-4),
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
    });
    return this.view(tenantId);
  }

  async view(tenantId: string): Promise<StripeSettingsView> {
    const settings = await this.parts.store.stripeSettings(tenantId);
    if (!settings) throw notConfigured();
    return viewOf(settings);
  }

  async remove(tenantId: string): Promise<void> {
    if (!(await this.parts.store.removeStripeSettings(tenantId))) throw notConfigured();
  }

  /** Verifies and handles one delivery; 400 `STRIPE_SIGNATURE_INVALID` for a body the tenant's secret did not sign. */
  async receive(tenantId: string, rawBody: string | undefined, signature: string | undefined): Promise<StripeOutcome> {
    const settings = tenantId ? await this.parts.store.stripeSettings(tenantId) : null;
    if (!settings) throw notConfigured();
    let event: Stripe.Event;
    try {
      if (!rawBody || !signature) throw new Error('no body or no Stripe-Signature header');
      event = this.stripe.webhooks.constructEvent(rawBody, signature, this.parts.box.open(settings.sealedSecret));
    } catch (error) {
      throw new DomainError(
        ErrorCode.STRIPE_SIGNATURE_INVALID,
        'the Stripe-Signature header does not sign this body with the configured secret (or is older than five minutes)',
        {},
        { cause: error },
      );
    }
    if (event.type !== 'checkout.session.completed' && event.type !== 'invoice.paid' && event.type !== 'charge.refunded')
      return ignored(event, `${event.type} is not a conversion (the receiver counts ${STRIPE_EVENTS.join(', ')})`);
    const caps = (await this.parts.caps?.(tenantId)) ?? {};
    if (event.type === 'checkout.session.completed') return this.checkout(tenantId, event, event.data.object, caps);
    if (event.type === 'charge.refunded') return this.refund(tenantId, event, event.data.object, event.data.previous_attributes, caps);
    return this.invoice(tenantId, event, event.data.object, caps);
  }

  private async checkout(tenantId: string, event: Stripe.Event, session: Stripe.Checkout.Session, caps: ConversionCaps): Promise<StripeOutcome> {
    if (session.payment_status === 'unpaid') return ignored(event, 'the session is not paid');
    const stripeCustomer = idOf(session.customer);
    const clickId = session.client_reference_id?.trim() || fromMetadata(CLICK_ID_KEYS, session.metadata);
    const ownId = fromMetadata(CUSTOMER_ID_KEYS, session.metadata);
    let lead: TrackResult | null = null;
    let customerId: string | null = null;
    if (clickId) {
      const candidate = ownId ?? stripeCustomer ?? session.id;
      try {
        lead = await this.parts.conversions.lead(
          tenantId,
          {
            clickId,
            customerId: candidate,
            eventName: 'Stripe checkout',
            metadata: { stripeEventId: event.id },
          },
          caps,
        );
        customerId = candidate;
      } catch (error) {
        // A click id that is not one of the tenant's clicks: still a sale when the customer is known.
        if (!(error instanceof DomainError && error.code === ErrorCode.CLICK_ID_NOT_FOUND)) throw error;
      }
    }
    customerId ??= await this.knownCustomer(tenantId, [ownId, stripeCustomer]);
    if (customerId === null)
      return ignored(
        event,
        clickId
          ? 'the click id is not a click of your links, and the customer is not known'
          : 'no click id (client_reference_id or metadata.sl_cid) and no known customer',
      );
    if (stripeCustomer && stripeCustomer !== customerId) await this.parts.store.linkStripeCustomer(tenantId, stripeCustomer, customerId);
    const amount = session.amount_total ?? 0;
    if (amount === 0 || !session.currency) return outcome(event, lead, null, 'nothing was paid');
    const sale = await this.parts.conversions.sale(
      tenantId,
      {
        customerId,
        amount,
        currency: session.currency,
        eventName: 'Stripe checkout',
        invoiceId: idOf(session.invoice) ?? event.id,
        metadata: { stripeEventId: event.id, checkoutSession: session.id },
      },
      caps,
    );
    return outcome(event, lead, sale, null);
  }

  private async invoice(tenantId: string, event: Stripe.Event, invoice: Stripe.Invoice, caps: ConversionCaps): Promise<StripeOutcome> {
    if (!invoice.id) return ignored(event, 'the invoice has no id');
    const stripeCustomer = idOf(invoice.customer);
    const subscriptionMetadata = invoice.parent?.subscription_details?.metadata;
    const ownId = fromMetadata(CUSTOMER_ID_KEYS, invoice.metadata, subscriptionMetadata);
    const linked = stripeCustomer ? await this.parts.store.stripeCustomer(tenantId, stripeCustomer) : null;
    const customerId = await this.knownCustomer(tenantId, [ownId, linked, stripeCustomer]);
    if (customerId === null) return ignored(event, 'the invoice’s customer is not known (no lead was reported for it)');
    if (invoice.amount_paid === 0) return ignored(event, 'nothing was paid');
    const sale = await this.parts.conversions.sale(
      tenantId,
      {
        customerId,
        amount: invoice.amount_paid,
        currency: invoice.currency,
        eventName: 'Stripe invoice paid',
        invoiceId: invoice.id,
        metadata: { stripeEventId: event.id },
      },
      caps,
    );
    return outcome(event, null, sale, null);
  }

  /**
   * A refund (docs/stripe.md): a negative sale of the charge's customer, of what this event refunded
   * (`amount_refunded`, which Stripe counts up over a charge's refunds, minus the amount before it,
   * from the event's `previous_attributes`). Idempotent by the charge and its refunded total: Stripe's
   * retries of one refund count once, a second partial refund of the same charge counts its own part.
   */
  private async refund(
    tenantId: string,
    event: Stripe.Event,
    charge: Stripe.Charge,
    previous: Partial<Stripe.Charge> | undefined,
    caps: ConversionCaps,
  ): Promise<StripeOutcome> {
    if (!charge.id) return ignored(event, 'the charge has no id');
    const refunded = charge.amount_refunded ?? 0;
    const before = typeof previous?.amount_refunded === 'number' ? previous.amount_refunded : 0;
    if (refunded - before <= 0) return ignored(event, 'nothing more was refunded');
    const stripeCustomer = idOf(charge.customer);
    const ownId = fromMetadata(CUSTOMER_ID_KEYS, charge.metadata);
    const linked = stripeCustomer ? await this.parts.store.stripeCustomer(tenantId, stripeCustomer) : null;
    const customerId = await this.knownCustomer(tenantId, [ownId, linked, stripeCustomer]);
    if (customerId === null) return ignored(event, 'the charge’s customer is not known (no lead was reported for it)');
    const sale = await this.parts.conversions.sale(
      tenantId,
      {
        customerId,
        amount: -(refunded - before),
        currency: charge.currency,
        eventName: 'Stripe refund',
        invoiceId: `refund:${charge.id}:${refunded}`,
        metadata: { stripeEventId: event.id, charge: charge.id },
      },
      caps,
    );
    return outcome(event, null, sale, null);
  }

  /** The first candidate that is a customer with a lead (own id, then a linked Stripe customer, then the Stripe customer id itself). */
  private async knownCustomer(tenantId: string, candidates: ReadonlyArray<string | null>): Promise<string | null> {
    for (const c of candidates) {
      if (!c) continue;
      if (await this.parts.store.customer(tenantId, c)) return c;
      const linked = c.startsWith('cus_') ? await this.parts.store.stripeCustomer(tenantId, c) : null;
      if (linked && (await this.parts.store.customer(tenantId, linked))) return linked;
    }
    return null;
  }
}

const viewOf = (s: StripeSettings): StripeSettingsView => ({
  endpointPath: `/api/v1/integrations/stripe?tenant=${encodeURIComponent(s.tenantId)}`,
  events: STRIPE_EVENTS,
  webhookSecretHint: `whsec_…${s.secretHint}`,
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
});

const ignored = (event: Stripe.Event, reason: string): StripeOutcome => ({
  eventId: event.id,
  type: event.type,
  outcome: 'ignored',
  reason,
  lead: null,
  sale: null,
});

function outcome(event: Stripe.Event, lead: TrackResult | null, sale: TrackResult | null, reason: string | null): StripeOutcome {
  const counted = (lead && !lead.duplicate) || (sale && !sale.duplicate);
  return { eventId: event.id, type: event.type, outcome: counted ? 'counted' : 'duplicate', reason, lead, sale };
}
