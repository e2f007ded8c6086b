import { DomainError, ErrorCode } from '@shortlink/core';

const ALIAS_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$/;

/**
 * Paths the apps serve themselves, or that users would mistake for ours: an alias there would be
 * unreachable or misleading (docs/design.md, "URL safety"). Compared case-insensitively.
 */
export const RESERVED_PATHS: ReadonlySet<string> = new Set([
  'api', 'docs', 'health', 'metrics', 'internal', 'admin', 'dashboard', 'static', 'assets', 'favicon.ico', 'robots.txt', 'sitemap.xml',
  'login', 'logout', 'signin', 'signup', 'account', 'settings', 'billing', 'support', 'help', 'status', 'about', 'terms', 'privacy',
  'well-known', 'www', 'app', 'null', 'undefined',
  // The API's own paths next to /api/v1/links/{code}.
  'batch', 'bulk',
]);

export function checkAlias(alias: unknown): string {
  if (typeof alias !== 'string' || !ALIAS_PATTERN.test(alias)) {
    throw new DomainError(ErrorCode.INVALID_ALIAS, 'alias must be 3-64 characters of letters, digits, "_" or "-", starting with a letter or digit', { field: 'alias' });
  }
  if (RESERVED_PATHS.has(alias.toLowerCase())) throw new DomainError(ErrorCode.ALIAS_RESERVED, `alias "${alias}" is reserved`, { alias, field: 'alias' });
  return alias;
}

/** Codes as they may appear in a redirect path: generated codes and aliases. */
export const isPlausibleCode = (code: string): boolean => ALIAS_PATTERN.test(code);
