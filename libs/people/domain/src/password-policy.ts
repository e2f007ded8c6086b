import { DomainError, ErrorCode } from '@shortlink/core';
import { COMMON_PASSWORDS } from './common-passwords';

/** Longest password taken (argon2 would take more; a bound keeps a request's hashing cost fixed). */
export const MAX_PASSWORD_LENGTH = 256;

/**
 * A new password (docs/design.md, "People and sessions"): at least `minLength` characters, not on
 * the common-passwords list, not the email itself. What it fails is said, never echoed.
 */
export function checkNewPassword(value: unknown, minLength: number, email: string): string {
  const weak = (why: string) => new DomainError(ErrorCode.PASSWORD_TOO_WEAK, `password ${why}`, { field: 'password', minLength });
  if (typeof value !== 'string') throw weak('must be a string');
  const length = [...value].length;
  if (length < minLength) throw weak(`must be at least ${minLength} characters`);
  if (length > MAX_PASSWORD_LENGTH) throw weak(`must be at most ${MAX_PASSWORD_LENGTH} characters`);
  const lower = value.toLowerCase();
  if (COMMON_PASSWORDS.has(lower)) throw weak('is on the list of common passwords');
  if (lower === email || lower === email.split('@')[0]) throw weak('must not be the email address');
  if (new Set(value).size < 3) throw weak('must not repeat one or two characters');
  return value;
}
