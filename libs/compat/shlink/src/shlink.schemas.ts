import { z } from 'zod';
import { RULE_LIMITS } from '@shortlink/links-domain';

/**
 * The Shlink REST v3 shapes this API takes and answers (as Shlink documents them and its official
 * JS SDK 3 reads them), each a named schema of the Shlink OpenAPI document.
 */

const dateTime = z.string().meta({ format: 'date-time', description: 'ISO 8601 / ATOM, e.g. 2025-01-31T10:00:00+00:00' });
const nullableDateTime = dateTime.nullable();
/** The device long URLs of Shlink ≥ 3.5, onto our device targets. */
const deviceLongUrls = z
  .object({ android: z.string().nullable().optional(), ios: z.string().nullable().optional(), desktop: z.string().nullable().optional() })
  .meta({ id: 'ShlinkDeviceLongUrls', description: 'A long URL per device; null clears it' });

export const visitsSummarySchema = z.object({ total: z.number().int(), nonBots: z.number().int(), bots: z.number().int() }).meta({ id: 'ShlinkVisitsSummary' });

export const shortUrlSchema = z
  .object({
    shortCode: z.string(),
    shortUrl: z.string(),
    longUrl: z.string(),
    deviceLongUrls: z.object({ android: z.string().nullable(), ios: z.string().nullable(), desktop: z.string().nullable() }),
    dateCreated: dateTime,
    visitsSummary: visitsSummarySchema,
    tags: z.array(z.string()),
    meta: z.object({ validSince: nullableDateTime, validUntil: nullableDateTime, maxVisits: z.number().int().nullable() }),
    domain: z.string().nullable().meta({ description: 'null: the default domain' }),
    title: z.string().nullable(),
    crawlable: z.boolean(),
    forwardQuery: z.boolean(),
    hasRedirectRules: z.boolean(),
  })
  .meta({ id: 'ShlinkShortUrl' });

export const paginationSchema = z
  .object({
    currentPage: z.number().int(),
    pagesCount: z.number().int(),
    itemsPerPage: z.number().int(),
    itemsInCurrentPage: z.number().int(),
    totalItems: z.number().int(),
  })
  .meta({ id: 'ShlinkPagination' });

export const shortUrlsListSchema = z
  .object({ shortUrls: z.object({ data: z.array(shortUrlSchema), pagination: paginationSchema }) })
  .meta({ id: 'ShlinkShortUrlsList' });

const slug = z.string().min(1).max(64);
const tags = z.array(z.string().min(1).max(50)).max(10);
const maxVisits = z.number().int().min(1).max(2_147_483_647);

export const shortUrlCreationSchema = z
  .object({
    longUrl: z.string().min(1).max(2048),
    customSlug: slug.optional(),
    findIfExists: z.boolean().optional(),
    tags: tags.optional(),
    title: z.string().max(512).nullable().optional(),
    validSince: nullableDateTime.optional(),
    validUntil: nullableDateTime.optional(),
    maxVisits: maxVisits.nullable().optional(),
    crawlable: z.boolean().optional(),
    forwardQuery: z.boolean().optional(),
    domain: z.string().min(1).max(253).optional(),
    shortCodeLength: z.number().int().min(4).max(64).optional(),
    deviceLongUrls: deviceLongUrls.optional(),
  })
  .meta({ id: 'ShlinkShortUrlCreation' });

export const shortUrlEditSchema = z
  .object({
    longUrl: z.string().min(1).max(2048).optional(),
    tags: tags.optional(),
    title: z.string().max(512).nullable().optional(),
    validSince: nullableDateTime.optional(),
    validUntil: nullableDateTime.optional(),
    maxVisits: maxVisits.nullable().optional(),
    crawlable: z.boolean().optional(),
    forwardQuery: z.boolean().optional(),
    deviceLongUrls: deviceLongUrls.optional(),
  })
  .meta({ id: 'ShlinkShortUrlEdit' });

const ORDER_FIELDS = ['dateCreated', 'shortCode', 'longUrl', 'title', 'visits', 'nonBotVisits'] as const;
export type OrderField = (typeof ORDER_FIELDS)[number];
export const ORDER_BY = ORDER_FIELDS.flatMap((f) => [`${f}-ASC`, `${f}-DESC`]) as [string, ...string[]];

/** `tags[]=a&tags[]=b` (what the SDK sends) or `tags=a`: one or more values. */
const stringList = z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v]));
const positiveInt = z.coerce.number().int().min(1).max(1_000_000);
const itemsPerPage = z.coerce.number().int().min(-1).max(1_000_000).meta({ description: '-1: every item on one page' });
const boolString = z.enum(['true', 'false']).transform((v) => v === 'true');

