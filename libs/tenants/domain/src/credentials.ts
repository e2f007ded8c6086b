import { LRUCache } from 'lru-cache';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { KeyPerson, keyStanding } from './authority';
import { KeyWithTenant, TenantStore } from './ports';
import { hashApiKey, Plan, Scope, shortLivedCache } from './tenant';

/**
 * Who acts: an API key or a person (a member signed in), by id and name, in its tenant; what the
 * audit log records. A key's name is the name it was given; a person's is its email.
 */
export type Actor =
  | {
      readonly kind: 'key';
      readonly id: string;
      readonly name: string;
      readonly tenantId: string;
      /** The person the key acts for, with its role now (the audit log names it beside the key); null for a key of no person. */
      readonly person: KeyPerson | null;
    }
  | {
      readonly kind: 'person';
      readonly id: string;
      readonly name: string;
      readonly email: string;
      readonly tenantId: string;
      /** The member's role (people-domain's ROLES), what decides whom it may manage. */
      readonly role: string;
    };

/** Who made an API request. */
export interface Principal {
  readonly tenantId: string;
  /** The key's id; for a person signed in, the member's id. */
  readonly keyId: string;
  /** Who acts, as the audit log names it (platform auth.ts, `auditActorOf`). */
  readonly actor: Actor;
  readonly scopes: readonly Scope[];
  readonly plan: Plan;
}

export interface ApiKeyVerifierOptions {
  /**
   * How long a checked key is trusted without asking the store again: the bound on how late a
   * revocation, a suspension or an expiry takes effect on every instance (1 s).
   */
  readonly cacheMs?: number;
  readonly clock?: Clock;
}

/**
 * Whose an API key is (docs/design.md, "Security model"): looked up by its SHA-256 hash, the answer
 * (a principal, or the refusal) trusted for `cacheMs` at most.
 */
export class ApiKeyVerifier {
  private readonly cache: LRUCache<string, { principal: Principal } | { error: DomainError }>;
  private readonly cacheMs: number;

  private readonly clock: Clock;

  constructor(
    private readonly store: TenantStore,
    { cacheMs = 1000, clock = systemClock }: ApiKeyVerifierOptions = {},
  ) {
    this.cacheMs = cacheMs;
    this.clock = clock;
    this.cache = shortLivedCache(cacheMs);
  }

  /** The principal of an API key: 401 for a missing, unknown, revoked or expired key, 403 for a suspended tenant or key (`keyPrincipal`). */
  async verify(apiKey: unknown): Promise<Principal> {
    if (typeof apiKey !== 'string' || apiKey.length < 8 || apiKey.length > 200)
      throw new DomainError(ErrorCode.UNAUTHENTICATED, 'a valid x-api-key header is required');
    const hash = hashApiKey(apiKey);
    const cached = this.cache.get(hash);
    if (cached) {
      if ('error' in cached) throw cached.error;
      return cached.principal;
    }
    let found;
    try {
      found = await this.store.findByKeyHash(hash);
    } catch (error) {
      throw new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the tenant database is unavailable; retry shortly', { retryAfterSeconds: 1 }, { cause: error });
    }
    const now = this.clock.now();
    const result = keyPrincipal(found, now);
    // A key that expires sooner than the cache time is trusted only until it expires.
    const ttl = Math.min(this.cacheMs, found?.key.expiresAt ? found.key.expiresAt.getTime() - now : Infinity);
    if (ttl > 0) this.cache.set(hash, result, { ttl });
    if ('error' in result) throw result.error;
    return result.principal;
  }
}

/**
 * The principal of a key as stored, or why it may not act (docs/design.md, "Security model"): 401
 * for an unknown, revoked or expired key (one message for the three: which keys exist is not for
 * the caller to learn), 403 TENANT_SUSPENDED, 403 KEY_SUSPENDED when the person it acted for was
 * removed; else its scopes within what that person's role allows now (authority.ts, `keyStanding`).
 * The one place a key becomes a principal: the `x-api-key` guard and YOURLS signatures both ask here.
 */
export function keyPrincipal(found: KeyWithTenant | null, now: number): { principal: Principal } | { error: DomainError } {
  if (!found || found.key.revokedAt !== null || (found.key.expiresAt !== null && found.key.expiresAt.getTime() <= now))
    return { error: new DomainError(ErrorCode.UNAUTHENTICATED, 'unknown, revoked or expired API key') };
  const { key, tenant } = found;
  if (tenant.status === 'suspended') return { error: new DomainError(ErrorCode.TENANT_SUSPENDED, 'this tenant is suspended; contact the operator') };
  const standing = keyStanding(key, found.tenantHasOwner);
  if (standing.suspended)
    return {
      error: new DomainError(
        ErrorCode.KEY_SUSPENDED,
        'this key acted for a person who is no longer a member; an owner may transfer it to another member or revoke it',
        { keyId: key.id },
      ),
    };
  const actor: Actor = { kind: 'key', id: key.id, name: key.name, tenantId: tenant.id, person: key.person };
  return { principal: { tenantId: tenant.id, keyId: key.id, scopes: standing.scopes, plan: tenant.plan, actor } };
}
