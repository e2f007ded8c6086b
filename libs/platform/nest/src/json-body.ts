import type { FastifyInstance } from 'fastify';

/** Methods whose requests carry no body of meaning (RFC 9110): an empty one labelled JSON is no body. */
const BODILESS_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/** JSON nested deeper than this is refused (400 JSON_TOO_DEEP) before it is parsed. */
export const MAX_JSON_DEPTH = 32;

/** Depth of the deepest array or object in a JSON text, stopping as soon as it passes `limit`. */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return max;
}

/**
 * Fastify's own JSON parser (prototype-poisoning checks included) behind a depth limit: a deeply
 * nested body is refused before JSON.parse recurses into it.
 */
export function limitJsonDepth(instance: FastifyInstance): void {
  const parse = instance.getDefaultJsonParser('error', 'error');
  // JSON only (other media types are added per route, e.g. NDJSON): a text/plain body would
  // otherwise reach a route as a string and fail its contract as a 400 instead of a 415.
  instance.removeContentTypeParser(['application/json', 'text/plain']);
  instance.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // Clients that label every request JSON (Shlink's SDK) send DELETE with the header and no body: no body, not a 400.
    if (body === '' && BODILESS_METHODS.has(request.method)) {
      done(null, undefined);
      return;
    }
    if (jsonDepth(body as string) > MAX_JSON_DEPTH) {
      done(Object.assign(new Error(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`), { statusCode: 400, code: 'JSON_TOO_DEEP' }), undefined);
      return;
    }
    // The text as it came, for a route that checks a signature over it (the Stripe receiver: rawBodyOf).
    (request as { rawBody?: string }).rawBody = body as string;
    parse(request, body as string, done);
  });
}

/** A JSON request's body as it came (before parsing), or undefined when it had none. */
export const rawBodyOf = (request: object): string | undefined => (request as { rawBody?: string }).rawBody;
