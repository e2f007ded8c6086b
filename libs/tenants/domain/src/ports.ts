import type { AuditEntry } from '@shortlink/audit-domain';
import type { KeyPerson } from './authority';
import { DomainEntry } from './domain-ownership';
import { ApiKey, Plan, Scope, Tenant, TenantStatus } from './tenant';

export interface NewApiKey {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
  readonly scopes: readonly Scope[];
  readonly expiresAt: Date | null;
  /** The member the key acts for (its id is stored; the store answers the key with this person); null for a key of no person. */
  readonly person: KeyPerson | null;
}

/** The plan's bound on a tenant's active keys, as of `now`. */
export interface KeyCap {
  readonly maxActive: number;
  readonly now: Date;
}

/** A key found by its hash, with its person and its tenant (one read per authentication). */
export interface KeyWithTenant {
  readonly key: ApiKey;
  readonly tenant: Tenant;
  /** Whether the tenant has an active owner (what a key of no person may do depends on it: authority.ts). */
  readonly tenantHasOwner: boolean;
}

export type KeyTransferOutcome =
  { readonly outcome: 'transferred'; readonly key: ApiKey } | { readonly outcome: 'key_not_found' | 'member_not_found' | 'refused' };

/**
 * A transfer, asked under a lock of the tenant with the key before it (its person as it is) and
 * the active member it goes to: refuse, or the audit entry to write with it.
 */
export type KeyTransferDecision = (
  before: ApiKey,
  to: KeyPerson,
) => { readonly refuse: true } | { readonly refuse?: false; readonly audit?: AuditEntry | null };

export interface TenantChange {
  readonly plan?: Plan;
  readonly status?: TenantStatus;
  readonly name?: string;
}

/** The audit entry of a tenant change, made from the tenant before and after it (null: nothing to record). */
export type TenantChangeAudit = (before: Tenant, after: Tenant) => AuditEntry | null;

/**
 * Shard-independent store of tenants, their hashed API keys and their domains (the meta database).
 * A change given an `audit` entry writes it in the change's own transaction: both are stored, or
 * neither (docs/design.md, "Audit log").
 */
export interface TenantStore {
  findByKeyHash(apiKeyHash: string): Promise<KeyWithTenant | null>;
  /** The same, by the tenant and the key's id (a YOURLS signature names a key so). */
  findKey(tenantId: string, keyId: string): Promise<KeyWithTenant | null>;
  /** Creates the tenant and its first key; false (and nothing created) if that key hash exists. */
  createWithApiKey(tenant: Tenant, apiKeyHash: string, key: NewApiKey, audit?: AuditEntry): Promise<boolean>;
  findTenant(tenantId: string): Promise<Tenant | null>;
  /** Tenants by name, after a cursor (the last id seen), at most `limit`. */
  listTenants(afterId: string | null, limit: number): Promise<Tenant[]>;
  /** Changes a tenant under a lock of its row; `audit` is asked for the entry with the tenant before and after. */
  updateTenant(tenantId: string, change: TenantChange, audit?: TenantChangeAudit): Promise<Tenant | null>;
  countTenants(): Promise<number>;
  /**
   * Adds a key. With `cap`: only while the tenant has fewer than `maxActive` keys that are neither
   * revoked nor expired at `now`, decided under a lock of the tenant (concurrent adds never pass
   * the cap); null when it has that many.
   */
  addKey(tenantId: string, apiKeyHash: string, key: NewApiKey, cap?: KeyCap, audit?: AuditEntry): Promise<ApiKey | null>;
  /** The tenant's keys, revoked ones too, oldest first, each with its person as it is now. */
  listKeys(tenantId: string): Promise<ApiKey[]>;
  /** Whether the tenant has an active owner. */
  hasActiveOwner(tenantId: string): Promise<boolean>;
  /**
   * The bootstrap key at each boot: these scopes, not revoked, no expiry, acting for no person, and
   * its tenant active (docs/design.md, "Tenants, keys and plans"). Nothing happens for an unknown hash.
   */
  restoreKey(apiKeyHash: string, scopes: readonly Scope[]): Promise<void>;
  /** Marks the key revoked (kept for the record); false when the tenant has no such active key. */
  revokeKey(tenantId: string, keyId: string, at: Date, audit?: AuditEntry): Promise<boolean>;
  /**
   * Makes an unrevoked key act for another active member of its tenant, decided under a lock of the
   * tenant (a member removed meanwhile is not given a key), with its audit entry in the same transaction.
   */
  transferKey(tenantId: string, keyId: string, memberId: string, decide: KeyTransferDecision): Promise<KeyTransferOutcome>;
  /**
   * An operator gives a tenant a domain: verified by the operator (`verifiedBy: 'operator'`), never
   * checked; false when the domain belongs to a tenant already (docs/design.md, "Custom domains and TLS").
   */
  addDomain(tenantId: string, domain: string, audit?: AuditEntry): Promise<boolean>;
  /** Takes a domain from its tenant (its settings back to the defaults); false when the tenant has no such domain. */
  removeDomain(tenantId: string, domain: string, audit?: AuditEntry): Promise<boolean>;
  /** Every tenant domain with its owner, status and HTTP token (the redirect's table of hosts). */
  allDomains(): Promise<DomainEntry[]>;
  suspendedTenantIds(): Promise<string[]>;
  /** Operators' additions to the domain block list. */
  blockedDomains(): Promise<Array<{ readonly domain: string; readonly reason: string | null; readonly createdAt: Date }>>;
  blockDomain(domain: string, reason: string | null): Promise<boolean>;
  unblockDomain(domain: string): Promise<boolean>;
}

export const TENANT_STORE = Symbol('TENANT_STORE');
