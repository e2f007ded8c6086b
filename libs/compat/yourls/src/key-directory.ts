import { LRUCache } from 'lru-cache';
import { DomainError, ErrorCode } from '@shortlink/core';
import type { Principal, TenantStore } from '@shortlink/tenants-domain';
import type { YourlsUser } from './yourls-signatures';

/**
 * The principal of a key named by tenant and id (a YOURLS signature names it so), with the checks
 * of ApiKeyVerifier: unknown, revoked or expired → UNAUTHENTICATED (one message for the three),
 * suspended tenant → TENANT_SUSPENDED. Answers are trusted for `cacheMs` (1 s), the same bound on
 * how late a revocation takes effect.
 */
export class KeyDirectory {
  private readonly cache: LRUCache<string, { principal: Principal } | { error: DomainError }>;

  constructor(
    private readonly store: TenantStore,
    private readonly cacheMs = 1000,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new LRUCache({ max: 10_000, ttl: cacheMs });
  }

  async principalOf(user: YourlsUser): Promise<Principal> {
    const cacheKey = `${user.tenantId}.${user.keyId}`;
    const cached = this.cache.get(cacheKey);
    if (cached) {
      if ('error' in cached) throw cached.error;
      return cached.principal;
    }
    let keys, tenant;
    try {
      [keys, tenant] = await Promise.all([this.store.listKeys(user.tenantId), this.store.findTenant(user.tenantId)]);
    } catch (error) {
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the tenant database is unavailable; retry shortly', { retryAfterSeconds: 1 }, { cause: error });
    }
    const key = keys.find((k) => k.id === user.keyId);
    const now = this.now();
    let result: { principal: Principal } | { error: DomainError };
    if (!tenant || !key || key.revokedAt !== null || (key.expiresAt !== null && key.expiresAt.getTime() <= now))
      result = { error: new DomainError(ErrorCode.UNAUTHENTICATED, 'unknown, revoked or expired key') };
    else if (tenant.status === 'suspended') result = { error: new DomainError(ErrorCode.TENANT_SUSPENDED, 'this tenant is suspended; contact the operator') };
    else
      result = {
        principal: {
          tenantId: tenant.id,
          keyId: key.id,
          scopes: key.scopes,
          plan: tenant.plan,
          actor: { kind: 'key', id: key.id, name: key.name, tenantId: tenant.id },
        },
      };
    const ttl = Math.min(this.cacheMs, key?.expiresAt ? key.expiresAt.getTime() - now : Infinity);
    if (ttl > 0) this.cache.set(cacheKey, result, { ttl });
    if ('error' in result) throw result.error;
    return result.principal;
  }
}
