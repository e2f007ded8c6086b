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
  });
}
