import { DomainError, ErrorCode } from '@shortlink/core';
import { problemFor } from '@shortlink/nest-platform';

/** Bitly's error body. */
export interface BitlyErrorBody {
  readonly message: string;
  readonly description: string;
  readonly resource: string;
  readonly errors?: ReadonlyArray<{ readonly field: string; readonly message: string; readonly error_code: string }>;
}

/** A Bitly error: HTTP status and body. */
export interface BitlyError {
  readonly status: number;
  readonly body: BitlyErrorBody;
  readonly retryAfter?: string;
}

const DESCRIPTIONS: Readonly<Record<number, [message: string, description: string]>> = {
  400: ['INVALID_ARG', 'The value provided is invalid.'],
  403: ['FORBIDDEN', 'You are currently forbidden to access this resource.'],
  404: ['NOT_FOUND', 'What you are looking for cannot be found.'],
  409: ['ALREADY_EXISTS', 'The resource already exists.'],
  410: ['GONE', 'The resource is no longer available.'],
  412: ['PRECONDITION_FAILED', 'The precondition failed.'],
  422: ['UNPROCESSABLE_ENTITY', 'The JSON value provided is invalid.'],
  429: ['RATE_LIMIT_EXCEEDED', 'You have exceeded the rate limit; retry later.'],
  500: ['INTERNAL_ERROR', 'An internal error occurred.'],
  503: ['TEMPORARILY_UNAVAILABLE', 'The resource is temporarily unavailable; retry shortly.'],
};

/** An argument Bitly would refuse: 400 INVALID_ARG_<FIELD>, the field named in `errors`. */
export function invalidArg(field: string, why: string, resource = 'bitlinks'): BitlyError {
  return {
    status: 400,
    body: {
      message: `INVALID_ARG_${field.toUpperCase()}`,
      description: DESCRIPTIONS[400][1],
      resource,
      errors: [{ field, message: why, error_code: 'invalid' }],
    },
  };
}

/** Bitly's 404 for a bitlink that is not the caller's (or does not exist). */
export function notFound(resource = 'bitlinks'): BitlyError {
  return { status: 404, body: { message: 'NOT_FOUND', description: DESCRIPTIONS[404][1], resource } };
}

/**
 * Any error of ours in Bitly's shape: an invalid or missing token, a scope the key lacks and a
 * suspended tenant are 403 FORBIDDEN (Bitly answers them so); a bad URL INVALID_ARG_LONG_URL; the
 * rest by status, our detail in `errors`.
 */
export function bitlyErrorOf(error: unknown, resource = 'bitlinks'): BitlyError {
  if (error instanceof DomainError) {
    if (error.code === ErrorCode.INVALID_URL || error.code === ErrorCode.URL_NOT_ALLOWED || error.code === ErrorCode.DOMAIN_BLOCKED)
      return invalidArg('long_url', error.message, resource);
    if (error.code === ErrorCode.LINK_NOT_FOUND) return notFound(resource);
  }
  const problem = problemFor(error);
  const status = problem.status === 401 ? 403 : problem.status;
  const [message, description] = DESCRIPTIONS[status] ?? DESCRIPTIONS[status >= 500 ? 500 : 400];
  const retry = (error as DomainError)?.details?.retryAfterSeconds;
  return {
    status,
    body: {
      message,
      description,
      resource,
      ...(status < 500 ? { errors: [{ field: String(problem.field ?? ''), message: problem.detail, error_code: problem.code.toLowerCase() }] } : {}),
    },
    ...(status === 429 || status === 503 ? { retryAfter: String(typeof retry === 'number' ? retry : 1) } : {}),
  };
}
