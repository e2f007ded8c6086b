import { Attribution, ConversionStore, Customer, StripeSettings } from './ports';

/** The conversion store in memory: the domain's specs, and the contract suite's reference. */
export class InMemoryConversionStore implements ConversionStore {
  private readonly customers = new Map<string, Customer>();
  private readonly invoices = new Set<string>();
  private readonly stripe = new Map<string, StripeSettings>();
  private readonly attributions = new Map<string, Attribution>();
  private readonly stripeCustomers = new Map<string, string>();
  private readonly tags = new Map<string, Map<string, string>>();

  async addCustomer(customer: Customer): Promise<{ created: boolean; customer: Customer }> {
    const key = `${customer.tenantId}\u0000${customer.customerId}`;
    const known = this.customers.get(key);
    if (known) return { created: false, customer: known };
    this.customers.set(key, customer);
    return { created: true, customer };
  }

  async customer(tenantId: string, customerId: string): Promise<Customer | null> {
    return this.customers.get(`${tenantId}\u0000${customerId}`) ?? null;
  }

  async removeCustomer(tenantId: string, customerId: string): Promise<void> {
    this.customers.delete(`${tenantId}\u0000${customerId}`);
  }

  async claimInvoice(tenantId: string, invoiceId: string): Promise<boolean> {
    const key = `${tenantId}\u0000${invoiceId}`;
    if (this.invoices.has(key)) return false;
    this.invoices.add(key);
    return true;
  }

  async releaseInvoice(tenantId: string, invoiceId: string): Promise<void> {
    this.invoices.delete(`${tenantId}\u0000${invoiceId}`);
  }

  async touchCustomer(customer: Customer): Promise<void> {
    const key = `${customer.tenantId}\u0000${customer.customerId}`;
    const known = this.customers.get(key);
    if (known) this.customers.set(key, { ...known, linkId: customer.linkId, domain: customer.domain, code: customer.code, clickId: customer.clickId });
  }

  async attribution(tenantId: string): Promise<Attribution> {
    return this.attributions.get(tenantId) ?? 'first';
  }

  async setAttribution(tenantId: string, attribution: Attribution): Promise<void> {
    this.attributions.set(tenantId, attribution);
  }

  async trackedTags(tenantId: string): Promise<ReadonlyMap<string, string>> {
    return new Map(this.tags.get(tenantId) ?? []);
  }

  async setTagTracking(tenantId: string, tag: string, conversionParam: string | null): Promise<void> {
    let tags = this.tags.get(tenantId);
    if (!tags) this.tags.set(tenantId, (tags = new Map()));
    if (conversionParam === null) tags.delete(tag);
    else tags.set(tag, conversionParam);
  }

  async stripeSettings(tenantId: string): Promise<StripeSettings | null> {
    return this.stripe.get(tenantId) ?? null;
  }

  async saveStripeSettings(settings: StripeSettings): Promise<void> {
    const before = this.stripe.get(settings.tenantId);
    this.stripe.set(settings.tenantId, before ? { ...settings, createdAt: before.createdAt } : settings);
  }

  async removeStripeSettings(tenantId: string): Promise<boolean> {
    return this.stripe.delete(tenantId);
  }

  async linkStripeCustomer(tenantId: string, stripeCustomerId: string, customerId: string): Promise<void> {
    const key = `${tenantId}\u0000${stripeCustomerId}`;
    if (!this.stripeCustomers.has(key)) this.stripeCustomers.set(key, customerId);
  }

  async stripeCustomer(tenantId: string, stripeCustomerId: string): Promise<string | null> {
    return this.stripeCustomers.get(`${tenantId}\u0000${stripeCustomerId}`) ?? null;
  }
}
