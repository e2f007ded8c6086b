import { LRUCache } from 'lru-cache';
import { DomainError, ErrorCode } from '@shortlink/core';
import { keyPrincipal, type Principal, type TenantStore } from '@shortlink/tenants-domain';
import type { YourlsUser } from './yourls-signatures';

/**
 * The principal of a key named by tenant and id (a YOURLS signature names it so), made as the
 * `x-api-key` guard makes it (tenants-domain `keyPrincipal`): unknown, revoked or expired →
 * UNAUTHENTICATED (one message for the three), suspended tenant → TENANT_SUSPENDED, a key whose
 * person was removed → KEY_SUSPENDED, its scopes within its person's role. Answers are trusted for `cacheMs` (1 s), the same bound on
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
    let found;
    try {
      found = await this.store.findKey(user.tenantId, user.keyId);
    } catch (error) {
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the tenant database is unavailable; retry shortly', { retryAfterSeconds: 1 }, { cause: error });
    }
    const now = this.now();
    const result = keyPrincipal(found, now);
    const ttl = Math.min(this.cacheMs, found?.key.expiresAt ? found.key.expiresAt.getTime() - now : Infinity);
    if (ttl > 0) this.cache.set(cacheKey, result, { ttl });
    if ('error' in result) throw result.error;
    return result.principal;
  }
}
