import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { createDocument } from 'zod-openapi';
import { BITLY_UNITS } from './bitly-units';

const error = z
  .object({
    message: z.string().meta({ description: 'e.g. FORBIDDEN, NOT_FOUND, INVALID_ARG_LONG_URL, RATE_LIMIT_EXCEEDED' }),
    description: z.string(),
    resource: z.string(),
    errors: z.array(z.object({ field: z.string(), message: z.string(), error_code: z.string() })).optional(),
  })
  .meta({ id: 'BitlyError' });
const shortened = z
  .object({
    created_at: z.string().meta({ description: '2026-12-05T18:30:00+0000' }),
    id: z.string().meta({ description: 'domain/hash' }),
    link: z.string(),
    custom_bitlinks: z.array(z.string()),
    long_url: z.string(),
    archived: z.boolean(),
    tags: z.array(z.string()),
    deeplinks: z.array(z.unknown()),
    references: z.record(z.string(), z.string()),
  })
  .meta({ id: 'BitlyShortened' });
const bitlink = shortened
  .extend({
    title: z.string(),
    created_by: z.string(),
    client_id: z.string(),
    launchpad_ids: z.array(z.string()),
    qr_code_ids: z.array(z.string()),
    is_deleted: z.boolean(),
  })
  .meta({ id: 'BitlyBitlink' });
const note = z.string().optional().meta({ description: 'Present when the click counts were not reachable (counts are 0)' });
const window = { units: z.number().int(), unit: z.enum(BITLY_UNITS), unit_reference: z.string() };
const summary = z.object({ ...window, total_clicks: z.number().int(), note }).meta({ id: 'BitlyClicksSummary' });
const clicks = z.object({ ...window, link_clicks: z.array(z.object({ clicks: z.number().int(), date: z.string() })), note }).meta({ id: 'BitlyClicks' });
const metrics = z
  .object({ ...window, facet: z.enum(['countries', 'referrers']), metrics: z.array(z.object({ value: z.string(), clicks: z.number().int() })), note })
  .meta({ id: 'BitlyClickMetrics' });
const path = z.object({
  domain: z.string().meta({ description: 'The bitlink’s domain: bit.ly (our default domain) or one of ours' }),
  hash: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
});
const metricsQuery = z.object({
  unit: z.enum(BITLY_UNITS).optional().meta({ description: 'Default day' }),
  units: z
    .string()
    .regex(/^-?\d+$/)
    .optional()
    .meta({ description: '-1 (default): since the link was created; else that many units' }),
  unit_reference: z.string().optional().meta({ description: 'ISO 8601: the most recent time to count; default now' }),
  size: z.string().regex(/^\d+$/).optional().meta({ description: 'countries and referrers: rows (1-1000, default 50)' }),
});

