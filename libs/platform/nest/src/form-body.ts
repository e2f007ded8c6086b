import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** The media type of an HTML form's body. */
export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';
/** A form body of at most this many bytes (a YOURLS request is a few parameters). */
export const FORM_BODY_LIMIT = 64 * 1024;

/** The route option that marks a route as made for form bodies. */
const FORM_ROUTE = 'acceptsFormBody';

/**
 * Marks a route as made for HTML-form bodies (`application/x-www-form-urlencoded`), such as
 * `/yourls-api.php`; every other route refuses them 415 (docs/design.md, "Security model"):
 * a form is what a page of another site can post without asking, so a JSON route never takes one.
 */
export const AcceptsFormBody = (): MethodDecorator => RouteConfig({ [FORM_ROUTE]: true });

/** Whether the route a request matched was marked with AcceptsFormBody. */
export const acceptsFormBody = (request: FastifyRequest): boolean =>
  (request.routeOptions?.config as unknown as Record<string, unknown> | undefined)?.[FORM_ROUTE] === true;

/**
 * Fastify parses JSON only; this adds form bodies, for the routes marked with AcceptsFormBody
 * alone: they become an object of their fields, the last value of a repeated name winning. On
 * any other route a form body is 415 UNSUPPORTED_MEDIA_TYPE, as an unknown media type is.
 */
export function acceptFormBodies(instance: FastifyInstance): void {
  instance.addContentTypeParser(FORM_MEDIA_TYPE, { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (request, body, done) => {
    if (!acceptsFormBody(request)) {
      done(
        Object.assign(new Error('this route takes a JSON body (application/json), not a form'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }),
        undefined,
      );
      return;
    }
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
}