export const shortUrlsQuery = z
  .object({
    page: positiveInt.optional(),
    itemsPerPage: itemsPerPage.optional(),
    searchTerm: z.string().max(200).optional(),
    'tags[]': stringList.optional(),
    tags: stringList.optional(),
    tagsMode: z.enum(['any', 'all']).optional(),
    'excludeTags[]': stringList.optional(),
    excludeTags: stringList.optional(),
    excludeTagsMode: z
      .enum(['any', 'all'])
      .optional()
      .meta({ description: 'any (default): leave out a short URL with any excluded tag; all: with all of them' }),
    orderBy: z.enum(ORDER_BY).optional(),
    startDate: dateTime.optional(),
    endDate: dateTime.optional(),
    excludeMaxVisitsReached: boolString.optional(),
    excludePastValidUntil: boolString.optional(),
    domain: z.string().max(253).optional(),
  })
  .meta({ id: 'ShlinkShortUrlsQuery' });
export type ShortUrlsQuery = z.infer<typeof shortUrlsQuery>;

export const domainQuery = z.object({ domain: z.string().max(253).optional() });

export const visitsQuery = z.object({
  page: positiveInt.optional(),
  itemsPerPage: itemsPerPage.optional(),
  startDate: dateTime.optional(),
  endDate: dateTime.optional(),
  excludeBots: boolString.optional(),
  domain: z.string().max(253).optional(),
});
export type VisitsQuery = z.infer<typeof visitsQuery>;
export const orphanVisitsQuery = visitsQuery.extend({ type: z.enum(['base_url', 'invalid_short_url', 'regular_404']).optional() });

export const visitLocationSchema = z
  .object({
    countryCode: z.string().nullable(),
    countryName: z.string().nullable(),
    regionName: z.string().nullable(),
    cityName: z.string().nullable(),
    latitude: z.number().nullable(),
    longitude: z.number().nullable(),
    timezone: z.string().nullable(),
    isEmpty: z.boolean(),
  })
  .meta({ id: 'ShlinkVisitLocation' });

export const visitSchema = z
  .object({
    referer: z.string(),
    date: dateTime,
    userAgent: z.string(),
    visitLocation: visitLocationSchema.nullable(),
    potentialBot: z.boolean(),
    visitedUrl: z.string(),
    redirectUrl: z.string().nullable(),
    shortCode: z.string().optional(),
    domain: z.string().nullable().optional(),
    type: z.enum(['base_url', 'invalid_short_url', 'regular_404']).optional(),
  })
  .meta({ id: 'ShlinkVisit' });

export const visitsListSchema = z.object({ visits: z.object({ data: z.array(visitSchema), pagination: paginationSchema }) }).meta({ id: 'ShlinkVisitsList' });

export const mercureInfoSchema = z
  .object({
    mercureHubUrl: z.string().meta({ description: 'The hub: subscribe with GET <mercureHubUrl>?topic=<topic>' }),
    token: z.string().meta({ description: 'A JWT (HS256) for `Authorization: Bearer`, good for 24 h' }),
  })
  .meta({ id: 'ShlinkMercureInfo' });

export const deletedVisitsSchema = z
  .object({ deletedVisits: z.number().int().meta({ description: 'The raw visits deleted (those of the visit retention)' }) })
  .meta({ id: 'ShlinkDeletedVisits' });

export const visitsOverviewSchema = z
  .object({
    visits: z.object({
      nonOrphanVisits: visitsSummarySchema,
      orphanVisits: visitsSummarySchema,
      visitsCount: z.number().int(),
      orphanVisitsCount: z.number().int(),
    }),
  })
  .meta({ id: 'ShlinkVisitsOverview' });

export const tagsListSchema = z.object({ tags: z.object({ data: z.array(z.string()) }) }).meta({ id: 'ShlinkTagsList' });

export const tagStatsSchema = z
  .object({ tag: z.string(), shortUrlsCount: z.number().int(), visitsSummary: visitsSummarySchema })
  .meta({ id: 'ShlinkTagStats' });
export const tagsStatsListSchema = z
  .object({ tags: z.object({ data: z.array(tagStatsSchema), pagination: paginationSchema }) })
  .meta({ id: 'ShlinkTagsStatsList' });

