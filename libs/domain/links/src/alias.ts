import { DomainError, ErrorCode } from '@shortlink/core';

const ALIAS_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$/;
/** Paths the redirect app serves itself; an alias there would be unreachable. */
export const RESERVED_PATHS: ReadonlySet<string> = new Set(['api', 'health', 'metrics', 'internal', 'favicon.ico', 'robots.txt', 'static', 'dashboard']);

export function checkAlias(alias: unknown): string {
  if (typeof alias !== 'string' || !ALIAS_PATTERN.test(alias)) {
    throw new DomainError(
      ErrorCode.INVALID_ALIAS,
      'alias must be 3-64 characters of letters, digits, "_" or "-", starting with a letter or digit',
    );
  }
  if (RESERVED_PATHS.has(alias.toLowerCase())) throw new DomainError(ErrorCode.INVALID_ALIAS, `alias "${alias}" is reserved`);
  return alias;
}

/** Codes as they may appear in a redirect path: generated codes and aliases. */
export const isPlausibleCode = (code: string): boolean => ALIAS_PATTERN.test(code);
