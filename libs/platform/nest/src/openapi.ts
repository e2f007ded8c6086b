import { Controller, DynamicModule, Get, Inject, Injectable, Module, NotFoundException, OnApplicationBootstrap, Param, Res } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryModule, DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'fs';
import { join } from 'path';
import { STATUS_CODES } from 'http';
import { z } from 'zod';
import { createDocument } from 'zod-openapi';
import { SESSION_COOKIE } from './auth';
import { CONTRACT, problemSchema, RouteContract } from './contract';
import { codesOfStatus } from './problem-details';
import { WWW_AUTHENTICATE } from './problem-details.filter';

const HTTP_METHODS = ['get', 'post', 'put', 'delete', 'patch', 'options', 'head'] as const;

export interface OpenApiOptions {
  readonly title: string;
  readonly version: string;
  readonly description: string;
  /** What each tag's routes are for (a tag without one is listed by name only). */
  readonly tags?: Readonly<Record<string, string>>;
  /**
   * The app also takes a person's session cookie (docs/design.md, "People and sessions"): secured
   * routes list it beside the key, and writes with it need the x-csrf-token header.
   */
  readonly sessions?: boolean;
}

const OPENAPI_OPTIONS = Symbol('OPENAPI_OPTIONS');

/** What every answer to a secured route carries (the key's plan window). */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': 'Requests a minute this key’s plan allows',
  'RateLimit-Remaining': 'Requests left in the sliding minute',
  'RateLimit-Reset': 'Seconds until the window renews',
};

/** Headers a problem of that status carries (ProblemDetailsFilter). */
const PROBLEM_HEADERS: Readonly<Record<number, Readonly<Record<string, string>>>> = {
  401: { 'WWW-Authenticate': `The accepted scheme: \`${WWW_AUTHENTICATE}\`` },
  429: { 'Retry-After': 'Seconds to wait before trying again' },
  503: { 'Retry-After': 'Seconds to wait before trying again' },
};

const familySchemas = new Map<number, z.ZodType>();

/**
 * The problem of one status, named after it (`NotFoundProblem`), its `code` an enum of the codes
 * that status carries, so a client can switch on them. Built once per status: a schema id may be
 * registered once per process, and the embedded profile builds two documents.
 */
function problemOfStatus(status: number): z.ZodType {
  let schema = familySchemas.get(status);
  if (!schema) {
    const codes = codesOfStatus(status);
    const name = `${(STATUS_CODES[status] ?? `Status ${status}`)
      .replace(/[^A-Za-z0-9]+/g, ' ')
      .replace(/(?:^|\s)(\w)/g, (_m, c: string) => c.toUpperCase())
      .replace(/\s/g, '')}Problem`;
    schema = codes.length
      ? problemSchema
          .extend({ status: z.literal(status), code: z.enum(codes as [string, ...string[]]).meta({ description: 'Stable machine-readable error code' }) })
          .meta({
            id: name,
            description: `application/problem+json (RFC 9457) of a ${status} answer`,
          })
      : problemSchema;
    familySchemas.set(status, schema);
  }
  return schema;
}

/** Problem statuses every secured route can answer besides its own. */
const SECURED_ERRORS = [401, 403, 429, 503];

interface DiscoveredRoute {
  readonly method: (typeof HTTP_METHODS)[number];
  /** OpenAPI form: /api/v1/links/{code}. */
  readonly path: string;
  readonly contract: RouteContract;
}

/**
 * The OpenAPI 3.1 document of an app, generated from the contracts its controllers declare
 * (@Contract): what is validated is what is published. Built once at bootstrap.
 */
@Injectable()
export class OpenApiDocument implements OnApplicationBootstrap {
  private document: object | null = null;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    @Inject(OPENAPI_OPTIONS) private readonly options: OpenApiOptions,
  ) {}

  onApplicationBootstrap(): void {
    this.document = buildDocument(this.options, this.routes());
  }

  get json(): object {
    if (!this.document) this.onApplicationBootstrap();
    return this.document!;
  }

  private routes(): DiscoveredRoute[] {
    const routes: DiscoveredRoute[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const instance = wrapper.instance as object | undefined;
      if (!instance) continue;
      const prefix = String(this.reflector.get<string>(PATH_METADATA, instance.constructor) ?? '');
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as (...args: unknown[]) => unknown;
        const contract = this.reflector.get<RouteContract | undefined>(CONTRACT, handler);
        if (!contract) continue;
        const method = HTTP_METHODS[this.reflector.get<number>(METHOD_METADATA, handler)] ?? 'get';
        const sub = String(this.reflector.get<string>(PATH_METADATA, handler) ?? '');
        const path = ('/' + [prefix, sub].filter((p) => p && p !== '/').join('/')).replace(/\/+/g, '/').replace(/:([A-Za-z0-9_]+)/g, '{$1}');
        routes.push({ method, path, contract });
      }
    }
    return routes;
  }
}