const RATE_HEADERS = Object.fromEntries(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'].map((h) => [h, { schema: { type: 'string' as const } }]));
const ERRORS = Object.fromEntries(
  [
    [400, 'INVALID_ARG_* (the field in errors)'],
    [403, 'FORBIDDEN: missing, unknown or revoked token, a scope the key lacks, suspended tenant'],
    [404, 'NOT_FOUND: not one of your bitlinks'],
    [429, 'RATE_LIMIT_EXCEEDED; Retry-After'],
    [503, 'TEMPORARILY_UNAVAILABLE; Retry-After'],
  ].map(([status, description]) => [String(status), { description: String(description), content: { 'application/json': { schema: error } } }]),
);
const json = (schema: z.ZodType, description: string) => ({ description, headers: RATE_HEADERS, content: { 'application/json': { schema } } });
const op = (operationId: string, summary: string, scope: string, rest: object) => ({
  operationId,
  summary,
  description: `Needs a key with the \`${scope}\` scope.`,
  tags: ['bitly'],
  security: [{ bearer: [] }],
  ...rest,
  responses: { ...(rest as { responses: object }).responses, ...ERRORS },
});

let document: object | null = null;

/** The Bitly v4 subset's own OpenAPI document (the generation app's is at /docs/openapi.json). */
export function bitlyOpenApi(): object {
  document ??= createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'shortlink Bitly-compatible API (v4 subset)',
        version: '1',
        description:
          'Bitly’s v4 routes over your shortlink links. The token is a shortlink API key: `Authorization: Bearer <key>`, or the bare key. `bit.ly` (the `bitly` client’s default) means our default domain.',
      },
      servers: [{ url: '/', description: 'the generation app' }],
      tags: [{ name: 'bitly', description: 'Bitly v4 routes' }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A shortlink API key (the bare key is accepted too)' } } },
      paths: {
        '/v4/shorten': {
          post: op('shortenBitlink', 'Shorten a long URL', 'links:write', {
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: z.object({ long_url: z.string(), domain: z.string().optional(), group_guid: z.string().optional() }).meta({ id: 'BitlyShorten' }),
                },
              },
            },
            responses: { '200': json(shortened, 'A bitlink of yours for that long URL already existed'), '201': json(shortened, 'Created') },
          }),
        },
        '/v4/expand': {
          post: op('expandBitlink', 'The long URL of a bitlink', 'links:read', {
            requestBody: { required: true, content: { 'application/json': { schema: z.object({ bitlink_id: z.string() }).meta({ id: 'BitlyExpand' }) } } },
            responses: {
              '200': json(
                z.object({ link: z.string(), id: z.string(), long_url: z.string(), created_at: z.string() }).meta({ id: 'BitlyExpanded' }),
                'The bitlink',
              ),
            },
          }),
        },
        '/v4/bitlinks/{domain}/{hash}': {
          get: op('getBitlink', 'A bitlink', 'links:read', { requestParams: { path }, responses: { '200': json(bitlink, 'The bitlink') } }),
          patch: op('updateBitlink', 'Edit a bitlink’s title, tags or long URL', 'links:write', {
            requestParams: { path },
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: z
                    .object({
                      title: z.string().nullable().optional(),
                      tags: z.array(z.string()).optional(),
                      long_url: z.string().optional(),
                      archived: z.literal(false).optional(),
                    })
                    .meta({ id: 'BitlyUpdate' }),
                },
              },
            },
            responses: { '200': json(bitlink, 'The edited bitlink') },
          }),
        },
        '/v4/bitlinks/{domain}/{hash}/clicks/summary': {
          get: op('getBitlinkClicksSummary', 'Total clicks of a bitlink', 'analytics:read', {
            requestParams: { path, query: metricsQuery },
            responses: { '200': json(summary, 'The total') },
          }),
        },
        '/v4/bitlinks/{domain}/{hash}/clicks': {
          get: op('getBitlinkClicks', 'Clicks of a bitlink per unit, newest first', 'analytics:read', {
            requestParams: { path, query: metricsQuery },
            responses: { '200': json(clicks, 'The clicks') },
          }),
        },
        '/v4/bitlinks/{domain}/{hash}/countries': {
          get: op('getBitlinkCountries', 'Clicks of a bitlink by country', 'analytics:read', {
            requestParams: { path, query: metricsQuery },
            responses: { '200': json(metrics, 'By country') },
          }),
        },
        '/v4/bitlinks/{domain}/{hash}/referrers': {
          get: op('getBitlinkReferrers', 'Clicks of a bitlink by referrer (direct: none)', 'analytics:read', {
            requestParams: { path, query: metricsQuery },
            responses: { '200': json(metrics, 'By referrer') },
          }),
        },
      } as never,
    },
    { reused: 'inline' },
  );
  return document;
}

@Controller('docs/bitly')
export class BitlyOpenApiController {
  @Get('openapi.json')
  openapi(@Res() reply: FastifyReply): void {
    reply.header('cache-control', 'no-cache').type('application/json').send(bitlyOpenApi());
  }
}
