import { randomUUID } from 'crypto';
import { LRUCache } from 'lru-cache';
import { domainToASCII } from 'url';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { ApiKey, DEFAULT_SCOPES, generateApiKey, hashApiKey, keyPrefix, Plan, Scope, SCOPES, Tenant, TenantStatus } from './tenant';
import { TenantStore } from './ports';

/** Who made an API request. */
export interface Principal {
  readonly tenantId: string;
  readonly keyId: string;
  readonly scopes: readonly Scope[];
  readonly plan: Plan;
}

/** A key as created: the secret itself is in `apiKey`, shown this once. */
export interface IssuedKey {
  readonly key: ApiKey;
  readonly apiKey: string;
}

const PLANS: readonly Plan[] = ['free', 'paid'];
/** A domain a tenant may serve links on, in punycode: a host name with a dot, at most 253 characters, a top label of letters. */
const DOMAIN = /^(?=.{4,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
/** What an operator may type: letters of any script (an IDN), digits, hyphens and dots; nothing a URL parser would read as more. */
const BARE_HOST = /^[\p{L}\p{M}\p{N}.-]{1,253}$/u;

const invalid = (field: string, why: string) => new DomainError(ErrorCode.VALIDATION_FAILED, `${field} ${why}`, { field });

export interface TenantServiceOptions {
  /**
   * How long a checked key is trusted without asking the store again: the bound on how late a
   * revocation, a suspension or an expiry takes effect on every instance (1 s).
   */
  readonly keyCacheMs?: number;
  /** Domains links can always be created on (ours); tenants cannot claim them. */
  readonly serviceDomains?: readonly string[];
  /** Keys a tenant may hold at once (neither revoked nor expired), per plan; unbounded when absent. */
  readonly maxKeys?: Readonly<Record<Plan, number>>;
}

/**
 * Tenants, their API keys and their domains (docs/design.md, "Tenants, keys and plans"). Keys are
 * stored as SHA-256 hashes with a short prefix to recognise them; the secret is shown once.
 */
export class TenantService {
  private readonly keyCache: LRUCache<string, { principal: Principal } | { error: DomainError }>;
  private readonly domainCache: LRUCache<string, { owner: string | null }>;
  private readonly serviceDomains: ReadonlySet<string>;
  private readonly keyCacheMs: number;
  private readonly maxKeys: Readonly<Record<Plan, number>> | null;

  constructor(
    private readonly store: TenantStore,
    options: TenantServiceOptions = {},
    private readonly clock: Clock = systemClock,
  ) {
    this.keyCacheMs = options.keyCacheMs ?? 1000;
    // lru-cache reads a ttl of 0 as "forever": at least 1 ms, and nothing is cached when caching is off.
    this.keyCache = new LRUCache({ max: 10_000, ttl: Math.max(1, this.keyCacheMs) });
    this.domainCache = new LRUCache({ max: 10_000, ttl: Math.max(1, this.keyCacheMs) });
    this.serviceDomains = new Set(options.serviceDomains ?? []);
    this.maxKeys = options.maxKeys ?? null;
  }

  /** The principal of an API key: 401 for a missing, unknown, revoked or expired key, 403 for a suspended tenant. */
  async verify(apiKey: unknown): Promise<Principal> {
    if (typeof apiKey !== 'string' || apiKey.length < 8 || apiKey.length > 200) throw new DomainError(ErrorCode.UNAUTHENTICATED, 'a valid x-api-key header is required');
    const hash = hashApiKey(apiKey);
    const cached = this.keyCache.get(hash);
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
    let result: { principal: Principal } | { error: DomainError };
    if (!found || found.key.revokedAt !== null || (found.key.expiresAt !== null && found.key.expiresAt.getTime() <= now)) {
      // One message for all three: which keys exist is not for the caller to learn.
      result = { error: new DomainError(ErrorCode.UNAUTHENTICATED, 'unknown, revoked or expired API key') };
    } else if (found.tenant.status === 'suspended') {
      result = { error: new DomainError(ErrorCode.TENANT_SUSPENDED, 'this tenant is suspended; contact the operator') };
    } else {
      result = { principal: { tenantId: found.tenant.id, keyId: found.key.id, scopes: found.key.scopes, plan: found.tenant.plan } };
    }
    // A key that expires sooner than the cache time is trusted only until it expires.
    const ttl = Math.min(this.keyCacheMs, found?.key.expiresAt ? found.key.expiresAt.getTime() - now : Infinity);
    if (ttl > 0) this.keyCache.set(hash, result, { ttl });
    if ('error' in result) throw result.error;
    return result.principal;
  }

  /**
   * SHORTLINK_BOOTSTRAP_API_KEY: makes sure this key exists as the operator's key and works: every
   * scope, not revoked, no expiry, its tenant active (creates the operator tenant on the paid plan
   * when the key is unknown). Whatever a key did to it through the API, a restart with the key in
   * the environment restores it. Idempotent across restarts and instances.
   */
  async bootstrap(apiKey: string, name = 'operator'): Promise<Tenant | null> {
    const hash = hashApiKey(apiKey);
    if (await this.store.findByKeyHash(hash)) {
      await this.store.restoreKey(hash, SCOPES);
      return null;
    }
    const tenant = this.newTenant(name, 'paid');
    return (await this.store.createWithApiKey(tenant, hash, this.newKey(apiKey, 'bootstrap', SCOPES, null))) ? tenant : null;
  }

  /**
   * A first run with no key given (the embedded profile): when no tenant exists yet, creates the
   * operator tenant with a freshly generated key with every scope and returns that key, to be
   * shown once. Returns null once any tenant exists, so later starts create nothing and show nothing.
   */
  async bootstrapFirstRun(): Promise<string | null> {
    if ((await this.store.countTenants()) > 0) return null;
    const apiKey = generateApiKey();
    return (await this.store.createWithApiKey(this.newTenant('operator', 'paid'), hashApiKey(apiKey), this.newKey(apiKey, 'operator', SCOPES, null))) ? apiKey : null;
  }

  /** Operators: a new tenant and its first key (default scopes), shown once. */
  async createTenant(input: { name: unknown; plan: unknown }): Promise<{ tenant: Tenant; issued: IssuedKey }> {
    const name = checkName(input.name);
    const plan = checkPlan(input.plan);
    const apiKey = generateApiKey();
    const tenant = this.newTenant(name, plan);
    const key = this.newKey(apiKey, 'first key', DEFAULT_SCOPES, null);
    await this.store.createWithApiKey(tenant, hashApiKey(apiKey), key);
    return { tenant, issued: { apiKey, key: { ...key, tenantId: tenant.id, createdAt: tenant.createdAt, revokedAt: null } } };
  }

  async getTenant(tenantId: string): Promise<Tenant> {
    const tenant = await this.store.findTenant(tenantId);
    if (!tenant) throw new DomainError(ErrorCode.TENANT_NOT_FOUND, `no tenant ${tenantId}`, { tenantId });
    return tenant;
  }

  listTenants(afterId: string | null, limit: number): Promise<Tenant[]> {
    return this.store.listTenants(afterId, limit);
  }

  /** Operators: change a tenant's plan, name, or suspend it (its keys fail within the key cache's second). */
  async updateTenant(tenantId: string, change: { plan?: unknown; status?: unknown; name?: unknown }): Promise<Tenant> {
    const update: { plan?: Plan; status?: TenantStatus; name?: string } = {};
    if (change.plan !== undefined) update.plan = checkPlan(change.plan);
    if (change.name !== undefined) update.name = checkName(change.name);
    if (change.status !== undefined) {
      if (change.status !== 'active' && change.status !== 'suspended') throw invalid('status', 'must be "active" or "suspended"');
      update.status = change.status;
    }
    const tenant = await this.store.updateTenant(tenantId, update);
    if (!tenant) throw new DomainError(ErrorCode.TENANT_NOT_FOUND, `no tenant ${tenantId}`, { tenantId });
    return tenant;
  }

  /** A tenant's new key: name, scopes (default: links and analytics, never more than the caller has), optional expiry. */
  async createKey(principal: Principal, input: { name: unknown; scopes?: unknown; expiresAt?: unknown }): Promise<IssuedKey> {
    const name = checkName(input.name, 'name');
    const scopes = input.scopes === undefined || input.scopes === null ? DEFAULT_SCOPES.filter((s) => principal.scopes.includes(s)) : checkScopes(input.scopes);
    const beyond = scopes.filter((s) => !principal.scopes.includes(s));
    if (beyond.length) throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, `a key cannot give more than it has: ${beyond.join(', ')}`, { scopes: beyond });
    let expiresAt: Date | null = null;
    if (input.expiresAt !== undefined && input.expiresAt !== null) {
      const ms = typeof input.expiresAt === 'string' && /T.*(Z|[+-]\d{2}:\d{2})$/.test(input.expiresAt) ? Date.parse(input.expiresAt) : NaN;
      if (!Number.isFinite(ms) || ms <= this.clock.now() || ms > Date.UTC(9999, 0, 1)) throw invalid('expiresAt', 'must be a future ISO 8601 date-time with a zone');
      expiresAt = new Date(ms);
    }
    const apiKey = generateApiKey();
    const maxActive = this.maxKeys?.[principal.plan] ?? Infinity;
    const cap = Number.isFinite(maxActive) ? { maxActive, now: new Date(this.clock.now()) } : undefined;
    const key = await this.store.addKey(principal.tenantId, hashApiKey(apiKey), this.newKey(apiKey, name, scopes, expiresAt), cap);
    if (!key) throw new DomainError(ErrorCode.KEY_LIMIT_REACHED, `the ${principal.plan} plan allows ${maxActive} active keys per tenant; revoke one first`, { limit: maxActive });
    return { key, apiKey };
  }

  listKeys(tenantId: string): Promise<ApiKey[]> {
    return this.store.listKeys(tenantId);
  }

  /**
   * Revokes a key of the caller's tenant, which must hold every scope of that key: a key never
   * takes away more than it could give (a `links:write` key cannot revoke the operator's admin key).
   */
  async revokeKey(principal: Principal, keyId: string): Promise<void> {
    const notFound = () => new DomainError(ErrorCode.KEY_NOT_FOUND, `no active key ${keyId}`, { keyId });
    const target = (await this.store.listKeys(principal.tenantId)).find((k) => k.id === keyId && k.revokedAt === null);
    if (!target) throw notFound();
    const beyond = target.scopes.filter((s) => !principal.scopes.includes(s));
    if (beyond.length) throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, `a key cannot revoke a key with scopes it lacks: ${beyond.join(', ')}`, { scopes: beyond });
    if (!(await this.store.revokeKey(principal.tenantId, keyId, new Date(this.clock.now())))) throw notFound();
  }

  /** Operators: give a tenant a domain of its own (its links may then live on it). */
  async addDomain(tenantId: string, raw: unknown): Promise<string> {
    await this.getTenant(tenantId);
    const domain = checkDomain(raw);
    if (this.serviceDomains.has(domain)) throw new DomainError(ErrorCode.DOMAIN_TAKEN, `${domain} is one of the service's own domains`, { domain });
    if (!(await this.store.addDomain(tenantId, domain))) throw new DomainError(ErrorCode.DOMAIN_TAKEN, `${domain} already belongs to a tenant`, { domain });
    this.domainCache.delete(domain);
    return domain;
  }

  async removeDomain(tenantId: string, raw: unknown): Promise<void> {
    const domain = checkDomain(raw);
    if (!(await this.store.removeDomain(tenantId, domain))) throw new DomainError(ErrorCode.DOMAIN_NOT_FOUND, `tenant ${tenantId} has no domain ${domain}`, { domain });
    this.domainCache.delete(domain);
  }

  async domainsOf(tenantId: string): Promise<string[]> {
    return (await this.store.allDomains()).filter((d) => d.tenantId === tenantId).map((d) => d.domain);
  }

  /** Whether the tenant owns the domain (cached like keys: a second at most). */
  async owns(tenantId: string, domain: string): Promise<boolean> {
    let entry = this.domainCache.get(domain);
    if (!entry) {
      const all = await this.store.allDomains();
      entry = { owner: all.find((d) => d.domain === domain)?.tenantId ?? null };
      if (this.keyCacheMs > 0) this.domainCache.set(domain, entry);
    }
    return entry.owner === tenantId;
  }

  private newTenant(name: string, plan: Plan): Tenant {
    return { id: randomUUID(), name, plan, status: 'active', createdAt: new Date(this.clock.now()) };
  }

  private newKey(apiKey: string, name: string, scopes: readonly Scope[], expiresAt: Date | null) {
    return { id: randomUUID(), name, prefix: keyPrefix(apiKey), scopes: [...scopes], expiresAt };
  }
}

