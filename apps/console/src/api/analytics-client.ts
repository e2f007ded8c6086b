/**
 * The console's analytics client: openapi-fetch over the types generated from the analytics app's
 * OpenAPI document (analytics-api.ts, `npm run console:api-types`). Its requests go to the
 * generation app's relay on this origin: the analytics route `/api/v1/x` is `/api/analytics/v1/x`
 * here (docs/design.md, "The console's analytics"), with the session cookie; read-only, so no CSRF token.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './analytics-api';

export type AnalyticsSchemas = components['schemas'];
export type LinkStats = AnalyticsSchemas['LinkStats'];
export type Breakdown = AnalyticsSchemas['Breakdown'];
export type TenantOverview = AnalyticsSchemas['TenantOverview'];

/** An analytics route's path on the relay. */
export const relayed = (path: string) => path.replace(/^\/api\/v1\//, '/api/analytics/v1/');

const toRelay: Middleware = {
  onRequest({ request }) {
    const url = new URL(request.url);
    url.pathname = relayed(url.pathname);
    return new Request(url, request);
  },
};

export const analyticsApi = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });
analyticsApi.use(toRelay);
