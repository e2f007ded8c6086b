import { DomainError, ErrorCode } from '@shortlink/core';

/** 3-64 of A-Z a-z 0-9 _ -, starting with a letter or digit (also published in the OpenAPI document). */
export const ALIAS_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$/;

/**
 * A code kept from another shortener (docs/design.md, "Import and export"): segments of letters,
 * digits, "_" and "-", each starting with a letter or digit, joined by "/". YOURLS numbers its
 * first links 1 … zz, Shlink allows multi-segment slugs (`blog/2024/launch`).
 */
const LEGACY_CODE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*(?:\/[A-Za-z0-9][A-Za-z0-9_-]*)*$/;
export const LEGACY_CODE_MAX = 64;

/**
 * Paths the apps serve themselves, or that users would mistake for ours: an alias there would be
 * unreachable or misleading (docs/design.md, "URL safety"). Compared case-insensitively.
 */
export const RESERVED_PATHS: ReadonlySet<string> = new Set([
  'api',
  'docs',
  'health',
  'metrics',
  'internal',
  'admin',
  'dashboard',
  'static',
  'assets',
  'favicon.ico',
  'robots.txt',
  'sitemap.xml',
  'login',
  'logout',
  'signin',
  'signup',
  'account',
  'settings',
  'billing',
  'support',
  'help',
  'status',
  'about',
  'terms',
  'privacy',
  'well-known',
  'www',
  'app',
  'null',
  'undefined',
  // Visitors' reports, `POST /r/report`, on every short domain (docs/design.md, "Trust and safety").
  'r',
  // The API's own paths next to /api/v1/links/{code}.
  'batch',
  'bulk',
]);

/** A code is reserved when its first segment is (`docs/x` is as much ours as `docs`). */
export const isReservedCode = (code: string): boolean => {
  const slash = code.indexOf('/');
  return RESERVED_PATHS.has((slash < 0 ? code : code.slice(0, slash)).toLowerCase());
};

export function checkAlias(alias: unknown): string {
  if (typeof alias !== 'string' || !ALIAS_PATTERN.test(alias)) {
    throw new DomainError(ErrorCode.INVALID_ALIAS, 'alias must be 3-64 characters of letters, digits, "_" or "-", starting with a letter or digit', {
      field: 'alias',
    });
  }
  if (RESERVED_PATHS.has(alias.toLowerCase())) throw new DomainError(ErrorCode.ALIAS_RESERVED, `alias "${alias}" is reserved`, { alias, field: 'alias' });
  return alias;
}

/**
 * A legacy code as an import keeps it: 1-64 characters, segments joined by "/". Not a path of ours
 * (the first segment is not reserved) and not ending in a "go" segment (`/{code}/go` is the way
 * past a warning page, so such a code could never be reached).
 */
export function checkLegacyCode(code: unknown): string {
  if (typeof code !== 'string' || code.length > LEGACY_CODE_MAX || !LEGACY_CODE_PATTERN.test(code) || code.endsWith('/go')) {
    throw new DomainError(
      ErrorCode.INVALID_ALIAS,
      'legacyCode must be 1-64 characters: segments of letters, digits, "_" or "-", each starting with a letter or digit, joined by "/", the last not "go"',
      { field: 'legacyCode' },
    );
  }
  if (isReservedCode(code)) throw new DomainError(ErrorCode.ALIAS_RESERVED, `legacyCode "${code}" is reserved`, { alias: code, field: 'legacyCode' });
  return code;
}

/** The code a create asks for: an alias (the rule for new codes), a legacy code (imports), or none. */
export function requestedCode(alias: unknown, legacyCode: unknown): string | null {
  const hasAlias = alias !== undefined && alias !== null;
  const hasLegacy = legacyCode !== undefined && legacyCode !== null;
  if (hasAlias && hasLegacy) throw new DomainError(ErrorCode.VALIDATION_FAILED, 'give alias or legacyCode, not both', { field: 'legacyCode' });
  return hasAlias ? checkAlias(alias) : hasLegacy ? checkLegacyCode(legacyCode) : null;
}

/** Codes as they may appear in a redirect path: generated codes, aliases and legacy codes. */
export const isPlausibleCode = (code: string): boolean => code.length <= LEGACY_CODE_MAX && LEGACY_CODE_PATTERN.test(code);
