import Stripe from 'stripe';
import { ClickIds, ConversionEvent, ConversionService, InMemoryConversionStore } from '@shortlink/clicks-domain';
import { DomainError } from '@shortlink/core';
import { SecretBox } from '@shortlink/webhooks-domain';
import { StripeReceiver } from './stripe-receiver';

const stripe = new Stripe('sk_test_unused');
const SECRET = 'whsec_test0123456789abcdefABCDEF';

/** A Stripe event as Stripe signs it: the body and its Stripe-Signature header (the stripe package's own test signer). */
function signed(event: object, secret = SECRET) {
  const body = JSON.stringify(event, null, 2);
  return { body, signature: stripe.webhooks.generateTestHeaderString({ payload: body, secret }) };
}

const checkout = (id: string, object: Record<string, unknown>) => ({
  id,
  object: 'event',
  type: 'checkout.session.completed',
  data: { object: { id: `cs_${id}`, object: 'checkout.session', payment_status: 'paid', amount_total: 4900, currency: 'eur', metadata: {}, ...object } },
});
const invoicePaid = (id: string, object: Record<string, unknown>) => ({
  id,
  object: 'event',
  type: 'invoice.paid',
  data: { object: { object: 'invoice', amount_paid: 1900, currency: 'usd', metadata: {}, ...object } },
});

