/**
 * @shortlink/sdk: the generation API's typed client (libs/sdk/README.md). The types are generated
 * from the API's OpenAPI document (generation-api.ts, `npm run sdk:api-types`); the console and the
 * `shortlink` CLI use this package, so an API change that breaks them breaks the type check.
 */
export type { components, operations, paths } from './generation-api';
/** openapi-fetch's middleware (onRequest/onResponse), for `client.use()`. */
export type { Middleware } from 'openapi-fetch';
export { createShortlinkClient, type FetchLike, retryingFetch, type ShortlinkClient, type ShortlinkClientOptions } from './client';
export {
  type ClientErrorCode,
  type DataOf,
  type FetchResult,
  isShortlinkApiError,
  type Problem,
  type ProblemCode,
  type ProblemIssue,
  problemOf,
  retryAfterSeconds,
  ShortlinkApiError,
  unwrap,
} from './problem';
export { exportPages, type ExportedLink, type LinkFilters, linkPages, listLinks, type Page, pages, paginate } from './paging';
export type { ApiKey, IssuedKey, KeyCreation, Link, LinkCreation, LinkEdit, LinkPage, Schemas } from './schemas';