export function buildDocument(options: OpenApiOptions, routes: readonly DiscoveredRoute[]): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const { method, path, contract } of routes) {
    const secured = contract.secured !== false;
    const responses: Record<string, object> = {};
    for (const [status, r] of Object.entries(contract.responses)) {
      const headers = { ...(secured ? RATE_LIMIT_HEADERS : {}), ...r.headers };
      responses[status] = {
        description: r.description,
        ...(Object.keys(headers).length
          ? { headers: Object.fromEntries(Object.entries(headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])) }
          : {}),
        ...(r.schema
          ? {
              content: {
                [r.contentType ?? 'application/json']: { schema: r.schema },
                ...Object.fromEntries(Object.entries(r.alternatives ?? {}).map(([type, schema]) => [type, { schema }])),
              },
            }
          : {}),
      };
    }
    // A path segment longer than the router accepts is a 414 before any route runs; a request
    // line and headers over 16 KiB (a long query string counts) are a 431 from the HTTP parser;
    // admission control may shed any request or end it at its deadline, 503 (docs/design.md, "Overload").
    const errors = new Set([...(contract.errors ?? []), ...(secured ? SECURED_ERRORS : []), ...(contract.params ? [414] : []), 400, 431, 503]);
    for (const status of [...errors].sort()) {
      const headers = PROBLEM_HEADERS[status];
      responses[String(status)] ??= {
        description: `problem+json (${status})`,
        ...(headers ? { headers: Object.fromEntries(Object.entries(headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])) } : {}),
        content: { 'application/problem+json': { schema: problemOfStatus(status) } },
      };
    }
    paths[path] ??= {};
    paths[path][method] = {
      summary: contract.summary,
      ...(contract.description || contract.scope
        ? {
            description: [
              contract.description,
              contract.scope &&
                (options.sessions
                  ? `Needs a key with the \`${contract.scope}\` scope, or a session whose role has it (writes with a session need \`x-csrf-token\`).`
                  : `Needs a key with the \`${contract.scope}\` scope.`),
            ]
              .filter(Boolean)
              .join('\n\n'),
          }
        : {}),
      tags: [...contract.tags],
      operationId: contract.operationId,
      ...(secured ? { security: [{ apiKey: [] }, ...(options.sessions ? [{ sessionCookie: [] }] : [])] } : { security: [] }),
      requestParams: {
        ...(contract.params ? { path: contract.params } : {}),
        ...(contract.query ? { query: contract.query } : {}),
        ...(contract.headers ? { header: contract.headers } : {}),
      },
      ...(contract.body
        ? {
            requestBody: {
              // A body the route may go without (`schema.optional()`) is documented as such, by its inner schema.
              required: !(contract.body instanceof z.ZodOptional),
              content: Object.fromEntries(
                (contract.bodyContentTypes ?? ['application/json']).map((t) => [
                  t,
                  { schema: contract.bodyByMediaType?.[t] ?? (contract.body instanceof z.ZodOptional ? contract.body.unwrap() : contract.body) },
                ]),
              ),
            },
          }
        : {}),
      responses,
    };
  }
  const ids = routes.map((r) => r.contract.operationId);
  const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (twice.length) throw new Error(`operationId used by more than one route: ${[...new Set(twice)].join(', ')}`);
  const tags = [...new Set(routes.flatMap((r) => r.contract.tags))].sort();
  return createDocument(
    {
      openapi: '3.1.0',
      info: { title: options.title, version: options.version, description: options.description },
      // Relative: the server this document was read from, whichever name it was reached by.
      servers: [{ url: '/', description: 'the server that publishes this document' }],
      tags: tags.map((name) => ({ name, ...(options.tags?.[name] ? { description: options.tags[name] } : {}) })),
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          ...(options.sessions ? { sessionCookie: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE } } : {}),
        },
      },
      paths: paths as never,
    },
    // Only schemas with a name (`.meta({ id })`) become components; the rest are written in place
    // rather than as `__schema12`, a name no generated client should carry.
    { reused: 'inline' },
  );
}

const SWAGGER_UI = join(require.resolve('swagger-ui-dist/package.json'), '..');
/** The files of swagger-ui-dist the page loads, served from node_modules: no CDN. */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
};
const INIT_JS =
  "window.onload = () => { window.ui = SwaggerUIBundle({ url: '/docs/openapi.json', dom_id: '#swagger-ui', presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' }); };\n";
const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>API</title><link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head><body><div id="swagger-ui"></div><script src="/docs/assets/swagger-ui-bundle.js"></script><script src="/docs/assets/swagger-ui-standalone-preset.js"></script><script src="/docs/assets/init.js"></script></body></html>`;
/** Swagger UI needs inline styles and data: images; scripts only from here. */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

@Controller('docs')
export class OpenApiController {
  constructor(@Inject(OpenApiDocument) private readonly document: OpenApiDocument) {}

  @Get('openapi.json')
  openapi(@Res() reply: FastifyReply): void {
    reply.header('cache-control', 'no-cache').type('application/json').send(this.document.json);
  }

  @Get()
  page(@Res() reply: FastifyReply): void {
    reply.header('content-security-policy', DOCS_CSP).header('x-content-type-options', 'nosniff').type('text/html; charset=utf-8').send(PAGE);
  }

  @Get('assets/:file')
  asset(@Param('file') file: string, @Res() reply: FastifyReply): void {
    if (file === 'init.js') return void reply.type('application/javascript; charset=utf-8').send(INIT_JS);
    const type = ASSETS[file];
    if (!type) throw new NotFoundException();
    reply
      .header('cache-control', 'public, max-age=86400')
      .header('x-content-type-options', 'nosniff')
      .type(type)
      .send(readFileSync(join(SWAGGER_UI, file)));
  }
}

/** Publishes the app's OpenAPI document at /docs/openapi.json and Swagger UI at /docs. */
@Module({})
export class OpenApiModule {
  static forApp(options: OpenApiOptions): DynamicModule {
    return {
      module: OpenApiModule,
      imports: [DiscoveryModule],
      controllers: [OpenApiController],
      providers: [{ provide: OPENAPI_OPTIONS, useValue: options }, OpenApiDocument],
      exports: [OpenApiDocument],
    };
  }
}
