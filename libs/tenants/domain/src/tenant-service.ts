import { randomUUID } from 'crypto';
import { LRUCache } from 'lru-cache';
import { domainToASCII } from 'url';
import { AuditAction, AuditContext, auditEntry, diffOf, OPERATOR_LOG } from '@shortlink/audit-domain';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { IssuedKey } from './api-keys';
import { keyStanding } from './authority';
import { DomainStatus } from './domain-ownership';
import { TenantChange, TenantStore } from './ports';
import {
  ApiKey,
  checkName,
  FIRST_KEY_SCOPES,
  generateApiKey,
  hashApiKey,
  invalid,
  newKeyRecord,
  Plan,
  SCOPES,
  shortLivedCache,
  Tenant,
  TenantStatus,
} from './tenant';

const PLANS: readonly Plan[] = ['free', 'paid'];
/** A domain a tenant may serve links on, in punycode: a host name with a dot, at most 253 characters, a top label of letters. */
const DOMAIN = /^(?=.{4,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
/** What an operator may type: letters of any script (an IDN), digits, hyphens and dots; nothing a URL parser would read as more. */
const BARE_HOST = /^[\p{L}\p{M}\p{N}.-]{1,253}$/u;

export interface TenantServiceOptions {
  /** How long who owns a domain is trusted without asking the store again (1 s, like a checked key). */
  readonly domainCacheMs?: number;
  /** Domains links can always be created on (ours, a port allowed); tenants cannot claim them, nor any name under them. */
  readonly serviceDomains?: readonly string[];
}

/**
 * Tenants and their domains (docs/design.md, "Tenants, keys and plans"): the operator's tenant
 * provisioned at boot, tenants created, changed and suspended by operators, and the domains each
 * may serve links on.
 */
export class TenantService {
  private readonly domainCache: LRUCache<string, { owner: string | null; status: DomainStatus | null }>;
  private readonly domainCacheMs: number;
  private readonly serviceDomains: ReadonlySet<string>;

  constructor(
    private readonly store: TenantStore,
    options: TenantServiceOptions = {},
    private readonly clock: Clock = systemClock,
  ) {
    this.domainCacheMs = options.domainCacheMs ?? 1000;
    this.domainCache = shortLivedCache(this.domainCacheMs);
    this.serviceDomains = new Set((options.serviceDomains ?? []).map((d) => d.toLowerCase().replace(/:\d+$/, '')));
  }

  /**
   * SHORTLINK_BOOTSTRAP_API_KEY: makes sure this key exists as the operator's key and works: every
   * scope, not revoked, no expiry, acting for no person, its tenant active (creates the operator tenant on the paid plan
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
    return (await this.store.createWithApiKey(tenant, hash, newKeyRecord(apiKey, 'bootstrap', SCOPES, null))) ? tenant : null;
  }

  /**
   * A first run with no key given (the embedded profile): when no tenant exists yet, creates the
   * operator tenant with a freshly generated key with every scope and returns that key, to be
   * shown once. Returns null once any tenant exists, so later starts create nothing and show nothing.
   */
  async bootstrapFirstRun(): Promise<string | null> {
    if ((await this.store.countTenants()) > 0) return null;
    const apiKey = generateApiKey();
    const created = await this.store.createWithApiKey(this.newTenant('operator', 'paid'), hashApiKey(apiKey), newKeyRecord(apiKey, 'operator', SCOPES, null));
    return created ? apiKey : null;
  }

  /**
   * Operators: a new tenant and its first key (FIRST_KEY_SCOPES, acting for no person: owner-level
   * until the tenant has an active owner, docs/design.md "Security model"), shown once. With
   * `audit`, `tenant.created` goes to the operator log with the tenant (docs/design.md, "Audit log").
   */
  async createTenant(input: { name: unknown; plan: unknown }, audit?: AuditContext): Promise<{ tenant: Tenant; issued: IssuedKey }> {
    const name = checkName(input.name);
    const plan = checkPlan(input.plan);
    const apiKey = generateApiKey();
    const tenant = this.newTenant(name, plan);
    const key = newKeyRecord(apiKey, 'first key', FIRST_KEY_SCOPES, null);
    const entry = audit && this.operatorEntry(audit, 'tenant.created', tenant.id, null, { details: { name, plan, firstKeyId: key.id } });
    await this.store.createWithApiKey(tenant, hashApiKey(apiKey), key, entry);
    const issued: ApiKey = { ...key, tenantId: tenant.id, createdAt: tenant.createdAt, revokedAt: null, memberId: null };
    // A new tenant has no people: its first key may use every scope it holds.
    return { tenant, issued: { apiKey, key: issued, standing: keyStanding(issued, false) } };
  }

  async getTenant(tenantId: string): Promise<Tenant> {
    const tenant = await this.store.findTenant(tenantId);
    if (!tenant) throw new DomainError(ErrorCode.TENANT_NOT_FOUND, `no tenant ${tenantId}`, { tenantId });
    return tenant;
  }

  listTenants(afterId: string | null, limit: number): Promise<Tenant[]> {
    return this.store.listTenants(afterId, limit);
  }

  /**
   * Operators: change a tenant's plan, name, or suspend it (its keys fail within the key cache's
   * second). With `audit`, the change's entry (its diff; nothing when nothing changed) is written in
   * its transaction: `tenant.plan_changed`, `.renamed`, `.suspended`, `.reactivated`, or
   * `tenant.updated` for several at once.
   */
  async updateTenant(tenantId: string, change: { plan?: unknown; status?: unknown; name?: unknown }, audit?: AuditContext): Promise<Tenant> {
    const update: { plan?: Plan; status?: TenantStatus; name?: string } = {};
    if (change.plan !== undefined) update.plan = checkPlan(change.plan);
    if (change.name !== undefined) update.name = checkName(change.name);
    if (change.status !== undefined) {
      if (change.status !== 'active' && change.status !== 'suspended') throw invalid('status', 'must be "active" or "suspended"');
      update.status = change.status;
    }
    const describe = (before: Tenant, after: Tenant) => {
      const changes = diffOf(before, after, TENANT_FIELDS);
      return changes && audit ? this.operatorEntry(audit, tenantChangeAction(changes, after), tenantId, null, { changes }) : null;
    };
    const tenant = await this.store.updateTenant(tenantId, update, audit && describe);
    if (!tenant) throw new DomainError(ErrorCode.TENANT_NOT_FOUND, `no tenant ${tenantId}`, { tenantId });
    return tenant;
  }

  /**
   * Operators: give a tenant a domain of its own, verified by the operator's word (its links may live
   * on it at once; no check ever runs on it); `tenant.domain_added` with it.
   */
  async addDomain(tenantId: string, raw: unknown, audit?: AuditContext): Promise<string> {
    await this.getTenant(tenantId);
    const domain = this.claimableDomain(raw);
    const entry = audit && this.operatorEntry(audit, 'tenant.domain_added', tenantId, domain);
    if (!(await this.store.addDomain(tenantId, domain, entry)))
      throw new DomainError(ErrorCode.DOMAIN_TAKEN, `${domain} already belongs to a tenant`, { domain });
    this.forgetDomain(domain);
    return domain;
  }

  /**
   * A domain as a tenant may hold it: a bare host name in punycode (checkDomain), neither one of the
   * service's own domains nor a name under one (409 `DOMAIN_TAKEN`).
   */
  claimableDomain(raw: unknown): string {
    const domain = checkDomain(raw);
    const serviceDomain = this.serviceDomainOver(domain);
    if (serviceDomain === domain) throw new DomainError(ErrorCode.DOMAIN_TAKEN, `${domain} is one of the service's own domains`, { domain, serviceDomain });
    // A name under ours would pass a tenant's links off as the service's (docs/design.md, "Tenants, keys and plans").
    if (serviceDomain !== null)
      throw new DomainError(ErrorCode.DOMAIN_TAKEN, `${domain} is under ${serviceDomain}, one of the service's own domains`, { domain, serviceDomain });
    return domain;
  }

  /** Who owns `domain` is read from the store again on the next question (it was added, removed, verified or unverified here). */
  forgetDomain(domain: string): void {
    this.domainCache.delete(domain);
  }

  async removeDomain(tenantId: string, raw: unknown, audit?: AuditContext): Promise<void> {
    const domain = checkDomain(raw);
    const entry = audit && this.operatorEntry(audit, 'tenant.domain_removed', tenantId, domain);
    if (!(await this.store.removeDomain(tenantId, domain, entry)))
      throw new DomainError(ErrorCode.DOMAIN_NOT_FOUND, `tenant ${tenantId} has no domain ${domain}`, { domain });
    this.forgetDomain(domain);
  }

  async domainsOf(tenantId: string): Promise<string[]> {
    return (await this.store.allDomains()).filter((d) => d.tenantId === tenantId).map((d) => d.domain);
  }

  /**
   * Whether the tenant owns the domain and may put links on it (cached like keys: a second at most).
   * A domain it holds but that is not verified: 409 `DOMAIN_NOT_VERIFIED` (docs/design.md, "Custom domains and TLS").
   */
  async owns(tenantId: string, domain: string): Promise<boolean> {
    let entry = this.domainCache.get(domain);
    if (!entry) {
      const found = (await this.store.allDomains()).find((d) => d.domain === domain);
      entry = { owner: found?.tenantId ?? null, status: found?.status ?? null };
      if (this.domainCacheMs > 0) this.domainCache.set(domain, entry);
    }
    if (entry.owner !== tenantId) return false;
    if (entry.status !== 'verified')
      throw new DomainError(ErrorCode.DOMAIN_NOT_VERIFIED, `${domain} is not verified yet: it carries links once its ownership is proven`, {
        field: 'domain',
        domain,
        domainStatus: entry.status,
      });
    return true;
  }

  /** The service's domain that is `domain` or has it under it (`x.sho.rt` under `sho.rt`), or null. */
  private serviceDomainOver(domain: string): string | null {
    for (const own of this.serviceDomains) if (domain === own || domain.endsWith(`.${own}`)) return own;
    return null;
  }

  /** An entry of the operator log about a tenant (and one of its domains). */
  private operatorEntry(
    audit: AuditContext,
    action: AuditAction,
    tenantId: string,
    domain: string | null,
    more: { changes?: ReturnType<typeof diffOf>; details?: Record<string, string> } = {},
  ) {
    return auditEntry(audit, { log: OPERATOR_LOG, action, target: { type: 'tenant', id: tenantId, domain }, ...more }, new Date(this.clock.now()));
  }

  private newTenant(name: string, plan: Plan): Tenant {
    return { id: randomUUID(), name, plan, status: 'active', createdAt: new Date(this.clock.now()) };
  }
}

const TENANT_FIELDS = ['name', 'plan', 'status'] as const satisfies ReadonlyArray<keyof TenantChange>;

/** One change: its own name; several in one request: `tenant.updated`. */
function tenantChangeAction(changes: Readonly<Record<string, unknown>>, after: Tenant): AuditAction {
  const fields = Object.keys(changes);
  if (fields.length > 1) return 'tenant.updated';
  if (fields[0] === 'plan') return 'tenant.plan_changed';
  if (fields[0] === 'name') return 'tenant.renamed';
  return after.status === 'suspended' ? 'tenant.suspended' : 'tenant.reactivated';
}

function checkPlan(value: unknown): Plan {
  if (!PLANS.includes(value as Plan)) throw invalid('plan', `must be one of ${PLANS.join(', ')}`);
  return value as Plan;
}

/**
 * A bare host name, in lower-case punycode: no scheme, user, port, path, trailing dot or IP address.
 * Not read through a URL parser, which would turn `go.acme.com@evil.com` into `evil.com`.
 */
export function checkDomain(value: unknown): string {
  const text = typeof value === 'string' ? value.trim() : '';
  // domainToASCII answers '' for a name that is not a valid IDN.
  const host = BARE_HOST.test(text) ? domainToASCII(text.toLowerCase()) : '';
  if (!DOMAIN.test(host))
    throw invalid('domain', 'must be a bare host name such as links.example.com (no scheme, user, port, path or trailing dot; not an IP address)');
  return host;
}
