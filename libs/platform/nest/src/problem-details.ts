import { HttpException } from '@nestjs/common';
import { STATUS_CODES } from 'http';
import { DomainError, ErrorCode } from '@shortlink/core';

/** HTTP status of every domain error code: the only place codes meet HTTP. */
export const STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  VALIDATION_FAILED: 400,
  INVALID_URL: 400,
  URL_NOT_ALLOWED: 400,
  INVALID_ALIAS: 400,
  INVALID_TIME_RANGE: 400,
  ALIAS_TAKEN: 409,
  LINK_NOT_FOUND: 404,
  LINK_EXPIRED: 410,
  LINK_DISABLED: 404,
  UNAUTHENTICATED: 401,
  RATE_LIMITED: 429,
  SHARD_UNAVAILABLE: 503,
  DEPENDENCY_UNAVAILABLE: 503,
  CODE_SPACE_EXHAUSTED: 503,
  INVALID_CURSOR: 400,
  DOMAIN_BLOCKED: 400,
  ALIAS_RESERVED: 400,
  ALIAS_RETIRED: 409,
  LINK_EXHAUSTED: 410,
  LINK_BANNED: 451,
  PRECONDITION_FAILED: 412,
  PASSWORD_INCORRECT: 403,
  INSUFFICIENT_SCOPE: 403,
  TENANT_SUSPENDED: 403,
  TENANT_NOT_FOUND: 404,
  KEY_NOT_FOUND: 404,
  KEY_SUSPENDED: 403,
  DOMAIN_TAKEN: 409,
  DOMAIN_NOT_FOUND: 404,
  DOMAIN_NOT_ALLOWED: 403,
  DOMAIN_NOT_VERIFIED: 409,
  DOMAIN_LIMIT_REACHED: 403,
  IDEMPOTENCY_KEY_REUSED: 422,
  QUOTA_EXCEEDED: 429,
  KEY_LIMIT_REACHED: 403,
  BATCH_CONCURRENCY_LIMIT: 429,
  IDEMPOTENCY_KEY_IN_USE: 409,
  BATCH_TOO_LARGE: 413,
  INVALID_JSON: 400,
  JSON_TOO_DEEP: 400,
  PAYLOAD_TOO_LARGE: 413,
  METHOD_NOT_ALLOWED: 405,
  WEBHOOK_NOT_FOUND: 404,
  DELIVERY_NOT_FOUND: 404,
  WEBHOOK_LIMIT_REACHED: 403,
  MEMBER_NOT_FOUND: 404,
  MEMBER_EXISTS: 409,
  LAST_OWNER: 409,
  INVITATION_INVALID: 400,
  INVITATION_LIMIT_REACHED: 429,
  PASSWORD_TOO_WEAK: 400,
  CSRF_TOKEN_INVALID: 403,
  CROSS_SITE_REQUEST: 403,
  SECOND_FACTOR_REQUIRED: 401,
  SECOND_FACTOR_INVALID: 400,
  SESSION_NOT_FOUND: 404,
  SSO_NOT_CONFIGURED: 404,
  SSO_STATE_MISMATCH: 400,
  SSO_EMAIL_DOMAIN_REFUSED: 403,
  SSO_PROVIDER_UNAVAILABLE: 503,
  SSO_CODE_REJECTED: 401,
  STREAM_LIMIT_REACHED: 429,
  INVALID_EVENT_ID: 400,
  CLICK_ID_NOT_FOUND: 404,
  CUSTOMER_NOT_FOUND: 404,
};

/** Codes answered below the domain (the HTTP parser, Fastify, the router), by status. */
const FRAMEWORK_CODES: Readonly<Record<number, readonly string[]>> = {
  400: ['BAD_REQUEST', 'INVALID_JSON', 'JSON_TOO_DEEP'],
  404: ['ROUTE_NOT_FOUND'],
  408: ['REQUEST_TIMEOUT'],
  413: ['PAYLOAD_TOO_LARGE'],
  414: ['URI_TOO_LONG'],
  415: ['UNSUPPORTED_MEDIA_TYPE'],
  431: ['HEADERS_TOO_LARGE'],
  500: ['INTERNAL'],
  // Admission control, before any route runs: any request can be shed or outlive its deadline (admission.ts).
  503: ['DEADLINE_EXCEEDED', 'OVERLOADED'],
};

/** Every code a problem of this status can carry, sorted: the domain's and the framework's. */
export function codesOfStatus(status: number): string[] {
  const domain = Object.entries(STATUS_BY_CODE)
    .filter(([, s]) => s === status)
    .map(([code]) => code);
  return [...new Set([...domain, ...(FRAMEWORK_CODES[status] ?? [])])].sort();
}

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  instance?: string;
  [extra: string]: unknown;
}

/** Stable codes for Fastify's body errors. */
const FASTIFY_CODES: Readonly<Record<string, string>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  JSON_TOO_DEEP: 'JSON_TOO_DEEP',
};

/** Longest path echoed as `instance`; a longer one is left out rather than reflected. */
const MAX_INSTANCE_LENGTH = 256;

/**
 * The `instance` of a problem: the request's path, never its query string (which may carry a
 * credential, e.g. `?api_key=`), and only when it is short.
 */
export function instanceOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path.length <= MAX_INSTANCE_LENGTH ? path : undefined;
}

export function problem(status: number, code: string, detail: string, instance?: string, extra: Readonly<Record<string, unknown>> = {}): ProblemDetails {
  // Extras first: they may never override the stable fields.
  return {
    ...extra,
    type: `https://shortlink.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`,
    title: STATUS_CODES[status] ?? 'Error',
    status,
    code,
    detail,
    ...(instance ? { instance } : {}),
  };
}

/** The problem+json body of any error, for the request `url` (path and query as received). */
export function problemFor(error: unknown, url?: string): ProblemDetails {
  const instance = instanceOf(url);
  if (error instanceof DomainError) {
    const { source: _source, ...details } = error.details as Record<string, unknown>;
    return problem(STATUS_BY_CODE[error.code] ?? 500, error.code, error.message, instance, details);
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    // Framework-level rejections (unknown route, malformed JSON body, body too large). Their
    // messages can carry the request path, so only our own wording goes out.
    if (status === 404) return problem(404, 'ROUTE_NOT_FOUND', 'no route matches this method and path', instance);
    const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : status < 500 ? 'BAD_REQUEST' : 'INTERNAL';
    return problem(status, code, status < 500 ? error.message : 'internal error', instance);
  }
  const status = (error as { statusCode?: number })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Fastify's own errors (e.g. FST_ERR_CTP_INVALID_JSON_BODY) carry statusCode and a code.
    const fastifyCode = (error as { code?: string }).code ?? '';
    const code = FASTIFY_CODES[fastifyCode] ?? (status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'BAD_REQUEST');
    return problem(status, code, (error as Error).message, instance);
  }
  return problem(500, 'INTERNAL', 'internal error', instance);
}

/** Retry-After for 429/503 problems: the error's own hint, else one second. */
export function retryAfterFor(error: unknown, status: number): string | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const retry = (error as DomainError)?.details?.retryAfterSeconds;
  return String(typeof retry === 'number' ? retry : 1);
}
