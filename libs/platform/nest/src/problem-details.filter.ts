import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PinoNestLogger } from './logging';
import { problemFor, retryAfterFor } from './problem-details';
import { StreamedBody } from './streamed-body';

/** The challenge of a 401: an API key in the x-api-key header (no registered scheme exists for API keys). */
export const WWW_AUTHENTICATE = 'ApiKey realm="shortlink", header="x-api-key"';

/** One filter per app: every error leaves as application/problem+json with a stable code. */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  constructor(private readonly logger: PinoNestLogger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    // A microservice handler (the click bus transport, which inherits the app's filters) gets its
    // error back as it was: its transport redelivers the batch and logs why.
    if (host.getType() !== 'http') throw error;
    const ctx = host.switchToHttp();
    const reply = ctx.getResponse<FastifyReply>();
    const request = ctx.getRequest<FastifyRequest>();
    const problem = problemFor(error, request?.url);
    if (problem.status >= 500) this.logger.pino.error({ context: 'ProblemDetails', err: error, path: problem.instance }, problem.detail);
    const retryAfter = retryAfterFor(error, problem.status);
    if (retryAfter) reply.header('Retry-After', retryAfter);
    // RFC 9110 §15.5.2: a 401 names the scheme that would be accepted.
    if (problem.status === 401) reply.header('WWW-Authenticate', WWW_AUTHENTICATE);
    // A streamed route refused before its body was read (a batch over its plan's concurrency), or any answer before the
    // body has all arrived: the connection ends with the answer (docs/design.md, "Batch creation"). Neither the unread
    // rest of a large body nor an idle connection of a client that was just turned away holds a socket.
    if (request?.raw?.complete === false || request?.body instanceof StreamedBody) reply.header('connection', 'close');
    reply.status(problem.status).header('content-type', 'application/problem+json').send(problem);
  }
}
