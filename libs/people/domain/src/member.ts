import { createHash, randomBytes } from 'crypto';
import { DomainError, ErrorCode } from '@shortlink/core';
import { Role } from './roles';

export type MemberStatus = 'invited' | 'active';

/** A person of a tenant (docs/design.md, "People and sessions"). */
export interface Member {
  readonly id: string;
  readonly tenantId: string;
  /** Lower-case, trimmed: the sign-in name. */
  readonly email: string;
  readonly role: Role;
  /** `invited` until the invitation is accepted with a password. */
  readonly status: MemberStatus;
  readonly createdAt: Date;
  /** When the pending invitation stops working (null once accepted). */
  readonly invitationExpiresAt: Date | null;
}

/**
 * Invitation tokens and session ids are 256-bit random values: a fast hash is the right storage
 * form (as for API keys), and only the SHA-256 is stored.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** 32 random bytes, base64url (43 characters), with a prefix naming what it is. */
export function newToken(prefix: 'inv' | 'ses'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** Loose on purpose (one @, a dot in the domain, no spaces): mail delivery is the real check. */
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;

export function checkEmail(value: unknown): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (email.length > 254 || !EMAIL.test(email) || /[\u0000-\u001f\u007f]/.test(email))
    throw new DomainError(ErrorCode.VALIDATION_FAILED, 'email must be an email address such as ana@example.com', { field: 'email' });
  return email;
}
