import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
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
};

const TITLES: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 410: 'Gone', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable' };

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  instance?: string;
  [extra: string]: unknown;
}

export function problemFor(error: unknown, instance?: string): ProblemDetails {
  if (error instanceof DomainError) {
    const status = STATUS_BY_CODE[error.code] ?? 500;
    const { source: _source, ...details } = error.details as Record<string, unknown>;
    // Details first: they may never override the stable fields.
    return { ...details, type: `https://shortlink.dev/problems/${error.code.toLowerCase().replace(/_/g, '-')}`, title: TITLES[status] ?? 'Error', status, code: error.code, detail: error.message, instance };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    // Framework-level rejections (unknown route, malformed JSON body, body too large).
    const code = status === 404 ? 'ROUTE_NOT_FOUND' : status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : status < 500 ? 'BAD_REQUEST' : 'INTERNAL';
    return { type: `https://shortlink.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`, title: TITLES[status] ?? 'Error', status, code, detail: error.message, instance };
  }
  const status = (error as { statusCode?: number })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Fastify's own errors (e.g. FST_ERR_CTP_INVALID_JSON_BODY) carry statusCode.
    return { type: 'https://shortlink.dev/problems/bad-request', title: TITLES[status] ?? 'Bad Request', status, code: 'BAD_REQUEST', detail: (error as Error).message, instance };
  }
  return { type: 'https://shortlink.dev/problems/internal', title: TITLES[500], status: 500, code: 'INTERNAL', detail: 'internal error', instance };
}

/** Retry-After for 429/503 problems: the error's own hint, else one second. */
export function retryAfterFor(error: unknown, status: number): string | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const retry = (error as DomainError)?.details?.retryAfterSeconds;
  return String(typeof retry === 'number' ? retry : 1);
}

/** One filter per app: every error leaves as application/problem+json with a stable code. */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemDetails');

  catch(error: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const reply = ctx.getResponse<FastifyReply>();
    const request = ctx.getRequest<FastifyRequest>();
    const problem = problemFor(error, request?.url);
    if (problem.status >= 500) this.logger.error({ err: error, url: request?.url }, problem.detail);
    const retryAfter = retryAfterFor(error, problem.status);
    if (retryAfter) reply.header('Retry-After', retryAfter);
    reply.status(problem.status).header('content-type', 'application/problem+json').send(problem);
  }
}
