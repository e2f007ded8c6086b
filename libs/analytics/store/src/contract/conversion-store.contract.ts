import { randomUUID } from 'crypto';
import type { ConversionStore, Customer } from '@shortlink/clicks-domain';

export interface ConversionStoreFixture {
  readonly conversions: ConversionStore;
  close(): Promise<void>;
}

/** The conversion store's contract (docs/design.md, "Conversions"), run on every backend: SQLite, MySQL and the in-memory double. */
export function describeConversionStoreContract(name: string, open: () => Promise<ConversionStoreFixture>): void {
  describe(`ConversionStore contract: ${name}`, () => {
    let f: ConversionStoreFixture;
    beforeAll(async () => {
      f = await open();
    });
    afterAll(() => f.close());

    // Fresh tenants per test: the real stack's database is shared.
    const tenant = () => `t-${randomUUID().slice(0, 8)}`;
    const aCustomer = (tenantId: string, over: Partial<Customer> = {}): Customer => ({
      tenantId,
      customerId: 'cus_Ünïcode 1',
      linkId: '9007199254740',
      domain: 'sho.rt',
      code: 'Abc1234',
      clickId: 'AbCdEfGhIjKlMnOpQrSt_-',
      createdAt: new Date(Date.UTC(2026, 11, 7, 10, 0, 0, 123)),
      ...over,
    });

    it('keeps a customer’s first lead: a second add answers the first, per tenant; customer ids are case-sensitive', async () => {
      const t = tenant();
      const first = aCustomer(t);
      expect(await f.conversions.addCustomer(first)).toEqual({ created: true, customer: first });
      const again = await f.conversions.addCustomer(aCustomer(t, { code: 'Other12', linkId: '7', clickId: 'x'.repeat(22) }));
      expect(again).toEqual({ created: false, customer: first });
      expect(await f.conversions.customer(t, first.customerId)).toEqual(first);
      expect(await f.conversions.customer(t, 'CUS_ÜNÏCODE 1')).toBeNull();
      expect(await f.conversions.customer(tenant(), first.customerId)).toBeNull();
      const other = aCustomer(tenant());
      expect((await f.conversions.addCustomer(other)).created).toBe(true);
    });

    it('forgets a customer just added', async () => {
      const t = tenant();
      await f.conversions.addCustomer(aCustomer(t));
      await f.conversions.removeCustomer(t, 'cus_Ünïcode 1');
      expect(await f.conversions.customer(t, 'cus_Ünïcode 1')).toBeNull();
      expect((await f.conversions.addCustomer(aCustomer(t))).created).toBe(true);
    });

    it('claims an invoice id once per tenant, and again after it was given back', async () => {
      const t = tenant();
      const at = new Date();
      expect(await f.conversions.claimInvoice(t, 'inv_1', at)).toBe(true);
      expect(await f.conversions.claimInvoice(t, 'inv_1', at)).toBe(false);
      expect(await f.conversions.claimInvoice(t, 'INV_1', at)).toBe(true);
      expect(await f.conversions.claimInvoice(tenant(), 'inv_1', at)).toBe(true);
      await f.conversions.releaseInvoice(t, 'inv_1');
      expect(await f.conversions.claimInvoice(t, 'inv_1', at)).toBe(true);
    });

    it('answers concurrent claims as one at a time would: each new customer and invoice created once, the known ones not, a duplicate among new ones too', async () => {
      const t = tenant();
      const known = aCustomer(t, { customerId: 'known' });
      await f.conversions.addCustomer(known);
      await f.conversions.claimInvoice(t, 'inv_known', new Date());
      // Fired at once: on a database a round trip away they go as grouped multi-row inserts, a group with a duplicate one by one.
      const ids = ['known', ...Array.from({ length: 12 }, (_, i) => `c${i}`), 'c3', 'c7', 'known'];
      const added = await Promise.all(
        ids.map((customerId, i) => f.conversions.addCustomer(aCustomer(t, { customerId, clickId: `click-${i}`.padEnd(22, '_') }))),
      );
      const createdIds = added.filter((a) => a.created).map((a) => a.customer.customerId);
      expect([...createdIds].sort()).toEqual(Array.from({ length: 12 }, (_, i) => `c${i}`).sort());
      for (const a of added.filter((x) => !x.created)) expect(a.customer).toEqual(await f.conversions.customer(t, a.customer.customerId));
      expect(added.filter((a) => !a.created && a.customer.customerId === 'known').map((a) => a.customer)).toEqual([known, known]);
      // Lookups at once (a sale's), across tenants, case-sensitive: each answers its own customer.
      const other = tenant();
      const otherC0 = aCustomer(other, { customerId: 'c0', code: 'Zzz9999' });
      await f.conversions.addCustomer(otherC0);
      const lookups: Array<[string, string]> = [
        [t, 'known'],
        [t, 'c5'],
        [other, 'c0'],
        [t, 'C5'],
        [other, 'c5'],
        [t, 'nobody'],
        [t, 'c0'],
      ];
      const found = await Promise.all(lookups.map(([tenantId, id]) => f.conversions.customer(tenantId, id)));
      expect(found.map((c) => c && `${c.tenantId === t ? 't' : 'other'}/${c.customerId}/${c.code}`)).toEqual([
        't/known/Abc1234',
        't/c5/Abc1234',
        'other/c0/Zzz9999',
        null,
        null,
        null,
        't/c0/Abc1234',
      ]);
      const invoices = ['inv_known', ...Array.from({ length: 12 }, (_, i) => `inv_${i}`), 'inv_3', 'inv_known'];
      const claimed = await Promise.all(invoices.map((id) => f.conversions.claimInvoice(t, id, new Date())));
      expect(invoices.filter((_, i) => claimed[i]).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `inv_${i}`).sort());
    });

    it('moves a customer to a newer click (last touch), and keeps each tenant’s attribution model (first by default)', async () => {
      const t = tenant();
      const first = aCustomer(t);
      await f.conversions.addCustomer(first);
      const later = { ...first, linkId: '77', domain: 'go.acme.example', code: 'Later12', clickId: 'z'.repeat(22), createdAt: new Date() };
      await f.conversions.touchCustomer(later);
      expect(await f.conversions.customer(t, first.customerId)).toEqual({ ...later, createdAt: first.createdAt });
      await f.conversions.touchCustomer(aCustomer(t, { customerId: 'nobody' }));
      expect(await f.conversions.customer(t, 'nobody')).toBeNull();
      expect(await f.conversions.attribution(t)).toBe('first');
      await f.conversions.setAttribution(t, 'last');
      expect(await f.conversions.attribution(t)).toBe('last');
      expect(await f.conversions.attribution(tenant())).toBe('first');
      await f.conversions.setAttribution(t, 'first');
      expect(await f.conversions.attribution(t)).toBe('first');
    });

    it('keeps each tenant’s tracked tags with their parameter: on, changed, off; tags compared exactly', async () => {
      const t = tenant();
      expect([...(await f.conversions.trackedTags(t))]).toEqual([]);
      await f.conversions.setTagTracking(t, 'spring sale', 'sl_cid');
      await f.conversions.setTagTracking(t, 'Ünïcode', 'cid');
      await f.conversions.setTagTracking(t, 'spring sale', 'ref');
      expect(new Map(await f.conversions.trackedTags(t))).toEqual(
        new Map([
          ['spring sale', 'ref'],
          ['Ünïcode', 'cid'],
        ]),
      );
      expect([...(await f.conversions.trackedTags(tenant()))]).toEqual([]);
      await f.conversions.setTagTracking(t, 'Spring Sale', null); // another tag: nothing to remove
      await f.conversions.setTagTracking(t, 'spring sale', null);
      await f.conversions.setTagTracking(t, 'spring sale', null);
      expect([...(await f.conversions.trackedTags(t))]).toEqual([['Ünïcode', 'cid']]);
    });

    it('keeps one Stripe receiver per tenant: saved, replaced (its creation time kept), removed', async () => {
      const t = tenant();
      expect(await f.conversions.stripeSettings(t)).toBeNull();
      const first = {
        tenantId: t,
        sealedSecret: 'v1.a.b.c',
        secretHint: 'Ab12',
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 5)),
        updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 5)),
      };
      await f.conversions.saveStripeSettings(first);
      expect(await f.conversions.stripeSettings(t)).toEqual(first);
      const later = new Date(Date.UTC(2026, 0, 2, 0, 0, 0, 7));
      await f.conversions.saveStripeSettings({ ...first, sealedSecret: 'v1.d.e.f', secretHint: 'Zz99', createdAt: later, updatedAt: later });
      expect(await f.conversions.stripeSettings(t)).toEqual({ ...first, sealedSecret: 'v1.d.e.f', secretHint: 'Zz99', updatedAt: later });
      expect(await f.conversions.stripeSettings(tenant())).toBeNull();
      expect(await f.conversions.removeStripeSettings(t)).toBe(true);
      expect(await f.conversions.removeStripeSettings(t)).toBe(false);
      expect(await f.conversions.stripeSettings(t)).toBeNull();
    });

    it('links a Stripe customer to the tenant’s customer once (the first link stays), per tenant', async () => {
      const t = tenant();
      expect(await f.conversions.stripeCustomer(t, 'cus_Stripe1')).toBeNull();
      await f.conversions.linkStripeCustomer(t, 'cus_Stripe1', 'user Ünï 42');
      await f.conversions.linkStripeCustomer(t, 'cus_Stripe1', 'user 43');
      expect(await f.conversions.stripeCustomer(t, 'cus_Stripe1')).toBe('user Ünï 42');
      expect(await f.conversions.stripeCustomer(t, 'CUS_STRIPE1')).toBeNull();
      expect(await f.conversions.stripeCustomer(tenant(), 'cus_Stripe1')).toBeNull();
    });
  });
}
