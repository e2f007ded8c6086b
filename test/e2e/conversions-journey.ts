/// <reference lib="dom" />
import { mkdirSync, mkdtempSync, rmSync } from 'fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'http';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { BrowserContext, chromium, Page } from 'playwright-core';
import Stripe from 'stripe';
import { Endpoints, eventually } from '@shortlink/harness';
import { clickIdFromCookies } from '@shortlink/track';
import { CHROMIUM, HEADLESS_CHROMIUM_ARGS } from './chromium';
import { API_KEY, BROWSER_UA } from './support';
import { api } from './tenant-journey';
import { Receiver } from './webhooks-journey';

/** Signs test events as Stripe does (the stripe package's own signer); the key is never used. */
const stripe = new Stripe('sk_test_unused');
const STRIPE_SECRET = 'whsec_e2e0123456789abcdefABCDEFwxyz';
const PASSWORD = 'correct horse battery staple';

/** A Stripe event's body and its Stripe-Signature header. */
export function stripeDelivery(event: object, secret = STRIPE_SECRET): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(event);
  return { body, headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret }) } };
}

async function postStripe(generation: string, path: string, delivery: { body: string; headers: Record<string, string> }) {
  const res = await fetch(`${generation}${path}`, { method: 'POST', headers: delivery.headers, body: delivery.body });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- checked by the assertions that read it
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
}

/**
 * Conversions over HTTP on every profile (docs/analytics.md, "Conversions"): a tenant turns tracking
 * on for a link, a visitor clicks it and lands with a click id, the tenant's backend reports a lead
 * and a sale (and the same sale again, and a click id nobody issued) with a key of the scope
 * `conversions:write`, and the link's stats count 1 lead, 1 sale and its revenue; the webhooks get
 * `lead.created` and `sale.created`. Bad input answers problem+json with stable codes.
 */
/**
 * `newTenant(plan)`: a new tenant's key. The profile runs with PLAN_FREE_CONVERSIONS_PER_MONTH=3 and
 * PLAN_FREE_CONVERSION_METADATA_BYTES=64 (the plan caps' test).
 */
