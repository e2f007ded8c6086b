import { randomUUID } from 'crypto';
import { DomainError, ErrorCode } from '@shortlink/core';
import { generateApiKey, hashApiKey, Plan, Tenant } from './tenant';
import { TenantStore } from './ports';

export class TenantService {
  constructor(private readonly tenants: TenantStore) {}

  async authenticate(apiKey: unknown): Promise<Tenant> {
    if (typeof apiKey !== 'string' || apiKey.length < 8) {
      throw new DomainError(ErrorCode.UNAUTHENTICATED, 'a valid x-api-key header is required');
    }
    let tenant: Tenant | null;
    try {
      tenant = await this.tenants.findByApiKeyHash(hashApiKey(apiKey));
    } catch (error) {
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the tenant database is unavailable; retry shortly', { retryAfterSeconds: 1 }, { cause: error });
    }
    if (!tenant) throw new DomainError(ErrorCode.UNAUTHENTICATED, 'unknown API key');
    return tenant;
  }

  /** The caller of an API request, for the platform's API-key guard. */
  async verify(apiKey: unknown): Promise<{ tenantId: string }> {
    return { tenantId: (await this.authenticate(apiKey)).id };
  }

  /**
   * SHORTLINK_BOOTSTRAP_API_KEY: makes sure a tenant with this key exists (creates one when the
   * key is unknown), so provisioning by environment is idempotent across restarts and instances.
   */
  async bootstrap(apiKey: string, name = 'bootstrap', plan: Plan = 'paid'): Promise<Tenant | null> {
    const hash = hashApiKey(apiKey);
    if (await this.tenants.findByApiKeyHash(hash)) return null;
    const tenant: Tenant = { id: randomUUID(), name, plan, createdAt: new Date() };
    return (await this.tenants.createWithApiKey(tenant, hash)) ? tenant : null;
  }

  /**
   * A first run with no key given (the embedded profile): when no tenant exists yet, creates the
   * operator tenant with a freshly generated key and returns that key, to be shown once. Returns
   * null once any tenant exists, so later starts create nothing and show nothing.
   */
  async bootstrapFirstRun(name = 'operator', plan: Plan = 'paid'): Promise<string | null> {
    if ((await this.tenants.countTenants()) > 0) return null;
    const apiKey = generateApiKey();
    const tenant: Tenant = { id: randomUUID(), name, plan, createdAt: new Date() };
    return (await this.tenants.createWithApiKey(tenant, hashApiKey(apiKey))) ? apiKey : null;
  }
}
