import { applyDecorators, CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { z } from 'zod';
import { DomainError, ErrorCode } from '@shortlink/core';
import type { Scope } from '@shortlink/tenants-domain';

export const CONTRACT = Symbol('CONTRACT');

export interface ResponseContract {
  readonly description: string;
  /** Response body; none for 204 and redirects. */
  readonly schema?: z.ZodType;
  /** Default application/json. */
  readonly contentType?: string;
  /** Headers worth documenting (e.g. ETag, Location), name -> description. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Other media types the same response can take (e.g. text/csv for `?format=csv`), type -> schema. */
  readonly alternatives?: Readonly<Record<string, z.ZodType>>;
}

/**
 * What a route accepts and answers: the one source of its request validation and of its part of
 * the OpenAPI document (docs/design.md, "Contract"). Objects are strict: an unknown field or
 * query parameter is a 400, not silently ignored.
 */
export interface RouteContract {
  readonly summary: string;
  /** The name a generated client gives the call (`createLink`, `getLinkStats`): a verb and its object, unique per app. */
  readonly operationId: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  /** Media types of the body; default application/json. */
  readonly bodyContentTypes?: readonly string[];
  /** A body schema per media type where it differs from `body` (e.g. one NDJSON line), for the document. */
  readonly bodyByMediaType?: Readonly<Record<string, z.ZodType>>;
  /** The route reads its body as a stream (StreamedRoutes) and checks it itself: `body` only documents it. */
  readonly streamedBody?: boolean;
  /** Request headers worth documenting (e.g. If-Match), name -> schema. */
  readonly headers?: z.ZodObject;
  readonly responses: Readonly<Record<number, ResponseContract>>;
  /** Error statuses this route can answer (documented as problem+json); auth and limit errors are added for secured routes. */
  readonly errors?: readonly number[];
  /** Default true: needs an x-api-key. */
  readonly secured?: boolean;
  /** What the key must be allowed to do (secured routes must name one). */
  readonly scope?: Scope;
}

export const REQUIRED_SCOPE = Symbol('REQUIRED_SCOPE');

/** The scope a key needs for a route, or for every route of a controller (a route's own wins). */
export const RequireScope = (scope: Scope) => SetMetadata(REQUIRED_SCOPE, scope);

/** Declares a route's contract (validated by ContractInterceptor, published by the OpenAPI document). */
export const Contract = (contract: RouteContract) =>
  contract.scope ? applyDecorators(SetMetadata(CONTRACT, contract), RequireScope(contract.scope)) : SetMetadata(CONTRACT, contract);

/** The RFC 7807 body every error has, with the stable `code`. */
export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    code: z.string().meta({ description: 'Stable machine-readable error code, e.g. VALIDATION_FAILED' }),
    detail: z.string(),
    instance: z.string().optional(),
  })
  .catchall(z.unknown())
  .meta({ id: 'Problem', description: 'application/problem+json (RFC 9457) with a stable `code`' });

/** Where a validation issue was found, for the problem's `errors` list. */
function describeIssues(part: string, error: z.ZodError): Array<{ in: string; path: string; message: string }> {
  return error.issues.slice(0, 20).map((issue) => ({ in: part, path: issue.path.map(String).join('.'), message: issue.message }));
}

/** 400 VALIDATION_FAILED naming each issue (the first in the message), as every contract answers it. */
export function validationFailed(issues: ReadonlyArray<{ in: string; path: string; message: string }>): DomainError {
  const first = issues[0];
  return new DomainError(ErrorCode.VALIDATION_FAILED, `${first.in}${first.path ? ` ${first.path}` : ''}: ${first.message}`, {
    errors: issues,
    ...(first.in === 'body' && first.path ? { field: first.path.split('.')[0] } : {}),
  });
}

/** A value checked against a schema the way a contract checks a body: the parsed value, or the error to answer. */
export function checkAgainst<T>(schema: z.ZodType<T>, value: unknown, part = 'body'): { ok: true; value: T } | { ok: false; error: DomainError } {
  const result = schema.safeParse(value);
  return result.success ? { ok: true, value: result.data } : { ok: false, error: validationFailed(describeIssues(part, result.error)) };
}

/**
 * Validates params, query and body against the route's contract and hands the parsed values to
 * the controller. Runs after the guards (authentication first: an anonymous request is a 401,
 * whatever its body). A violation is 400 VALIDATION_FAILED naming each field.
 */
@Injectable()
export class ContractInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const contract = this.reflector.get<RouteContract | undefined>(CONTRACT, context.getHandler());
    if (contract) {
      const request = context.switchToHttp().getRequest<FastifyRequest>();
      const issues: Array<{ in: string; path: string; message: string }> = [];
      const check = <T>(part: string, schema: z.ZodType<T> | undefined, value: unknown, apply: (parsed: T) => void) => {
        if (!schema) return;
        const result = schema.safeParse(value);
        if (result.success) apply(result.data);
        else issues.push(...describeIssues(part, result.error));
      };
      check('path', contract.params, request.params ?? {}, (v) => (request.params = v));
      check('query', contract.query, { ...(request.query as object) }, (v) => (request.query = v));
      if (contract.body && !contract.streamedBody) check('body', contract.body, request.body, (v) => (request.body = v));
      if (issues.length > 0) throw validationFailed(issues);
    }
    return next.handle();
  }
}