export const tagRenamingSchema = z.object({ oldName: z.string().min(1).max(50), newName: z.string().min(1).max(50) }).meta({ id: 'ShlinkTagRenaming' });
export const tagsDeletionQuery = z.object({ 'tags[]': stringList.optional(), tags: stringList.optional() });

export const domainRedirectsSchema = z
  .object({ baseUrlRedirect: z.string().nullable(), regular404Redirect: z.string().nullable(), invalidShortUrlRedirect: z.string().nullable() })
  .meta({ id: 'ShlinkDomainRedirects' });
export const domainRedirectsEditSchema = z
  .object({
    domain: z.string().min(1).max(253),
    baseUrlRedirect: z.string().max(2048).nullable().optional(),
    regular404Redirect: z.string().max(2048).nullable().optional(),
    invalidShortUrlRedirect: z.string().max(2048).nullable().optional(),
  })
  .meta({ id: 'ShlinkDomainRedirectsEdit' });
export const domainsListSchema = z
  .object({
    domains: z.object({
      data: z.array(z.object({ domain: z.string(), isDefault: z.boolean(), redirects: domainRedirectsSchema }).meta({ id: 'ShlinkDomain' })),
      defaultRedirects: domainRedirectsSchema,
    }),
  })
  .meta({ id: 'ShlinkDomainsList' });

/** Shlink's device types: our device classes, and operating systems of ours (windows, macos, linux, chromeos). */
export const SHLINK_DEVICES = ['android', 'ios', 'mobile', 'windows', 'macos', 'linux', 'chromeos', 'desktop'] as const;
export const SHLINK_CONDITION_TYPES = [
  'device',
  'language',
  'query-param',
  'any-value-query-param',
  'valueless-query-param',
  'ip-address',
  'geolocation-country-code',
  'geolocation-city-name',
  'before-date',
  'after-date',
  'browser',
  'geolocation-region-name',
] as const;
export const shlinkConditionSchema = z
  .object({
    type: z.enum(SHLINK_CONDITION_TYPES).meta({
      description:
        'Shlink’s condition types; `geolocation-region-name` is ours (Shlink has no region condition): the first-level subdivision, as our `region` condition',
    }),
    matchKey: z.string().max(100).nullable().meta({ description: 'The query parameter of the query-param types; null for the others' }),
    matchValue: z
      .string()
      .max(500)
      .nullable()
      .meta({ description: 'What the condition compares with; null for any-value-query-param and valueless-query-param' }),
  })
  .meta({ id: 'ShlinkRedirectCondition' });
/** What a set takes: a condition's absent matchKey or matchValue is null. */
const conditionInput = shlinkConditionSchema.extend({
  matchKey: shlinkConditionSchema.shape.matchKey.optional(),
  matchValue: shlinkConditionSchema.shape.matchValue.optional(),
});
export const redirectRulesListSchema = z
  .object({
    defaultLongUrl: z.string().meta({ description: 'Where a request goes when no rule matches (the short URL’s long URL)' }),
    redirectRules: z.array(
      z
        .object({ longUrl: z.string(), priority: z.number().int().meta({ description: '1 is looked at first' }), conditions: z.array(shlinkConditionSchema) })
        .meta({ id: 'ShlinkRedirectRule' }),
    ),
  })
  .meta({ id: 'ShlinkRedirectRulesList' });
export const redirectRulesSetSchema = z
  .object({
    redirectRules: z
      .array(
        z
          .object({ longUrl: z.string().min(1).max(2048), conditions: z.array(conditionInput).max(RULE_LIMITS.conditions) })
          .meta({ id: 'ShlinkRedirectRuleData' }),
      )
      .max(RULE_LIMITS.rules)
      .meta({ description: 'Every rule of the short URL, in priority order (replaces them all; [] removes them)' }),
  })
  .meta({ id: 'ShlinkSetRedirectRules' });

export const healthSchema = z
  .object({ status: z.enum(['pass', 'fail']), version: z.string(), links: z.object({ about: z.string(), project: z.string() }) })
  .meta({ id: 'ShlinkHealth' });

export const shortCodeParams = z.object({ shortCode: z.string().min(1).max(200) });
export const tagParams = z.object({ tag: z.string().min(1).max(200) });
export const domainParams = z.object({ domain: z.string().min(1).max(253) });

export const problemSchema = z
  .object({ type: z.string(), title: z.string(), detail: z.string(), status: z.number().int() })
  .catchall(z.unknown())
  .meta({ id: 'ShlinkProblem', description: "Shlink's problem details (RFC 7807); `type` is one of Shlink's error types (the SDK's ErrorType)" });
