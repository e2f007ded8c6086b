import { ArgumentsHost, CanActivate, Catch, ExceptionFilter, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_LOGGER, AuthenticatedRequest, CompatAccess, PinoNestLogger, retryAfterFor } from '@shortlink/nest-platform';
import { invalidArgument } from './shlink-problem';
import { shlinkProblemOf } from './shlink-problem';
import { SHLINK_ROUTE, ShlinkRouteSpec } from './shlink-route';
import type { z } from 'zod';

/**
 * Shlink's `X-Api-Key` is one of our API keys: the same check (failed checks counted per client
 * address), the route's scope, the tenant's plan window with RateLimit-* headers, and the audit
 * context of the request (CompatAccess, as every compatibility API).
 */
@Injectable()
export class ShlinkKeyGuard implements CanActivate {
  constructor(
    @Inject(CompatAccess) private readonly access: CompatAccess,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const spec = this.reflector.get<ShlinkRouteSpec | undefined>(SHLINK_ROUTE, context.getHandler());
    if (!spec) throw new Error('a Shlink route names its ShlinkRoute spec');
    if (!spec.scope) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest>();
    const principal = await this.access.keyPrincipal(request, request.headers['x-api-key']);
    request.audit = await this.access.admit(request, http.getResponse<FastifyReply>(), principal, spec.scope);
    request.principal = principal;
    return true;
  }
}

/** Every error of a Shlink route as Shlink's problem details (`type`, `title`, `detail`, `status`). */
@Catch()
export class ShlinkProblemFilter implements ExceptionFilter {
  constructor(@Inject(APP_LOGGER) private readonly logger: PinoNestLogger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const reply = ctx.getResponse<FastifyReply>();
    const request = ctx.getRequest<FastifyRequest>();
    const problem = shlinkProblemOf(error, request?.url, request?.headers['x-api-key'] !== undefined);
    if (problem.status >= 500 && problem.status !== 501 && problem.status !== 503)
      this.logger.pino.error({ context: 'ShlinkProblem', err: error, path: request?.url?.split('?')[0] }, problem.detail);
    const retryAfter = retryAfterFor(error, problem.status);
    if (retryAfter) reply.header('Retry-After', retryAfter);
    if (problem.status === 401) reply.header('WWW-Authenticate', 'ApiKey realm="shortlink", header="X-Api-Key"');
    reply.status(problem.status).header('content-type', 'application/problem+json').send(problem);
  }
}

/** A part of the request checked against its schema: the parsed value, or Shlink's INVALID_ARGUMENT naming each field. */
export function parsed<T>(schema: z.ZodType<T> | undefined, value: unknown): T {
  if (!schema) return value as T;
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const elements = [...new Set(result.error.issues.map((i) => String(i.path[0] ?? '')).filter(Boolean))];
  const first = result.error.issues[0];
  throw invalidArgument(elements, `${first.path.map(String).join('.') || 'request'}: ${first.message}`);
}
