import { Controller, Get, Res, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import type { FastifyReply } from 'fastify';
import { STATUS_CODES } from 'http';
import { createDocument } from 'zod-openapi';
import { SHLINK_ROUTE, ShlinkRouteSpec } from './shlink-route';
import { ShlinkController } from './shlink.controller';
import { problemSchema } from './shlink.schemas';

/** What each tag's routes are for. */
const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  'Short URLs': 'Your links, as Shlink’s short URLs',
  Visits: 'Raw visits (one per click) and their totals, from the analytics store',
  Tags: 'The tags of your links',
  Domains: 'The default domain and yours, with their redirects',
  Monitoring: 'Health of this instance',
  Integrations: 'Shlink’s real-time updates (not here: use webhooks)',
};

const HTTP_METHODS = ['get', 'post', 'put', 'delete', 'patch', 'options', 'head'] as const;
/** Statuses every secured Shlink route can answer (key, scope, plan, validation, outage). */
const SECURED_ERRORS = [400, 401, 403, 429, 503];
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { description: 'Requests a minute the key’s plan allows', schema: { type: 'string' } },
  'RateLimit-Remaining': { description: 'Requests left in the sliding minute', schema: { type: 'string' } },
  'RateLimit-Reset': { description: 'Seconds until the window renews', schema: { type: 'string' } },
} as const;
const PROBLEM_HEADERS: Readonly<Record<number, object>> = {
  401: { 'WWW-Authenticate': { description: 'The accepted scheme: an API key in X-Api-Key', schema: { type: 'string' } } },
  429: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'string' } } },
  503: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'string' } } },
};

export interface ShlinkRouteEntry {
  readonly method: (typeof HTTP_METHODS)[number];
  readonly path: string;
  readonly spec: ShlinkRouteSpec;
}

/** The Shlink routes of a controller, from their decorators. */
export function shlinkRoutesOf(controller: Type): ShlinkRouteEntry[] {
  const prefix = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
  const prototype = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(prototype).flatMap((name) => {
    const handler = prototype[name];
    if (typeof handler !== 'function') return [];
    const spec = Reflect.getMetadata(SHLINK_ROUTE, handler) as ShlinkRouteSpec | undefined;
    if (!spec) return [];
    const method = HTTP_METHODS[Reflect.getMetadata(METHOD_METADATA, handler) as number] ?? 'get';
    const sub = String(Reflect.getMetadata(PATH_METADATA, handler) ?? '');
    const path = ('/' + [prefix, sub].filter(Boolean).join('/')).replace(/\/+/g, '/').replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    return [{ method, path, spec }];
  });
}

/**
 * The Shlink API's own OpenAPI 3.1 document (/docs/shlink/openapi.json): Shlink's paths, its
 * schemas by name (`ShlinkShortUrl`, …), operationIds after the SDK's methods, Shlink's problems.
 */
export function buildShlinkDocument(routes: readonly ShlinkRouteEntry[] = shlinkRoutesOf(ShlinkController)): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const { method, path, spec } of routes) {
    const secured = spec.scope !== undefined;
    const responses: Record<string, object> = {};
    if (!spec.notImplemented) {
      responses[String(spec.status)] = {
        description: STATUS_CODES[spec.status] ?? 'OK',
        ...(secured ? { headers: RATE_LIMIT_HEADERS } : {}),
        ...(spec.response ? { content: { [spec.responseType ?? 'application/json']: { schema: spec.response } } } : {}),
      };
    }
    // A path segment longer than the router takes is a 414 before any route runs; a request line and headers over 16 KiB a 431.
    const errors = new Set([
      ...(secured ? SECURED_ERRORS : []),
      ...(spec.errors ?? []),
      ...(spec.params || spec.query || spec.body ? [400] : []),
      ...(spec.params ? [414] : []),
      431,
    ]);
    for (const status of [...errors].sort()) {
      responses[String(status)] ??= {
        description: status === 501 ? 'Not implemented here (problem details name the SDK method)' : `Shlink problem details (${status})`,
        ...(PROBLEM_HEADERS[status] ? { headers: PROBLEM_HEADERS[status] } : {}),
        content: { 'application/problem+json': { schema: problemSchema } },
      };
    }
    paths[path] ??= {};
    paths[path][method] = {
      operationId: spec.operationId,
      summary: spec.summary,
      ...(spec.description || spec.scope || spec.errorTypes
        ? {
            description: [
              spec.description,
              spec.scope && `Needs a key with the \`${spec.scope}\` scope.`,
              spec.errorTypes && `Shlink error types: ${spec.errorTypes.map((t) => `\`${t}\``).join(', ')}.`,
            ]
              .filter(Boolean)
              .join('\n\n'),
          }
        : {}),
      tags: [...spec.tags],
      security: secured ? [{ apiKey: [] }] : [],
      requestParams: { ...(spec.params ? { path: spec.params } : {}), ...(spec.query ? { query: spec.query } : {}) },
      ...(spec.body ? { requestBody: { required: true, content: { 'application/json': { schema: spec.body } } } } : {}),
      responses,
    };
  }
  const tags = [...new Set(routes.flatMap((r) => r.spec.tags))].sort();
  return createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'shortlink: Shlink REST v3 compatibility API',
        version: '3',
        description:
          'Shlink’s REST API v3 over shortlink, for Shlink’s clients (the official JS SDK, shlink-web-client). `X-Api-Key` is one of your shortlink API keys; its scopes, plan limits and the audit log apply as on /api/v1. Errors are Shlink’s problem details. Routes of features this service does not have answer 501.',
      },
      servers: [{ url: '/', description: 'the server that publishes this document' }],
      tags: tags.map((name) => ({ name, ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}) })),
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
      paths: paths as never,
    },
    { reused: 'inline' },
  );
}

/** Publishes the Shlink document beside the app's own (/docs/openapi.json). */
@Controller('docs/shlink')
export class ShlinkDocsController {
  private document: object | null = null;

  @Get('openapi.json')
  openapi(@Res() reply: FastifyReply): void {
    this.document ??= buildShlinkDocument();
    reply.header('cache-control', 'no-cache').type('application/json').send(this.document);
  }
}
