import { Endpoints, eventually } from '@shortlink/harness';
import { BROWSER_UA } from './support';
import { api } from './tenant-journey';
import { Receiver } from './webhooks-journey';

/**
 * Conversions over HTTP on every profile (docs/analytics.md, "Conversions"): a tenant turns tracking
 * on for a link, a visitor clicks it and lands with a click id, the tenant's backend reports a lead
 * and a sale (and the same sale again, and a click id nobody issued) with a key of the scope
 * `conversions:write`, and the link's stats count 1 lead, 1 sale and its revenue; the webhooks get
 * `lead.created` and `sale.created`. Bad input answers problem+json with stable codes.
 */
export function describeConversionsJourney(endpoints: () => Endpoints, newTenant: () => Promise<{ apiKey: string }>) {
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

      // The link key cannot report; the backend key can.
      expect((await api(g, 'POST', '/api/v1/track/lead', backendKey.replace(/.$/, 'x'), { clickId, eventName: 'Sign up', customerId: 'cus_1' })).status).toBe(
        401,
      );
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
  });
}
