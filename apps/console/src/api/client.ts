/**
 * The console's API client: the SDK's (libs/sdk, `@shortlink/sdk`: openapi-fetch over the types
 * generated from the generation app's OpenAPI document, `npm run sdk:api-types`), so an API change
 * that breaks the console breaks its type check. Same origin: the session cookie goes along, and
 * every write carries the session's CSRF token (x-csrf-token) from /api/v1/me or the sign-in answer.
 */
import { createShortlinkClient, type Middleware, problemOf as sdkProblemOf, type Problem as SdkProblem, type Schemas as SdkSchemas } from '@shortlink/sdk';

export type Schemas = SdkSchemas;
export type Link = Schemas['Link'];
export type Me = Schemas['Me'];
export type Role = NonNullable<Me['role']>;
export type Scope = Me['scopes'][number];

/** application/problem+json (RFC 9457) with the stable code; VALIDATION_FAILED lists each field. */
export type Problem = SdkProblem;

let csrfToken: string | null = null;
export const setCsrfToken = (token: string | null) => (csrfToken = token);

const csrf: Middleware = {
  onRequest({ request }) {
    if (csrfToken && request.method !== 'GET' && request.method !== 'HEAD') request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
};

export const api = createShortlinkClient({ baseUrl: '', credentials: 'same-origin' });
api.use(csrf);

/** A problem from an openapi-fetch error (or a network failure), never undefined (the SDK's problemOf). */
export const problemOf: (error: unknown, response?: Response) => Problem = sdkProblemOf;

/** Whether `path` is `field` or lies below it (`branding.logo`, `variants[0].url`). */
const within = (path: string, field: string) => path === field || path.startsWith(`${field}.`) || path.startsWith(`${field}[`);

/**
 * The message for one field: VALIDATION_FAILED's issue at that path (or below it), a domain error
 * naming the field (its `field`), or the problem when its code concerns the field.
 */
export function fieldError(problem: Problem | null, field: string, codes: readonly string[] = []): string | null {
  if (!problem) return null;
  const issue = problem.errors?.find((e) => within(e.path, field));
  if (issue) return issue.message;
  if (typeof problem.field === 'string' && within(problem.field, field)) return problem.detail;
  return codes.includes(problem.code) ? problem.detail : null;
}

/** Whether a problem belongs to no particular field (shown beside the action instead). */
export function isFormLevel(problem: Problem | null, fields: Readonly<Record<string, readonly string[]>>): boolean {
  if (!problem) return false;
  return !Object.entries(fields).some(([field, codes]) => fieldError(problem, field, codes) !== null);
}
