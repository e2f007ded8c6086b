import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The compatible APIs a browser page of any site may call with a key (COMPAT_CORS; docs/design.md,
 * "Compatible APIs"): Shlink's `/rest/v3` and its Mercure hub `/.well-known/mercure`, YOURLS'
 * `/yourls-api.php`, Bitly's `/v4`. Their keys
 * travel in a header or the query, never in a cookie, so any origin may call them, as Shlink allows.
 */
const COMPAT_PATH = /^\/(?:rest\/v3(?:[/?]|$)|\.well-known\/mercure(?:\?|$)|yourls-api\.php(?:\?|$)|v4\/)/;

export const isCompatPath = (url: string): boolean => COMPAT_PATH.test(url);

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
const ALLOWED_HEADERS = 'x-api-key, authorization, content-type, accept, last-event-id';
const EXPOSED_HEADERS = 'location, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset, www-authenticate, last-event-id';

/** The answer to a preflight of a compatible API: any origin, the methods and headers the APIs read; no credentials. */
export function compatPreflightHeaders(): Record<string, string> {
  return {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': ALLOWED_METHODS,
    'access-control-allow-headers': ALLOWED_HEADERS,
    'access-control-max-age': '600',
  };
}

/** The CORS headers of an answer given before any route (admission control's 503): those of the compatible APIs, for a request with an Origin. */
export function compatShedHeaders(origin: string | undefined, url: string): Record<string, string> {
  return origin !== undefined && isCompatPath(url) ? { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS } : {};
}

/**
 * CORS for the compatible APIs on a Fastify instance: a preflight is answered 204 before any route
 * (the framework's 404 otherwise), and every answer to a request with an Origin carries
 * `Access-Control-Allow-Origin: *` and never `Access-Control-Allow-Credentials` (a CORS_ORIGINS
 * listing of the same origin, which allows cookies elsewhere, is overridden here: none are read).
 */
export function compatCors(instance: FastifyInstance): void {
  instance.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined && isCompatPath(request.url)) {
      void reply.code(204).headers(compatPreflightHeaders()).header('vary', 'Origin').send();
      return;
    }
    done();
  });
  instance.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    if (request.headers.origin !== undefined && isCompatPath(request.url)) {
      // A preflight another CORS layer answered first (CORS_ORIGINS) gets the compatible APIs' answer all the same.
      if (request.method === 'OPTIONS') reply.headers(compatPreflightHeaders());
      reply.header('access-control-allow-origin', '*');
      reply.header('access-control-expose-headers', EXPOSED_HEADERS);
      reply.removeHeader('access-control-allow-credentials');
    }
    done(null, payload);
  });
}
