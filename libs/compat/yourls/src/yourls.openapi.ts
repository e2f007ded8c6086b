import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { createDocument } from 'zod-openapi';
import { YOURLS_FORMATS } from './yourls-output';
import { SIGNATURE_HASHES } from './yourls-signatures';

const ACTIONS = ['shorturl', 'expand', 'url-stats', 'stats', 'db-stats'] as const;

const params = z
  .object({
    action: z.enum(ACTIONS).meta({ description: 'shorturl needs links:write; expand links:read; url-stats, stats and db-stats analytics:read' }),
    format: z.enum(YOURLS_FORMATS).optional().meta({ description: 'Default xml (as YOURLS); an unknown value answers as simple' }),
    callback: z
      .string()
      .max(64)
      .regex(/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/)
      .optional()
      .meta({ description: 'jsonp: the function to call' }),
    signature: z
      .string()
      .max(200)
      .optional()
      .meta({ description: 'The key’s token (GET /api/v1/compat/yourls/signature), or with timestamp: hash(timestamp + token) in hex' }),
    timestamp: z
      .string()
      .regex(/^\d{1,12}$/)
      .optional()
      .meta({ description: 'Epoch seconds of a time-limited signature, within ±15 minutes' }),
    hash: z.enum(SIGNATURE_HASHES).optional().meta({ description: 'Hash of a time-limited signature (default md5)' }),
    username: z.string().max(200).optional().meta({ description: 'The key’s YOURLS username or id: with password, or with a time-limited signature' }),
    password: z.string().max(200).optional().meta({ description: 'The API key itself' }),
    url: z.string().max(8192).optional().meta({ description: 'shorturl: the long URL' }),
    keyword: z.string().max(64).optional().meta({ description: 'shorturl: the custom alias' }),
    title: z.string().max(500).optional().meta({ description: 'shorturl: the title' }),
    shorturl: z.string().max(300).optional().meta({ description: 'expand, url-stats: the short URL or its keyword' }),
    filter: z.enum(['top', 'bottom', 'rand', 'last']).optional().meta({ description: 'stats: which links (over your 1 000 newest)' }),
    limit: z.string().regex(/^\d+$/).optional().meta({ description: 'stats: how many (1-1000, default 10)' }),
    start: z.string().regex(/^\d+$/).optional().meta({ description: 'stats: offset' }),
  })
  .meta({ id: 'YourlsRequest' });

