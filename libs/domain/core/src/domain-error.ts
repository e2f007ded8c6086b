/**
 * Stable error codes shared by every app. The HTTP filter of each app maps a code to a status;
 * services only ever throw DomainError, never transport exceptions.
 */
export const ErrorCode = {
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  INVALID_URL: 'INVALID_URL',
  URL_NOT_ALLOWED: 'URL_NOT_ALLOWED',
  INVALID_ALIAS: 'INVALID_ALIAS',
  ALIAS_TAKEN: 'ALIAS_TAKEN',
  LINK_NOT_FOUND: 'LINK_NOT_FOUND',
  LINK_EXPIRED: 'LINK_EXPIRED',
  LINK_DISABLED: 'LINK_DISABLED',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  RATE_LIMITED: 'RATE_LIMITED',
  SHARD_UNAVAILABLE: 'SHARD_UNAVAILABLE',
  CODE_SPACE_EXHAUSTED: 'CODE_SPACE_EXHAUSTED',
  DEPENDENCY_UNAVAILABLE: 'DEPENDENCY_UNAVAILABLE',
  INVALID_TIME_RANGE: 'INVALID_TIME_RANGE',
  INVALID_CURSOR: 'INVALID_CURSOR',
  DOMAIN_BLOCKED: 'DOMAIN_BLOCKED',
  ALIAS_RESERVED: 'ALIAS_RESERVED',
  ALIAS_RETIRED: 'ALIAS_RETIRED',
  LINK_EXHAUSTED: 'LINK_EXHAUSTED',
  LINK_BANNED: 'LINK_BANNED',
  PRECONDITION_FAILED: 'PRECONDITION_FAILED',
  PASSWORD_INCORRECT: 'PASSWORD_INCORRECT',
  INSUFFICIENT_SCOPE: 'INSUFFICIENT_SCOPE',
  TENANT_SUSPENDED: 'TENANT_SUSPENDED',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra machine-readable fields, copied into the problem+json body. */
    readonly details: Readonly<Record<string, unknown>> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DomainError';
  }
}