export function describeConversionsJourney(endpoints: () => Endpoints, newTenant: (plan?: 'free' | 'paid') => Promise<{ apiKey: string }>) {
  describe('conversions: click id, lead, sale, stats and webhooks', () => {
    let receiver: Receiver;
    beforeAll(async () => {
      receiver = new Receiver();
      await receiver.start();
    });
    afterAll(() => receiver?.stop());

    it('a tracked click carries a click id to the target; a lead and a sale count once each, with the revenue, in the stats and the webhooks', async () => {
      const { apiKey } = await newTenant();
      const g = endpoints().generation;
      // A key for the tenant's backend: conversions only.
      const made = await api(g, 'POST', '/api/v1/keys', apiKey, { name: 'backend', scopes: ['conversions:write'] });
      expect(made.status).toBe(201);
      const backendKey = made.body.apiKey as string;
      const hook = await api(g, 'POST', '/api/v1/webhooks', apiKey, { url: receiver.url, events: ['lead.created', 'sale.created'] });
      expect(hook.status).toBe(201);
      receiver.secrets = [hook.body.secret as string];

      const link = await api(g, 'POST', '/api/v1/links', apiKey, { url: 'https://shop.example/landing?ref=x', trackConversions: true });
      expect(link.status).toBe(201);
      expect(link.body).toMatchObject({ trackConversions: true, conversionParam: 'sl_cid' });
      const code = link.body.code as string;
      const click = await fetch(`${endpoints().redirect}/${code}`, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA } });
      expect(click.status).toBe(302);
      const location = new URL(click.headers.get('location')!);
      expect(location.origin + location.pathname).toBe('https://shop.example/landing');
      expect(location.searchParams.get('ref')).toBe('x');
      const clickId = location.searchParams.get('sl_cid')!;
      expect(clickId).toMatch(/^[A-Za-z0-9_-]{22}$/);

      // A key one character off cannot report (a different last character, whatever the key's was); the backend key can.
      expect(
        (
          await api(g, 'POST', '/api/v1/track/lead', `${backendKey.slice(0, -1)}${backendKey.endsWith('x') ? 'y' : 'x'}`, {
            clickId,
            eventName: 'Sign up',
            customerId: 'cus_1',
          })
        ).status,
      ).toBe(401);
      const refusedScope = await api(g, 'GET', '/api/v1/links', backendKey);
      expect(refusedScope.status).toBe(403);
      const lead = await api(g, 'POST', '/api/v1/track/lead', backendKey, { clickId, eventName: 'Sign up', customerId: 'cus_1', metadata: { plan: 'pro' } });
      expect(lead.status).toBe(201);
      expect(lead.body).toMatchObject({ duplicate: false, event: { kind: 'lead', link: { code }, customerId: 'cus_1', clickId } });
      const sale = { customerId: 'cus_1', amount: 4900, currency: 'EUR', eventName: 'Purchase', invoiceId: 'inv_1' };
      const sold = await api(g, 'POST', '/api/v1/track/sale', backendKey, sale);
      expect(sold.status).toBe(201);
      expect(sold.body).toMatchObject({ duplicate: false, event: { kind: 'sale', link: { code }, amount: 4900, currency: 'EUR', invoiceId: 'inv_1' } });
      const again = await api(g, 'POST', '/api/v1/track/sale', backendKey, sale);
      expect(again.status).toBe(201);
      expect(again.body).toEqual({ duplicate: true, event: null });

      const unknown = await api(g, 'POST', '/api/v1/track/lead', backendKey, { clickId: 'AAAAAAAAAAAAAAAAAAAAAA', eventName: 'Sign up', customerId: 'cus_2' });
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(unknown.body).toMatchObject({ code: 'CLICK_ID_NOT_FOUND', field: 'clickId' });
      const noLead = await api(g, 'POST', '/api/v1/track/sale', backendKey, { ...sale, customerId: 'cus_2', invoiceId: 'inv_2' });
      expect(noLead.status).toBe(404);
      expect(noLead.body).toMatchObject({ code: 'CUSTOMER_NOT_FOUND' });
      for (const [path, body, field] of [
        ['/api/v1/track/sale', { ...sale, currency: 'EUO' }, 'currency'],
        ['/api/v1/track/sale', { ...sale, amount: 49.5 }, 'amount'],
        ['/api/v1/track/lead', { clickId, eventName: 'Sign up', customerId: 'cus_3', metadata: { blob: 'x'.repeat(5000) } }, 'metadata'],
      ] as const) {
        const bad = await api(g, 'POST', path, backendKey, body);
        expect(bad.status).toBe(400);
        expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(bad.body).toMatchObject({ code: 'VALIDATION_FAILED' });
        if (bad.body.field !== undefined) expect(bad.body.field).toBe(field);
      }

      // Counted exactly once, beside the click, in the link's stats.
      await eventually(
        'the stats count the lead and the sale',
        async () => {
          const stats = await api(endpoints().analytics, 'GET', `/api/v1/links/${code}/stats?granularity=day`, apiKey);
          expect(stats.status).toBe(200);
          expect(stats.body.totals).toEqual({ clicks: 1, visitors: 1, leads: 1, sales: 1, revenue: { EUR: 4900 } });
          return true;
        },
        20_000,
      );
      await eventually(
        'the webhooks deliver lead.created and sale.created',
        async () => {
          expect(receiver.of('lead.created').map(([, m]) => m.data.conversion)).toEqual([expect.objectContaining({ customerId: 'cus_1', clickId })]);
          expect(receiver.of('sale.created').map(([, m]) => m.data.conversion)).toEqual([
            expect.objectContaining({ amount: 4900, currency: 'EUR', link: expect.objectContaining({ code }) }),
          ]);
          return true;
        },
        20_000,
      );
    });

    it('which variant converts: each lead and sale counts under the dimensions of its click (variant, device), beside the clicks of each value, and per bucket', async () => {
      const { apiKey } = await newTenant();
      const g = endpoints().generation;
      const variants = [
        { url: 'https://shop.example/a', weight: 1 },
        { url: 'https://shop.example/b', weight: 1 },
      ];
      const link = await api(g, 'POST', '/api/v1/links', apiKey, { url: 'https://shop.example/a', trackConversions: true, variants });
      expect(link.status).toBe(201);
      const code = link.body.code as string;
      // Visitors (a user agent each: variants stick to a visitor) until both variants were served.
      const clicks: Record<string, string[]> = { '/a': [], '/b': [] };
      for (let i = 0; i < 40 && (clicks['/a'].length < 2 || clicks['/b'].length < 1); i++) {
        const r = await fetch(`${endpoints().redirect}/${code}`, { redirect: 'manual', headers: { 'user-agent': `${BROWSER_UA} v${i}` } });
        const location = new URL(r.headers.get('location')!);
        clicks[location.pathname].push(location.searchParams.get('sl_cid')!);
      }
      const [a, b] = [clicks['/a'], clicks['/b']];
      expect(a.length).toBeGreaterThanOrEqual(2);
      expect(b.length).toBeGreaterThanOrEqual(1);
      // Reported at once, before the clicks may have reached analytics: the consumer waits for them.
      expect((await api(g, 'POST', '/api/v1/track/lead', apiKey, { clickId: a[0], eventName: 'Sign up', customerId: 'va' })).status).toBe(201);
      expect((await api(g, 'POST', '/api/v1/track/lead', apiKey, { clickId: b[0], eventName: 'Sign up', customerId: 'vb' })).status).toBe(201);
      const sale = { customerId: 'vb', amount: 4900, currency: 'EUR', eventName: 'Purchase', invoiceId: 'inv_vb' };
      expect((await api(g, 'POST', '/api/v1/track/sale', apiKey, sale)).status).toBe(201);
      const n = a.length + b.length;
      const analytics = endpoints().analytics;
      await eventually(
        'the variant breakdown counts the leads and the sale under their clicks’ variants',
        async () => {
          const byVariant = await api(analytics, 'GET', `/api/v1/stats/conversions/breakdown/variants?code=${code}&granularity=day`, apiKey);
          expect(byVariant.status).toBe(200);
          expect(byVariant.body).toMatchObject({ dimension: 'variants', code, totals: { clicks: n, leads: 2, sales: 1, revenue: { EUR: 4900 } } });
          expect(byVariant.body.items).toEqual([
            { value: '1', clicks: b.length, leads: 1, sales: 1, revenue: { EUR: 4900 }, leadRate: Math.round(10_000 / b.length) / 10_000, saleRate: 1 },
            { value: '0', clicks: a.length, leads: 1, sales: 0, revenue: {}, leadRate: Math.round(10_000 / a.length) / 10_000, saleRate: 0 },
          ]);
          return true;
        },
        30_000,
      );
      // The tenant's links together, by device; as CSV; and per day.
      const byDevice = await api(analytics, 'GET', '/api/v1/stats/conversions/breakdown/devices?granularity=day', apiKey);
      expect(byDevice.body.items).toEqual([expect.objectContaining({ value: 'desktop', clicks: n, leads: 2, sales: 1, revenue: { EUR: 4900 } })]);
      const csv = await fetch(`${analytics}/api/v1/stats/conversions/breakdown/variants?code=${code}&format=csv`, { headers: { 'x-api-key': apiKey } });
      expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
      expect((await csv.text()).split('\r\n').slice(0, 2)).toEqual([
        'value,clicks,leads,sales,revenue,leadRate,saleRate',
        `1,${b.length},1,1,EUR 4900,${Math.round(10_000 / b.length) / 10_000},1`,
      ]);
      const series = await api(analytics, 'GET', `/api/v1/stats/conversions/series?code=${code}&granularity=hour`, apiKey);
      expect(series.status).toBe(200);
      expect(series.body.totals).toMatchObject({ clicks: n, leads: 2, sales: 1, revenue: { EUR: 4900 } });
      const points = series.body.series as Array<{ clicks: number; leads: number; sales: number }>;
      expect(points.reduce((t, p) => [t[0] + p.clicks, t[1] + p.leads, t[2] + p.sales], [0, 0, 0])).toEqual([n, 2, 1]);
      const bad = await api(analytics, 'GET', '/api/v1/stats/conversions/breakdown/planets', apiKey);
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    });

    it('a free plan counts its leads and sales per 30 days (429 CONVERSION_LIMIT_REACHED with Retry-After beyond; duplicates free) and caps metadata lower', async () => {
      const { apiKey } = await newTenant('free');
      const g = endpoints().generation;
      const link = await api(g, 'POST', '/api/v1/links', apiKey, { url: 'https://shop.example/free', trackConversions: true });
      const code = link.body.code as string;
      const click = await fetch(`${endpoints().redirect}/${code}`, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA } });
      const clickId = new URL(click.headers.get('location')!).searchParams.get('sl_cid')!;
      const big = await api(g, 'POST', '/api/v1/track/lead', apiKey, { clickId, eventName: 'Sign up', customerId: 'f1', metadata: { note: 'x'.repeat(80) } });
      expect(big.status).toBe(400);
      expect(big.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'metadata' });
      expect((await api(g, 'POST', '/api/v1/track/lead', apiKey, { clickId, eventName: 'Sign up', customerId: 'f1', metadata: { plan: 'free' } })).status).toBe(
        201,
      );
      const sale = { customerId: 'f1', amount: 500, currency: 'EUR', eventName: 'Purchase' };
      expect((await api(g, 'POST', '/api/v1/track/sale', apiKey, { ...sale, invoiceId: 'f_inv1' })).status).toBe(201);
      expect((await api(g, 'POST', '/api/v1/track/sale', apiKey, { ...sale, invoiceId: 'f_inv2' })).status).toBe(201);
      // The plan's three are counted: a new one is refused, a duplicate still answers as before. The
      // plan windows are shared (Redis on the real stack) with a 250 ms deadline, past which an instance
      // counts on its own (docs/design.md, "Tenants, keys and plans"): on a busy machine one more may
      // get through, so the refusal is awaited over a few new invoices, and the stats count exactly
      // the ones admitted.
      let over: Awaited<ReturnType<typeof api>> | undefined;
      let admitted = 2;
      for (let i = 3; i < 8 && over === undefined; i++) {
        const r = await api(g, 'POST', '/api/v1/track/sale', apiKey, { ...sale, invoiceId: `f_inv${i}` });
        if (r.status === 429) over = r;
        else {
          expect(r.status).toBe(201);
          admitted++;
        }
      }
      expect(over).toBeDefined();
      expect(admitted).toBeLessThanOrEqual(4);
      expect(over!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(over!.body).toMatchObject({ code: 'CONVERSION_LIMIT_REACHED', limit: 3 });
      expect(Number(over!.headers.get('retry-after'))).toBeGreaterThan(86_400);
      expect((await api(g, 'POST', '/api/v1/track/sale', apiKey, { ...sale, invoiceId: 'f_inv1' })).body).toEqual({ duplicate: true, event: null });
      // Refused, nothing was kept: the invoice is not taken (a later retry counts it).
      await eventually(
        'the stats count the admitted ones, not the refused one',
        async () => {
          const stats = await api(endpoints().analytics, 'GET', `/api/v1/links/${code}/stats?granularity=day`, apiKey);
          expect(stats.body.totals).toMatchObject({ leads: 1, sales: admitted, revenue: { EUR: 500 * admitted } });
          return true;
        },
        20_000,
      );
    });

    it('last-touch attribution as the tenant’s setting: a later click of a known customer takes its next sales', async () => {
      const { apiKey } = await newTenant();
      const g = endpoints().generation;
      const clickOf = async (url: string) => {
        const link = await api(g, 'POST', '/api/v1/links', apiKey, { url, trackConversions: true });
        const click = await fetch(`${endpoints().redirect}/${link.body.code}`, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA } });
        return { code: link.body.code as string, clickId: new URL(click.headers.get('location')!).searchParams.get('sl_cid')! };
      };
      const ad = await clickOf('https://shop.example/from-ad');
      const mail = await clickOf('https://shop.example/from-mail');
      expect((await api(g, 'GET', '/api/v1/conversions/settings', apiKey)).body).toEqual({ attribution: 'first' });
      const bad = await api(g, 'PUT', '/api/v1/conversions/settings', apiKey, { attribution: 'linear' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'VALIDATION_FAILED' });
      expect((await api(g, 'PUT', '/api/v1/conversions/settings', apiKey, { attribution: 'last' })).body).toEqual({ attribution: 'last' });
      expect((await api(g, 'GET', '/api/v1/conversions/settings', apiKey)).body).toEqual({ attribution: 'last' });
      const audited = await api(g, 'GET', '/api/v1/audit-log?action=conversions', apiKey);
      expect(audited.body.entries).toEqual([
        expect.objectContaining({ action: 'conversions.settings_changed', changes: { attribution: { from: 'first', to: 'last' } } }),
      ]);
      expect((await api(g, 'POST', '/api/v1/track/lead', apiKey, { clickId: ad.clickId, eventName: 'Sign up', customerId: 'lt1' })).status).toBe(201);
      const again = await api(g, 'POST', '/api/v1/track/lead', apiKey, { clickId: mail.clickId, eventName: 'Sign up', customerId: 'lt1' });
      expect(again.body).toEqual({ duplicate: true, event: null });
      const sold = await api(g, 'POST', '/api/v1/track/sale', apiKey, { customerId: 'lt1', amount: 700, currency: 'EUR', eventName: 'Purchase' });
      expect(sold.body).toMatchObject({ event: { link: { code: mail.code }, clickId: mail.clickId } });
    });

    it('the Stripe receiver: a secret configured (never answered), signed events verified with the stripe package, a checkout with the click id a lead and a sale, each invoice once', async () => {
      const { apiKey } = await newTenant();
      const g = endpoints().generation;
      const backendKey = (await api(g, 'POST', '/api/v1/keys', apiKey, { name: 'stripe', scopes: ['conversions:write'] })).body.apiKey as string;
      expect((await api(g, 'GET', '/api/v1/integrations/stripe', backendKey)).body).toMatchObject({ code: 'STRIPE_NOT_CONFIGURED' });
      const bad = await api(g, 'PUT', '/api/v1/integrations/stripe', backendKey, { webhookSecret: 'sk_live_not_a_signing_secret' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'webhookSecret' });
      const configured = await api(g, 'PUT', '/api/v1/integrations/stripe', backendKey, { webhookSecret: STRIPE_SECRET });
      expect(configured.status).toBe(200);
      expect(configured.body).toMatchObject({ webhookSecretHint: 'whsec_…wxyz', events: ['checkout.session.completed', 'invoice.paid', 'charge.refunded'] });
      const read = await api(g, 'GET', '/api/v1/integrations/stripe', backendKey);
      expect(read.status).toBe(200);
      expect(read.text).not.toContain(STRIPE_SECRET.slice(6, 20));
      const path = read.body.endpointPath as string;
      expect(path).toMatch(/^\/api\/v1\/integrations\/stripe\?tenant=/);

      const link = await api(g, 'POST', '/api/v1/links', apiKey, { url: 'https://shop.example/pricing', trackConversions: true });
      const code = link.body.code as string;
      const click = await fetch(`${endpoints().redirect}/${code}`, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA } });
      const clickId = new URL(click.headers.get('location')!).searchParams.get('sl_cid')!;

      const checkout = {
        id: `evt_checkout_${code}`,
        object: 'event',
        type: 'checkout.session.completed',
        data: {
          object: {
            id: `cs_${code}`,
            object: 'checkout.session',
            client_reference_id: clickId,
            customer: `cus_stripe_${code}`,
            invoice: `in_first_${code}`,
            payment_status: 'paid',
            amount_total: 2900,
            currency: 'usd',
            metadata: {},
          },
        },
      };
      // Signed with another secret, or changed after signing: 400 STRIPE_SIGNATURE_INVALID, nothing counted.
      const forged = await postStripe(g, path, stripeDelivery(checkout, 'whsec_someoneElse0123456789abcdef'));
      expect(forged.status).toBe(400);
      expect(forged.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(forged.body).toMatchObject({ code: 'STRIPE_SIGNATURE_INVALID' });
      const real = stripeDelivery(checkout);
      expect((await postStripe(g, path, { ...real, body: real.body.replace('2900', '9900') })).body).toMatchObject({ code: 'STRIPE_SIGNATURE_INVALID' });
      expect((await postStripe(g, '/api/v1/integrations/stripe?tenant=nobody', real)).body).toMatchObject({ code: 'STRIPE_NOT_CONFIGURED' });

      const counted = await postStripe(g, path, real);
      expect(counted.status).toBe(200);
      expect(counted.body).toMatchObject({
        outcome: 'counted',
        lead: { duplicate: false, event: { kind: 'lead', clickId, link: { code } } },
        sale: { duplicate: false, event: { kind: 'sale', amount: 2900, currency: 'USD', invoiceId: `in_first_${code}` } },
      });
      // Stripe's retry of the same event, and the invoice.paid of the same first invoice: counted before.
      expect((await postStripe(g, path, stripeDelivery(checkout))).body).toMatchObject({ outcome: 'duplicate' });
      const invoice = (id: string, invoiceId: string, amount: number) => ({
        id,
        object: 'event',
        type: 'invoice.paid',
        data: { object: { id: invoiceId, object: 'invoice', customer: `cus_stripe_${code}`, amount_paid: amount, currency: 'usd', metadata: {} } },
      });
      expect((await postStripe(g, path, stripeDelivery(invoice(`evt_inv1_${code}`, `in_first_${code}`, 2900)))).body).toMatchObject({ outcome: 'duplicate' });
      // The next month's invoice of the same Stripe customer: a sale of the same link.
      const renewal = await postStripe(g, path, stripeDelivery(invoice(`evt_inv2_${code}`, `in_second_${code}`, 2900)));
      expect(renewal.body).toMatchObject({ outcome: 'counted', sale: { event: { link: { code }, invoiceId: `in_second_${code}` } } });
      // Events that are not conversions of the tenant's links: 200, ignored, with the reason.
      const other = await postStripe(g, path, stripeDelivery({ id: `evt_other_${code}`, object: 'event', type: 'customer.created', data: { object: {} } }));
      expect(other).toMatchObject({ status: 200, body: { outcome: 'ignored' } });
      const stranger = await postStripe(
        g,
        path,
        stripeDelivery({
          id: `evt_inv3_${code}`,
          object: 'event',
          type: 'invoice.paid',
          data: { object: { id: `in_x_${code}`, object: 'invoice', customer: 'cus_stranger', amount_paid: 100, currency: 'usd', metadata: {} } },
        }),
      );
      expect(stranger.body).toMatchObject({ outcome: 'ignored' });

      // A partial refund of the renewal's charge: a negative sale, once however often Stripe sends it.
      const refund = {
        id: `evt_refund_${code}`,
        object: 'event',
        type: 'charge.refunded',
        data: {
          object: { id: `ch_${code}`, object: 'charge', amount: 2900, amount_refunded: 900, currency: 'usd', customer: `cus_stripe_${code}`, metadata: {} },
          previous_attributes: { amount_refunded: 0 },
        },
      };
      const refunded = await postStripe(g, path, stripeDelivery(refund));
      expect(refunded.body).toMatchObject({ outcome: 'counted', sale: { event: { link: { code }, amount: -900, currency: 'USD' } } });
      expect((await postStripe(g, path, stripeDelivery(refund))).body).toMatchObject({ outcome: 'duplicate' });

      await eventually(
        'the stats count the Stripe lead, its two sales and the refund',
        async () => {
          const stats = await api(endpoints().analytics, 'GET', `/api/v1/links/${code}/stats?granularity=day`, apiKey);
          expect(stats.body.totals).toMatchObject({ clicks: 1, leads: 1, sales: 3, revenue: { USD: 4900 } });
          return true;
        },
        20_000,
      );
      expect((await api(g, 'DELETE', '/api/v1/integrations/stripe', backendKey)).status).toBe(204);
      // The secret's changes are in the tenant's audit log (the fact, never the secret).
      const log = await api(g, 'GET', '/api/v1/audit-log?action=stripe', apiKey);
      expect(log.status).toBe(200);
      expect((log.body.entries as Array<{ action: string }>).map((e) => e.action)).toEqual(['stripe.removed', 'stripe.configured']);
      expect(log.text).not.toContain(STRIPE_SECRET.slice(6));
      expect((await postStripe(g, path, stripeDelivery(checkout))).body).toMatchObject({ code: 'STRIPE_NOT_CONFIGURED' });
    });
  });

  describe('conversions in Chromium: a landing site with the cookie script, its backend, and the console’s funnel', () => {
    const run = Date.now().toString(36);
    const ownerEmail = `conversions-${run}@example.com`;
    const SITE = 'shop-conversions.example';
    let site: Server;
    let profileDir: string;
    let browser: BrowserContext;
    let page: Page;
    let backendKey: string;
    const problems: string[] = [];
    const reported: Array<{ path: string; status: number; body: unknown }> = [];

    /** The tenant's site: a landing page that loads /sl-track.js from the short domain (CSP: scripts from there only, no inline), and its backend. */
    function siteHandler(req: IncomingMessage, res: ServerResponse): void {
      const redirect = endpoints().redirect;
      const page = (body: string): void => {
        res
          .writeHead(200, {
            'content-type': 'text/html; charset=utf-8',
            'content-security-policy': `default-src 'none'; script-src ${new URL(redirect).origin}; form-action 'self'`,
          })
          .end(`<!doctype html><html lang="en"><title>Shop</title>${body}</html>`);
      };
      const url = new URL(req.url ?? '/', `http://${SITE}`);
      if (req.method === 'GET' && url.pathname === '/landing')
        return page(
          `<script src="${redirect}/sl-track.js" defer></script><h1>Spring sale</h1>` +
            '<form method="post" action="/signup"><button id="signup" type="submit">Sign up</button></form>',
        );
      if (req.method === 'POST' && (url.pathname === '/signup' || url.pathname === '/buy')) {
        // The backend: the click id from the site's own cookie, reported with the tenant's key.
        const clickId = clickIdFromCookies(req.headers.cookie);
        const [path, body] =
          url.pathname === '/signup'
            ? ['/api/v1/track/lead', { clickId: clickId ?? 'none', eventName: 'Sign up', customerId: `web_${run}` }]
            : ['/api/v1/track/sale', { customerId: `web_${run}`, amount: 2500, currency: 'EUR', eventName: 'Purchase', invoiceId: `inv_web_${run}` }];
        req.resume();
        api(endpoints().generation, 'POST', path, backendKey, body).then(
          (r) => {
            reported.push({ path, status: r.status, body: r.body });
            page(
              `<p id="reported" data-status="${r.status}">${url.pathname === '/signup' ? 'Welcome' : 'Thank you'}</p>` +
                '<form method="post" action="/buy"><button id="buy" type="submit">Buy</button></form>',
            );
          },
          (e: Error) => res.writeHead(500).end(e.message),
        );
        return;
      }
      res.writeHead(404).end();
    }

    beforeAll(async () => {
      site = createServer(siteHandler);
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
      profileDir = mkdtempSync(join(tmpdir(), 'shortlink-conversions-chromium-'));
      browser = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        // The site's name leads to the local site; everything else as it is.
        args: [...HEADLESS_CHROMIUM_ARGS, `--host-resolver-rules=MAP ${SITE} 127.0.0.1:${(site.address() as AddressInfo).port}`],
        viewport: { width: 1280, height: 800 },
        // A desktop Chrome's own: analytics leaves headless browsers out as bots.
        userAgent: BROWSER_UA,
      });
      page = browser.pages()[0] ?? (await browser.newPage());
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && problems.push(m.text()));
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await new Promise((r) => (site ? site.close(r) : r(undefined)));
      if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    });

    it('a click lands on the site, /sl-track.js keeps the click id in a first-party cookie, the backend reports a lead and a sale, Stripe an invoice, and the console shows the funnel', async () => {
      const g = endpoints().generation;
      const created = await api(g, 'POST', '/api/v1/admin/tenants', API_KEY, { name: `Conversions ${run}`, plan: 'paid', ownerEmail });
      expect(created.status).toBe(201);
      const apiKey = created.body.apiKey as string;
      backendKey = (await api(g, 'POST', '/api/v1/keys', apiKey, { name: 'site backend', scopes: ['conversions:write'] })).body.apiKey as string;
      const link = await api(g, 'POST', '/api/v1/links', apiKey, {
        url: `http://${SITE}/landing?utm_source=mail`,
        trackConversions: true,
        title: 'Spring sale',
      });
      expect(link.status).toBe(201);
      const code = link.body.code as string;

      // The script as the redirect serves it: small, cacheable, readable cross-origin.
      const script = await fetch(`${endpoints().redirect}/sl-track.js`);
      expect(script.status).toBe(200);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(script.headers.get('access-control-allow-origin')).toBe('*');
      expect(Number(script.headers.get('content-length'))).toBeLessThan(500);
      expect((await fetch(`${endpoints().redirect}/sl-track.js`, { headers: { 'if-none-match': script.headers.get('etag')! } })).status).toBe(304);

      // The visitor clicks the short link and lands on the site with the click id; the script keeps it.
      await page.goto(`${endpoints().redirect}/${code}`);
      expect(new URL(page.url()).host).toBe(SITE);
      const clickId = new URL(page.url()).searchParams.get('sl_cid')!;
      expect(clickId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      await eventually('the script set the cookie', async () => {
        const cookie = (await browser.cookies(`http://${SITE}/`)).find((c) => c.name === 'sl_cid');
        expect(cookie).toMatchObject({ value: clickId, domain: SITE, path: '/', sameSite: 'Lax' });
        return true;
      });
      // Signs up (the backend reports the lead with the cookie's click id), then buys (the sale).
      await page.click('#signup');
      await page.waitForSelector('#reported[data-status="201"]');
      await page.click('#buy');
      await page.waitForSelector('#reported[data-status="201"]');
      expect(reported.map((r) => [r.path, r.status])).toEqual([
        ['/api/v1/track/lead', 201],
        ['/api/v1/track/sale', 201],
      ]);
      expect(reported[0].body).toMatchObject({ event: { clickId, link: { code } } });

      // Stripe bills the same customer (its own id in the invoice's metadata): a sale of the same link.
      expect((await api(g, 'PUT', '/api/v1/integrations/stripe', backendKey, { webhookSecret: STRIPE_SECRET })).status).toBe(200);
      const path = (await api(g, 'GET', '/api/v1/integrations/stripe', backendKey)).body.endpointPath as string;
      const paid = await postStripe(
        g,
        path,
        stripeDelivery({
          id: `evt_web_${run}`,
          object: 'event',
          type: 'invoice.paid',
          data: {
            object: { id: `in_web_${run}`, object: 'invoice', customer: 'cus_web', amount_paid: 1500, currency: 'usd', metadata: { customerId: `web_${run}` } },
          },
        }),
      );
      expect(paid.body).toMatchObject({ outcome: 'counted', sale: { event: { link: { code }, amount: 1500, currency: 'USD' } } });

      await eventually(
        'the funnel counts the click, the lead and both sales',
        async () => {
          const funnel = await api(endpoints().analytics, 'GET', '/api/v1/stats/conversions', apiKey);
          expect(funnel.status).toBe(200);
          expect(funnel.body.links).toEqual([
            { domain: link.body.domain, code, clicks: 1, leads: 1, sales: 2, revenue: { EUR: 2500, USD: 1500 }, leadRate: 1, saleRate: 2 },
          ]);
          return true;
        },
        30_000,
      );
      const csv = await fetch(`${endpoints().analytics}/api/v1/stats/conversions?format=csv`, { headers: { 'x-api-key': apiKey } });
      expect(await csv.text()).toContain(`${code},1,1,2,EUR 2500 USD 1500,1,2`);

      // The owner signs in to the console (accepting the invitation) and opens Conversions.
      await page.goto(created.body.owner.invitation.url.replace(/^https?:\/\/[^/]+/, g));
      await page.getByLabel('Choose a password').fill(PASSWORD);
      await page.click('#accept button[type=submit]');
      await page.waitForSelector('#sign-out');
      await page.goto(`${g}/console/#/conversions`);
      const row = page.locator(`#conversions-table tr[data-code="${code}"]`);
      await row.waitFor();
      expect((await row.locator('td').allInnerTexts()).map((t) => t.trim())).toEqual(['1', '1', '100 %', '2', '200 %', '€25.00\n$15.00']);
      expect(await page.locator('#funnel-revenue').innerText()).toBe('€25.00 · $15.00');
      if (process.env.CONSOLE_SCREENSHOTS) {
        mkdirSync(process.env.CONSOLE_SCREENSHOTS, { recursive: true });
        await page.screenshot({ path: join(process.env.CONSOLE_SCREENSHOTS, 'console-conversions.png') });
      }
      // Per value of a click dimension: the device of the click the lead came by, with both sales.
      await page.selectOption('#conversions-by', 'devices');
      const desktop = page.locator('#conversions-by-table tr[data-value="desktop"]');
      await desktop.waitFor();
      expect((await desktop.locator('td').allInnerTexts()).map((t) => t.trim())).toEqual(['1', '1', '100 %', '2', '200 %', '€25.00\n$15.00']);
      expect(page.url()).toContain('by=devices');
      // And per day.
      const today = page.locator('#conversions-series tbody tr').first();
      expect((await today.locator('td').allInnerTexts()).map((t) => t.trim())).toEqual(['1', '1', '2', '€25.00 · $15.00']);
      // At phone size: nothing wider than the screen (the tables scroll in their own region).
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      if (process.env.CONSOLE_SCREENSHOTS)
        await page.screenshot({ path: join(process.env.CONSOLE_SCREENSHOTS, 'console-conversions-phone.png'), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 800 });

      // The analytics app's dashboard shows the link's conversions per value of their clicks too.
      await page.goto(`${endpoints().analytics}/dashboard?code=${code}&domain=${encodeURIComponent(link.body.domain as string)}`);
      await page.waitForSelector('#api-key:visible, body[data-loaded-code]');
      if (await page.isVisible('#api-key')) {
        await page.fill('#api-key', apiKey);
        await page.click('#login-form button[type=submit]');
      }
      await page.waitForFunction((c) => document.body.dataset.loadedCode === c, code, { timeout: 30_000 });
      const cells = async () => (await page.locator('#conversions-breakdown tbody tr').first().locator('td').allInnerTexts()).map((t) => t.trim());
      // No A/B test on this link: every lead and sale is under "none".
      expect(await cells()).toEqual(['(none)', '1', '1', '100.0 %', '2', '€25.00 · $15.00']);
      await page.selectOption('#conversions-by', 'devices');
      await eventually('the dashboard shows the conversions by device', async () => {
        expect(await cells()).toEqual(['desktop', '1', '1', '100.0 %', '2', '€25.00 · $15.00']);
        return true;
      });
      if (process.env.CONSOLE_SCREENSHOTS)
        await page
          .locator('section.card', { has: page.locator('#conversions-breakdown') })
          .screenshot({ path: join(process.env.CONSOLE_SCREENSHOTS, 'dashboard-conversions.png') });
      expect(problems).toEqual([]);
    });
  });
}