const urlView = z.object({
  keyword: z.string(),
  url: z.string(),
  title: z.string(),
  date: z.string().meta({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
  ip: z.string(),
});
const statsView = z
  .object({ shorturl: z.string(), url: z.string(), title: z.string(), timestamp: z.string(), ip: z.string(), clicks: z.string(), keyword: z.string() })
  .meta({ id: 'YourlsLinkStats' });
const totals = z.object({ total_links: z.string(), total_clicks: z.string() });
const answer = z
  .union([
    z
      .object({
        status: z.enum(['success', 'fail']),
        code: z.string().optional(),
        url: urlView.optional(),
        message: z.string(),
        title: z.string().optional(),
        shorturl: z.string().optional(),
        statusCode: z.number().int(),
      })
      .meta({ id: 'YourlsShortUrl' }),
    z
      .object({ keyword: z.string(), shorturl: z.string(), longurl: z.string(), title: z.string(), message: z.string(), statusCode: z.number().int() })
      .meta({ id: 'YourlsExpand' }),
    z.object({ statusCode: z.number().int(), message: z.string(), link: statsView, note: z.string().optional() }).meta({ id: 'YourlsUrlStats' }),
    z
      .object({
        links: z.record(z.string(), statsView).optional(),
        stats: totals,
        statusCode: z.number().int(),
        message: z.string(),
        note: z.string().optional(),
      })
      .meta({ id: 'YourlsStats' }),
    z.object({ 'db-stats': totals, statusCode: z.number().int(), message: z.string(), note: z.string().optional() }).meta({ id: 'YourlsDbStats' }),
  ])
  .meta({ id: 'YourlsAnswer' });
const error = z
  .object({ errorCode: z.union([z.number().int(), z.string()]), message: z.string(), status: z.literal('fail').optional(), code: z.string().optional() })
  .meta({ id: 'YourlsError', description: 'YOURLS’ error: errorCode is the HTTP status' });

const content = {
  'application/json': { schema: answer },
  'application/xml': { schema: z.string().meta({ description: 'The same fields under <result>' }) },
  'application/javascript': { schema: z.string().meta({ description: 'jsonp: callback({...})' }) },
  'text/plain': { schema: z.string().meta({ description: 'simple: the short URL (shorturl) or the long URL (expand)' }) },
};
const errors = Object.fromEntries(
  [
    [400, 'Unknown action, missing or malformed URL, bad parameter, invalid callback'],
    [403, 'Please log in / Invalid username or password / Expired signature / a scope the key lacks'],
    [404, 'Error: short URL not found'],
    [429, 'Plan limit or failed credential checks; Retry-After'],
    [503, 'A store is unavailable; Retry-After'],
  ].map(([status, description]) => [String(status), { description: String(description), content: { 'application/json': { schema: error } } }]),
);
const RATE_HEADERS = Object.fromEntries(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'].map((h) => [h, { schema: { type: 'string' as const } }]));

function operation(method: 'get' | 'post') {
  return {
    operationId: method === 'get' ? 'yourlsApiGet' : 'yourlsApiPost',
    summary: `YOURLS API (${method.toUpperCase()}, ${method === 'get' ? 'query' : 'query or form'})`,
    description:
      'One action per request. Credentials are parameters: `signature` (the key’s token), a time-limited signature (`timestamp`, `signature`, `username`, optional `hash`), or `username` + `password` (the API key). Answers in `format` (default xml); errors are `{errorCode, message}` with the HTTP status.',
    tags: ['yourls'],
    security: [{ signature: [] }, { password: [] }],
    ...(method === 'get'
      ? { requestParams: { query: params } }
      : { requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: params } } } }),
    responses: {
      '200': { description: 'The action’s answer (a `status: fail` answer for an existing keyword or URL too)', headers: RATE_HEADERS, content },
      ...errors,
    },
  };
}

let document: object | null = null;

/** The YOURLS API's own OpenAPI document (the generation app's is at /docs/openapi.json). */
export function yourlsOpenApi(): object {
  document ??= createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'shortlink YOURLS-compatible API',
        version: '1',
        description:
          'YOURLS’ `/yourls-api.php` over your shortlink links: `shorturl`, `expand`, `url-stats`, `stats`, `db-stats`. Credentials are parameters (`signature`, time-limited `timestamp`+`signature`+`username`, or `username`+`password`); get them from `GET /api/v1/compat/yourls/signature` with your API key.',
      },
      servers: [{ url: '/', description: 'the generation app' }],
      tags: [{ name: 'yourls', description: 'YOURLS API actions' }],
      components: {
        securitySchemes: {
          signature: {
            type: 'apiKey',
            in: 'query',
            name: 'signature',
            description: 'The key’s signature token (or a time-limited signature with `timestamp` and `username`); in a form body on POST',
          },
          password: { type: 'apiKey', in: 'query', name: 'password', description: 'The API key itself, with `username`; in a form body on POST' },
        },
      },
      paths: { '/yourls-api.php': { get: operation('get'), post: operation('post') } as never },
    },
    { reused: 'inline' },
  );
  return document;
}

@Controller('docs/yourls')
export class YourlsOpenApiController {
  @Get('openapi.json')
  openapi(@Res() reply: FastifyReply): void {
    reply.header('cache-control', 'no-cache').type('application/json').send(yourlsOpenApi());
  }
}
