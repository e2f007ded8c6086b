import { AuditContext, auditEntry, plain } from '@shortlink/audit-domain';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { Principal } from './credentials';
import { TenantStore } from './ports';
import { ApiKey, checkName, DEFAULT_SCOPES, generateApiKey, hashApiKey, invalid, newKeyRecord, Plan, Scope, SCOPES } from './tenant';

/** A key as created: the secret itself is in `apiKey`, shown this once. */
export interface IssuedKey {
  readonly key: ApiKey;
  readonly apiKey: string;
}

export interface ApiKeyServiceOptions {
  /** Keys a tenant may hold at once (neither revoked nor expired), per plan; unbounded when absent. */
  readonly maxKeys?: Readonly<Record<Plan, number>>;
}

/**
 * A tenant's API keys (docs/design.md, "Tenants, keys and plans"): issued with scopes never beyond
 * the caller's, capped per plan, revoked only by a key that holds every scope of the revoked one.
 * Keys are stored as SHA-256 hashes with a short prefix to recognise them; the secret is shown once.
 */
export class ApiKeyService {
  private readonly maxKeys: Readonly<Record<Plan, number>> | null;

  constructor(
    private readonly store: TenantStore,
    options: ApiKeyServiceOptions = {},
    private readonly clock: Clock = systemClock,
  ) {
    this.maxKeys = options.maxKeys ?? null;
  }

  /**
   * A tenant's new key: name, scopes (default: DEFAULT_SCOPES the caller holds; never more than the
   * caller has), optional expiry. With `audit`, `key.created` is written with the key (docs/design.md, "Audit log").
   */
  async createKey(principal: Principal, input: { name: unknown; scopes?: unknown; expiresAt?: unknown }, audit?: AuditContext): Promise<IssuedKey> {
    const name = checkName(input.name, 'name');
    const scopes = input.scopes === undefined || input.scopes === null ? DEFAULT_SCOPES.filter((s) => principal.scopes.includes(s)) : checkScopes(input.scopes);
    const beyond = scopes.filter((s) => !principal.scopes.includes(s));
    if (beyond.length) throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, `a key cannot give more than it has: ${beyond.join(', ')}`, { scopes: beyond });
    let expiresAt: Date | null = null;
    if (input.expiresAt !== undefined && input.expiresAt !== null) {
      const ms = typeof input.expiresAt === 'string' && /T.*(Z|[+-]\d{2}:\d{2})$/.test(input.expiresAt) ? Date.parse(input.expiresAt) : NaN;
      if (!Number.isFinite(ms) || ms <= this.clock.now() || ms > Date.UTC(9999, 0, 1))
        throw invalid('expiresAt', 'must be a future ISO 8601 date-time with a zone');
      expiresAt = new Date(ms);
    }
    const apiKey = generateApiKey();
    const maxActive = this.maxKeys?.[principal.plan] ?? Infinity;
    const cap = Number.isFinite(maxActive) ? { maxActive, now: new Date(this.clock.now()) } : undefined;
    const record = newKeyRecord(apiKey, name, scopes, expiresAt);
    const entry =
      audit &&
      auditEntry(
        audit,
        {
          log: principal.tenantId,
          action: 'key.created',
          target: { type: 'key', id: record.id, domain: null },
          // The prefix is what key lists show; the secret itself never reaches the log.
          details: { name, prefix: record.prefix, scopes: [...scopes], expiresAt: plain(expiresAt) },
        },
        new Date(this.clock.now()),
      );
    const key = await this.store.addKey(principal.tenantId, hashApiKey(apiKey), record, cap, entry);
    if (!key)
      throw new DomainError(ErrorCode.KEY_LIMIT_REACHED, `the ${principal.plan} plan allows ${maxActive} active keys per tenant; revoke one first`, {
        limit: maxActive,
      });
    return { key, apiKey };
  }

  listKeys(tenantId: string): Promise<ApiKey[]> {
    return this.store.listKeys(tenantId);
  }

  /**
   * Revokes a key of the caller's tenant, which must hold every scope of that key: a key never
   * takes away more than it could give (a `links:write` key cannot revoke the operator's admin key).
   */
  async revokeKey(principal: Principal, keyId: string, audit?: AuditContext): Promise<void> {
    const notFound = () => new DomainError(ErrorCode.KEY_NOT_FOUND, `no active key ${keyId}`, { keyId });
    const target = (await this.store.listKeys(principal.tenantId)).find((k) => k.id === keyId && k.revokedAt === null);
    if (!target) throw notFound();
    const beyond = target.scopes.filter((s) => !principal.scopes.includes(s));
    if (beyond.length)
      throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, `a key cannot revoke a key with scopes it lacks: ${beyond.join(', ')}`, { scopes: beyond });
    const at = new Date(this.clock.now());
    const entry =
      audit &&
      auditEntry(
        audit,
        {
          log: principal.tenantId,
          action: 'key.revoked',
          target: { type: 'key', id: keyId, domain: null },
          details: { name: target.name, prefix: target.prefix },
        },
        at,
      );
    if (!(await this.store.revokeKey(principal.tenantId, keyId, at, entry))) throw notFound();
  }
}

function checkScopes(value: unknown): Scope[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((s) => !SCOPES.includes(s as Scope)))
    throw invalid('scopes', `must be a non-empty list of ${SCOPES.join(', ')}`);
  return [...new Set(value as Scope[])];
}