function checkName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string' || value.trim() === '' || value.trim().length > 200 || /[\u0000-\u001f\u007f]/.test(value)) throw invalid(field, 'must be 1-200 printable characters');
  return value.trim();
}

function checkPlan(value: unknown): Plan {
  if (!PLANS.includes(value as Plan)) throw invalid('plan', `must be one of ${PLANS.join(', ')}`);
  return value as Plan;
}

function checkScopes(value: unknown): Scope[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((s) => !SCOPES.includes(s as Scope))) throw invalid('scopes', `must be a non-empty list of ${SCOPES.join(', ')}`);
  return [...new Set(value as Scope[])];
}

/**
 * A bare host name, in lower-case punycode: no scheme, user, port, path, trailing dot or IP address.
 * Not read through a URL parser, which would turn `go.acme.com@evil.com` into `evil.com`.
 */
export function checkDomain(value: unknown): string {
  const text = typeof value === 'string' ? value.trim() : '';
  // domainToASCII answers '' for a name that is not a valid IDN.
  const host = BARE_HOST.test(text) ? domainToASCII(text.toLowerCase()) : '';
  if (!DOMAIN.test(host)) throw invalid('domain', 'must be a bare host name such as links.example.com (no scheme, user, port, path or trailing dot; not an IP address)');
  return host;
}
