import { AuditContext, auditEntry, plain } from '@shortlink/audit-domain';
import { Clock, DomainError, ErrorCode, systemClock } from '@shortlink/core';
import { KEY_CEILING, KeyPerson, KeyStanding, keyStanding, managerOf, mayManageKey, mayTransferKeys } from './authority';
import { Principal } from './credentials';
import { TenantStore } from './ports';
import { ApiKey, checkName, generateApiKey, hashApiKey, invalid, newKeyRecord, NEW_KEY_SCOPES, Plan, Scope, SCOPES } from './tenant';

/** A key as created: the secret itself is in `apiKey`, shown this once. */
export interface IssuedKey {
  readonly key: ApiKey;
  readonly apiKey: string;
  readonly standing: KeyStanding;
}

/** A key of a listing, with what it may do now. */
export interface ListedKey {
  readonly key: ApiKey;
  readonly standing: KeyStanding;
}

export interface ApiKeyServiceOptions {
  /** Keys a tenant may hold at once (neither revoked nor expired), per plan; unbounded when absent. */
  readonly maxKeys?: Readonly<Record<Plan, number>>;
}

/**
 * A tenant's API keys (docs/design.md, "Security model" and "Tenants, keys and plans"): a key acts
 * for the person who made it (or whom an owner transferred it to) and never holds more than that
 * person's role allows; issued with scopes never beyond the caller's, capped per plan, revoked only
 * by whoever may manage it. Keys are stored as SHA-256 hashes with a short prefix to recognise them;
 * the secret is shown once.
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
   * A tenant's new key, acting for the caller's person (the person signed in, or the one the
   * calling key acts for; none for a key of no person): name, scopes (default: those of
   * NEW_KEY_SCOPES the caller may give), optional expiry. Never a scope the caller lacks, never one
   * above that person's KEY_CEILING, and `members:write` only from an owner signed in, or from a key
   * of no person that holds it (the first key of a tenant without an owner, the operator's key),
   * whose replacement gets it by default. With `audit`, `key.created` is written with the key
   * (docs/design.md, "Audit log").
   */
  async createKey(principal: Principal, input: { name: unknown; scopes?: unknown; expiresAt?: unknown }, audit?: AuditContext): Promise<IssuedKey> {
    const name = checkName(input.name, 'name');
    const person = personOf(principal);
    const ceiling = person ? KEY_CEILING[person.role] : SCOPES;
    // A key of no person holds members:write only while its tenant has no owner (or as the operator's):
    // it stands in for the owner, and a key made to replace it keeps the way to invite the first one.
    const standsInForOwner = principal.actor.kind === 'key' && person === null && principal.scopes.includes('members:write');
    const mintsOwnerLevel = (principal.actor.kind === 'person' && principal.actor.role === 'owner') || standsInForOwner;
    const mayGive = (s: Scope) => principal.scopes.includes(s) && ceiling.includes(s) && (s !== 'members:write' || mintsOwnerLevel);
    const defaults: readonly Scope[] = standsInForOwner ? [...NEW_KEY_SCOPES, 'members:write'] : NEW_KEY_SCOPES;
    const scopes = input.scopes === undefined || input.scopes === null ? defaults.filter(mayGive) : checkScopes(input.scopes);
    const beyond = scopes.filter((s) => !principal.scopes.includes(s));
    if (beyond.length) throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, `a key cannot give more than it has: ${beyond.join(', ')}`, { scopes: beyond });
    const aboveRole = scopes.filter((s) => !ceiling.includes(s));
    if (aboveRole.length)
      throw new DomainError(
        ErrorCode.INSUFFICIENT_SCOPE,
        `a key acting for ${article(person!.role)} cannot hold ${aboveRole.join(', ')}: member and single sign-on changes need a person, or a key an owner made`,
        { scopes: aboveRole },
      );
    if (scopes.includes('members:write') && !mintsOwnerLevel)
      throw new DomainError(
        ErrorCode.INSUFFICIENT_SCOPE,
        'only an owner signed in makes a key with members:write (or, before a tenant has an owner, its first key)',
        {
          scopes: ['members:write'],
        },
      );
    if (!scopes.length)
      throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'the caller has none of the scopes a key gets by default; name them', { scopes: [] });
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
    const record = newKeyRecord(apiKey, name, scopes, expiresAt, person);
    const entry =
      audit &&
      auditEntry(
        audit,
        {
          log: principal.tenantId,
          action: 'key.created',
          target: { type: 'key', id: record.id, domain: null },
          // The prefix is what key lists show; the secret itself never reaches the log.
          details: { name, prefix: record.prefix, scopes: [...scopes], expiresAt: plain(expiresAt), actsFor: person ? person.email : null },
        },
        new Date(this.clock.now()),
      );
    const key = await this.store.addKey(principal.tenantId, hashApiKey(apiKey), record, cap, entry);
    if (!key)
      throw new DomainError(ErrorCode.KEY_LIMIT_REACHED, `the ${principal.plan} plan allows ${maxActive} active keys per tenant; revoke one first`, {
        limit: maxActive,
      });
    const tenantHasOwner = person ? true : await this.store.hasActiveOwner(principal.tenantId);
    return { key, apiKey, standing: keyStanding(key, tenantHasOwner) };
  }

  /** The tenant's keys, revoked ones too, each with what it may do now. */
  async listKeys(tenantId: string): Promise<ListedKey[]> {
    const [keys, tenantHasOwner] = await Promise.all([this.store.listKeys(tenantId), this.store.hasActiveOwner(tenantId)]);
    return keys.map((key) => ({ key, standing: keyStanding(key, tenantHasOwner) }));
  }

  /**
   * Revokes a key of the caller's tenant (docs/design.md, "Security model"): one the caller may
   * manage (its own, any for an owner, for an admin those of members it manages and suspended
   * ones), and only by a caller holding every scope of that key: a key never takes away more than
   * it could give (a `links:write` key cannot revoke the operator's admin key).
   */
  async revokeKey(principal: Principal, keyId: string, audit?: AuditContext): Promise<void> {
    const notFound = () => new DomainError(ErrorCode.KEY_NOT_FOUND, `no active key ${keyId}`, { keyId });
    const target = (await this.store.listKeys(principal.tenantId)).find((k) => k.id === keyId && k.revokedAt === null);
    if (!target) throw notFound();
    this.checkMayManage(principal, target, 'revoke');
    const at = new Date(this.clock.now());
    const entry =
      audit &&
      auditEntry(
        audit,
        {
          log: principal.tenantId,
          action: 'key.revoked',
          target: { type: 'key', id: keyId, domain: null },
          details: { name: target.name, prefix: target.prefix, actsFor: target.person?.email ?? null },
        },
        at,
      );
    if (!(await this.store.revokeKey(principal.tenantId, keyId, at, entry))) throw notFound();
  }

  /**
   * Makes a key act for another active member (docs/design.md, "Security model"): owners only, the
   * way to keep a removed person's suspended keys working, or to adopt the tenant's first key. The
   * key keeps its scopes; what it may use follows the new person's role. `key.transferred` with it.
   */
  async transferKey(principal: Principal, keyId: string, memberId: unknown, audit?: AuditContext): Promise<ListedKey> {
    if (typeof memberId !== 'string' || memberId.length === 0 || memberId.length > 64) throw invalid('memberId', 'must be the id of a member');
    if (!mayTransferKeys(managerOf(principal)))
      throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'only an owner hands a key over to another member', { keyId });
    const at = new Date(this.clock.now());
    let refusal: unknown = null;
    const outcome = await this.store.transferKey(principal.tenantId, keyId, memberId, (before, to) => {
      try {
        this.checkMayManage(principal, before, 'transfer');
      } catch (error) {
        refusal = error;
        return { refuse: true };
      }
      const person = (p: KeyPerson | null) => (p ? { id: p.id, email: p.email } : null);
      return {
        audit:
          audit &&
          auditEntry(
            audit,
            {
              log: principal.tenantId,
              action: 'key.transferred',
              target: { type: 'key', id: keyId, domain: null },
              changes: { actsFor: { from: before.memberId === null ? null : (person(before.person) ?? { id: before.memberId, email: null }), to: person(to) } },
              details: { name: before.name, prefix: before.prefix },
            },
            at,
          ),
      };
    });
    if (outcome.outcome === 'transferred') return { key: outcome.key, standing: keyStanding(outcome.key, true) };
    if (outcome.outcome === 'key_not_found') throw new DomainError(ErrorCode.KEY_NOT_FOUND, `no active key ${keyId}`, { keyId });
    if (outcome.outcome === 'member_not_found')
      throw new DomainError(ErrorCode.MEMBER_NOT_FOUND, `no active member ${memberId} to hand the key to`, { memberId });
    throw refusal ?? new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'this key is not yours to hand over', { keyId });
  }

  /** Throws unless the caller may manage `target` and holds every scope of it. */
  private checkMayManage(principal: Principal, target: ApiKey, verb: 'revoke' | 'transfer'): void {
    if (!mayManageKey(managerOf(principal), target))
      throw new DomainError(
        ErrorCode.INSUFFICIENT_SCOPE,
        target.memberId === null
          ? `only an owner may ${verb} a key of no person (the tenant's first key is owner-level)`
          : `this key acts for another person, whom you do not manage: only its person, an owner, or an admin for a non-owner may ${verb} it`,
        { keyId: target.id },
      );
    const beyond = target.scopes.filter((s) => !principal.scopes.includes(s));
    if (beyond.length)
      throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, `a key cannot ${verb} a key with scopes it lacks: ${beyond.join(', ')}`, { scopes: beyond });
  }
}

/** The person a new key made by `principal` acts for: the person signed in, or the one the calling key acts for. */
function personOf(principal: Principal): KeyPerson | null {
  const actor = principal.actor;
  if (actor.kind === 'key') return actor.person;
  const role = actor.role as KeyPerson['role'];
  return { id: actor.id, email: actor.email, role };
}

const article = (role: string) => (role === 'admin' || role === 'owner' || role === 'editor' ? `an ${role}` : `a ${role}`);

function checkScopes(value: unknown): Scope[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((s) => !SCOPES.includes(s as Scope)))
    throw invalid('scopes', `must be a non-empty list of ${SCOPES.join(', ')}`);
  return [...new Set(value as Scope[])];
}
