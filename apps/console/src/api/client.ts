/**
 * The console's API client: openapi-fetch over the types generated from the generation app's
 * OpenAPI document (generation-api.ts, `npm run console:api-types`), so an API change that breaks
 * the console breaks its type check. Same origin: the session cookie goes along, and every write
 * carries the session's CSRF token (x-csrf-token) from /api/v1/me or the sign-in answer.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './generation-api';

export type Schemas = components['schemas'];
export type Link = Schemas['Link'];
export type Me = Schemas['Me'];
export type Role = NonNullable<Me['role']>;
export type Scope = Me['scopes'][number];

/** application/problem+json (RFC 9457) with the stable code; VALIDATION_FAILED lists each field. */
export interface Problem {
  status: number;
  code: string;
  title?: string;
  detail: string;
  errors?: Array<{ in: string; path: string; message: string }>;
  [extra: string]: unknown;
}

let csrfToken: string | null = null;
export const setCsrfToken = (token: string | null) => (csrfToken = token);

const csrf: Middleware = {
  onRequest({ request }) {
    if (csrfToken && request.method !== 'GET' && request.method !== 'HEAD') request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use(csrf);

/** A problem from an openapi-fetch error (or a network failure), never undefined. */
export function problemOf(error: unknown, response?: Response): Problem {
  if (error && typeof error === 'object' && 'code' in error && 'detail' in error) return error as Problem;
  if (error instanceof Error) return { status: 0, code: 'NETWORK', detail: `The API did not answer: ${error.message}` };
  return { status: response?.status ?? 0, code: 'UNEXPECTED', detail: `The API answered ${response?.status ?? 'nothing'}` };
}

/** The message for one field: VALIDATION_FAILED's issue at that path (or below it), or the problem when its code concerns the field. */
export function fieldError(problem: Problem | null, field: string, codes: readonly string[] = []): string | null {
  if (!problem) return null;
  const issue = problem.errors?.find((e) => e.path === field || e.path.startsWith(`${field}.`));
  if (issue) return issue.message;
  return codes.includes(problem.code) ? problem.detail : null;
}

/** Whether a problem belongs to no particular field (shown beside the action instead). */
export function isFormLevel(problem: Problem | null, fields: Readonly<Record<string, readonly string[]>>): boolean {
  if (!problem) return false;
  return !Object.entries(fields).some(([field, codes]) => fieldError(problem, field, codes) !== null);
}
