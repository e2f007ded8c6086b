import { randomUUID } from 'crypto';
import { DomainError, ErrorCode } from '@shortlink/core';
import { hashApiKey, Plan, Tenant } from './tenant';
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

  /** SHORTLINK_BOOTSTRAP_API_KEY: creates a first tenant with that key when there is no tenant yet. */
  async bootstrap(apiKey: string, name = 'default', plan: Plan = 'paid'): Promise<Tenant | null> {
    if ((await this.tenants.countTenants()) > 0) return null;
    const tenant: Tenant = { id: randomUUID(), name, plan, createdAt: new Date() };
    return (await this.tenants.createWithApiKey(tenant, hashApiKey(apiKey))) ? tenant : null;
  }
}