describe('StripeReceiver (docs/stripe.md)', () => {
  const clickIds = new ClickIds('c'.repeat(40));
  const links = new Map([
    ['41', { tenantId: 't1', domain: 'sho.rt', code: 'abc1234' }],
    ['42', { tenantId: 't2', domain: 'sho.rt', code: 'other12' }],
  ]);

  async function setup() {
    const store = new InMemoryConversionStore();
    const sent: ConversionEvent[] = [];
    const conversions = new ConversionService(
      {
        store,
        sink: { send: async (events) => void sent.push(...events), close: async () => undefined },
        links: { linkById: async (id) => links.get(id) ?? null },
        clickIds,
      },
      { clickIdTtlDays: 90, maxMetadataBytes: 2048 },
    );
    const receiver = new StripeReceiver({ store, conversions, box: new SecretBox('s'.repeat(40)) });
    await receiver.configure('t1', SECRET);
    const receive = (event: object, secret?: string) => {
      const { body, signature } = signed(event, secret);
      return receiver.receive('t1', body, signature);
    };
    return { store, sent, receiver, receive };
  }

  it('keeps the secret sealed and answers only its last four characters', async () => {
    const { store, receiver } = await setup();
    const view = await receiver.view('t1');
    expect(view).toMatchObject({
      endpointPath: '/api/v1/integrations/stripe?tenant=t1',
      webhookSecretHint: 'whsec_…CDEF',
      events: ['checkout.session.completed', 'invoice.paid', 'charge.refunded'],
    });
    expect(JSON.stringify(view)).not.toContain(SECRET);
    expect((await store.stripeSettings('t1'))!.sealedSecret).not.toContain('0123456789');
    await expect(receiver.configure('t1', 'sk_live_nope')).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'webhookSecret' } });
    await expect(receiver.view('t2')).rejects.toMatchObject({ code: 'STRIPE_NOT_CONFIGURED' });
    await receiver.remove('t1');
    await expect(receiver.remove('t1')).rejects.toMatchObject({ code: 'STRIPE_NOT_CONFIGURED' });
  });

  it('refuses a body the secret did not sign, a changed body, no header, and a tenant without a receiver', async () => {
    const { receiver, receive, sent } = await setup();
    const event = checkout('evt_1', { client_reference_id: clickIds.issue('41', Date.now()) });
    await expect(receive(event, 'whsec_someoneElse0123456789')).rejects.toMatchObject({ code: 'STRIPE_SIGNATURE_INVALID' });
    const { body, signature } = signed(event);
    await expect(receiver.receive('t1', body.replace('4900', '9900'), signature)).rejects.toMatchObject({ code: 'STRIPE_SIGNATURE_INVALID' });
    await expect(receiver.receive('t1', body, undefined)).rejects.toMatchObject({ code: 'STRIPE_SIGNATURE_INVALID' });
    await expect(receiver.receive('t2', body, signature)).rejects.toMatchObject({ code: 'STRIPE_NOT_CONFIGURED' });
    const old = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 600 });
    await expect(receiver.receive('t1', body, old)).rejects.toBeInstanceOf(DomainError);
    expect(sent).toEqual([]);
  });

  it('a checkout with the click id is a lead and a sale, once however often Stripe sends it; then the invoice of the same payment counts nothing more', async () => {
    const { receive, sent } = await setup();
    const clickId = clickIds.issue('41', Date.now())!;
    const event = checkout('evt_2', { client_reference_id: clickId, customer: 'cus_S1', invoice: 'in_1', metadata: { customerId: 'user_42' } });
    const first = await receive(event);
    expect(first).toMatchObject({ outcome: 'counted', lead: { duplicate: false }, sale: { duplicate: false } });
    expect(sent.map((e) => [e.kind, e.code, e.customerId, e.amount, e.currency, e.invoiceId])).toEqual([
      ['lead', 'abc1234', 'user_42', 0, '', null],
      ['sale', 'abc1234', 'user_42', 4900, 'EUR', 'in_1'],
    ]);
    expect(await receive(event)).toMatchObject({ outcome: 'duplicate', lead: { duplicate: true }, sale: { duplicate: true } });
    // The subscription's first invoice: the same invoice id, counted by the checkout already.
    expect(await receive(invoicePaid('evt_3', { id: 'in_1', customer: 'cus_S1' }))).toMatchObject({ outcome: 'duplicate' });
    // Its next month: the Stripe customer the checkout linked is the tenant's user_42.
    expect(await receive(invoicePaid('evt_4', { id: 'in_2', customer: 'cus_S1' }))).toMatchObject({ outcome: 'counted', sale: { duplicate: false } });
    expect(sent.slice(2).map((e) => [e.kind, e.customerId, e.amount, e.currency, e.invoiceId])).toEqual([['sale', 'user_42', 1900, 'USD', 'in_2']]);
  });

  it('a checkout without an invoice counts once per event id; metadata.sl_cid carries the click id as well', async () => {
    const { receive, sent } = await setup();
    const event = checkout('evt_5', { metadata: { sl_cid: clickIds.issue('41', Date.now()) }, customer: 'cus_S2' });
    expect(await receive(event)).toMatchObject({ outcome: 'counted' });
    expect(await receive(event)).toMatchObject({ outcome: 'duplicate' });
    expect(sent.map((e) => [e.kind, e.customerId, e.invoiceId])).toEqual([
      ['lead', 'cus_S2', null],
      ['sale', 'cus_S2', 'evt_5'],
    ]);
  });

  it('ignores (200) what is not a conversion of the tenant’s links: other events, no click id and no known customer, another tenant’s click, nothing paid', async () => {
    const { receive, sent } = await setup();
    expect(await receive({ id: 'evt_6', object: 'event', type: 'customer.created', data: { object: { id: 'cus_x' } } })).toMatchObject({ outcome: 'ignored' });
    expect(await receive(checkout('evt_7', { customer: 'cus_unknown' }))).toMatchObject({ outcome: 'ignored', reason: expect.stringContaining('no click id') });
    expect(await receive(checkout('evt_8', { client_reference_id: clickIds.issue('42', Date.now()) }))).toMatchObject({ outcome: 'ignored' });
    expect(await receive(checkout('evt_9', { client_reference_id: 'AAAAAAAAAAAAAAAAAAAAAA' }))).toMatchObject({ outcome: 'ignored' });
    expect(await receive(invoicePaid('evt_10', { id: 'in_9', customer: 'cus_unknown' }))).toMatchObject({ outcome: 'ignored' });
    expect(await receive(checkout('evt_11', { payment_status: 'unpaid', client_reference_id: clickIds.issue('41', Date.now()) }))).toMatchObject({
      outcome: 'ignored',
    });
    expect(sent).toEqual([]);
  });

  it('a customer whose lead the tenant reported under the Stripe customer id buys by invoice', async () => {
    const { receive, sent } = await setup();
    await receive(checkout('evt_12', { client_reference_id: clickIds.issue('41', Date.now()), customer: 'cus_S3', amount_total: 0 }));
    expect(sent.map((e) => e.kind)).toEqual(['lead']);
    expect(await receive(invoicePaid('evt_13', { id: 'in_3', customer: 'cus_S3' }))).toMatchObject({ outcome: 'counted' });
    expect(sent.map((e) => [e.kind, e.customerId, e.amount])).toEqual([
      ['lead', 'cus_S3', 0],
      ['sale', 'cus_S3', 1900],
    ]);
  });

  it('a refund (charge.refunded) is a negative sale of the charge’s customer, of what that event refunded, once however often Stripe sends it', async () => {
    const { receive, sent } = await setup();
    const clickId = clickIds.issue('41', Date.now())!;
    await receive(checkout('evt_buy', { client_reference_id: clickId, customer: 'cus_stripe_r', invoice: 'in_r' }));
    const refunded = (id: string, total: number, before: number | null, object: Record<string, unknown> = {}) => ({
      id,
      object: 'event',
      type: 'charge.refunded',
      data: {
        object: { id: 'ch_r', object: 'charge', amount: 4900, amount_refunded: total, currency: 'eur', customer: 'cus_stripe_r', metadata: {}, ...object },
        ...(before === null ? {} : { previous_attributes: { amount_refunded: before } }),
      },
    });
    const first = await receive(refunded('evt_ref1', 1000, 0));
    expect(first).toMatchObject({ outcome: 'counted', sale: { event: { kind: 'sale', amount: -1000, currency: 'EUR', invoiceId: 'refund:ch_r:1000' } } });
    // Stripe's retry of the same event; then a second partial refund of the same charge: its own part.
    expect(await receive(refunded('evt_ref1', 1000, 0))).toMatchObject({ outcome: 'duplicate' });
    expect(await receive(refunded('evt_ref2', 4900, 1000))).toMatchObject({ outcome: 'counted', sale: { event: { amount: -3900 } } });
    expect(sent.filter((e) => e.amount < 0).map((e) => [e.customerId, e.amount, e.code])).toEqual([
      ['cus_stripe_r', -1000, 'abc1234'],
      ['cus_stripe_r', -3900, 'abc1234'],
    ]);
    // A charge of a customer nobody reported, or nothing more refunded: 200, ignored.
    expect(await receive(refunded('evt_ref3', 500, 0, { id: 'ch_x', customer: 'cus_stranger' }))).toMatchObject({ outcome: 'ignored' });
    expect(await receive(refunded('evt_ref4', 4900, 4900))).toMatchObject({ outcome: 'ignored', reason: 'nothing more was refunded' });
  });
});
