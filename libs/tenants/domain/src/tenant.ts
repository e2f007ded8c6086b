import { createHash, randomBytes, randomUUID } from 'crypto';
import type { LRUCache } from 'lru-cache';
import { boundedLru, DomainError, ErrorCode } from '@shortlink/core';
import type { KeyPerson } from './authority';

export type Plan = 'free' | 'paid';
export type TenantStatus = 'active' | 'suspended';

export interface Tenant {
  readonly id: string;
  readonly name: string;
  readonly plan: Plan;
  readonly status: TenantStatus;
  readonly createdAt: Date;
}

/**
 * What a key or a person may do (docs/design.md, "Tenants, keys and plans"; `audit:read`: "Audit
 * log"; `members:write`: "People and sessions", a role is a set of these; `keys:write`: managing
 * keys, "Security model"; `conversions:write`: reporting leads and sales, docs/analytics.md
 * "Conversions").
 */
export const SCOPES = ['links:read', 'links:write', 'analytics:read', 'audit:read', 'members:write', 'keys:write', 'conversions:write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];
/**
 * A tenant's first key, made by the operator before any person exists: every scope of the
 * tenant's own, `admin` (the operators') aside. It acts for no person, so what it may use depends
 * on whether the tenant has an owner yet (authority.ts, `keyStanding`).
 */
export const FIRST_KEY_SCOPES: readonly Scope[] = [
  'links:read',
  'links:write',
  'analytics:read',
  'audit:read',
  'members:write',
  'keys:write',
  'conversions:write',
];
/**
 * A new key without explicit scopes gets those of these its maker may give (so a key made to
 * replace another can revoke it); `members:write` only when asked for (an owner signed in).
 */
export const NEW_KEY_SCOPES: readonly Scope[] = ['links:read', 'links:write', 'analytics:read', 'audit:read', 'keys:write', 'conversions:write'];

export interface ApiKey {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  /** The first characters of the key, to tell keys apart in lists (never enough to use it). */
  readonly prefix: string;
  readonly scopes: readonly Scope[];
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  /**
   * The member the key acts for (its maker, or whom an owner transferred it to); null for a key of
   * no person (the tenant's first key, made by the operator, and keys made by such keys).
   */
  readonly memberId: string | null;
  /** That member as it is now (role and email); null for a key of no person, and when the member was removed (the key is suspended). */
  readonly person: KeyPerson | null;
}

/**
 * API keys are 190-bit random tokens, so a fast hash is the right storage form (no brute-force
 * surface as with passwords); only the SHA-256 is stored.
 */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

const KEY_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** 248 = 4 × 62: bytes at or above it are drawn again, so every character is equally likely. */
const UNBIASED_LIMIT = 248;

/** `sl_` and 32 Base62 characters from a CSPRNG (about 190 bits). */
export function generateApiKey(): string {
  let key = 'sl_';
  while (key.length < 35) {
    for (const b of randomBytes(48)) {
      if (b < UNBIASED_LIMIT && key.length < 35) key += KEY_ALPHABET[b % 62];
    }
  }
  return key;
}

/** How a key is shown in lists: `sl_AbCd…` (7 characters of the key itself). */
export const keyPrefix = (apiKey: string): string => apiKey.slice(0, 10);

/** What the store keeps of a new key besides its hash (docs/design.md, "Tenants, keys and plans"). */
export function newKeyRecord(apiKey: string, name: string, scopes: readonly Scope[], expiresAt: Date | null, person: KeyPerson | null = null) {
  return { id: randomUUID(), name, prefix: keyPrefix(apiKey), scopes: [...scopes], expiresAt, person };
}

export const invalid = (field: string, why: string) => new DomainError(ErrorCode.VALIDATION_FAILED, `${field} ${why}`, { field });

/** A tenant's or a key's name: 1-200 printable characters, trimmed. */
export function checkName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string' || value.trim() === '' || value.trim().length > 200 || /[\u0000-\u001f\u007f]/.test(value))
    throw invalid(field, 'must be 1-200 printable characters');
  return value.trim();
}

/**
 * Answers of the tenant store trusted for `ms` (10 000 entries at most). lru-cache reads a ttl of 0
 * as "forever": at least 1 ms; callers that do not cache (ms = 0) also do not store.
 */
export function shortLivedCache<V extends object>(ms: number): LRUCache<string, V> {
  return boundedLru<string, V>({ maxEntries: 10_000, ttlMs: Math.max(1, ms) });
}
