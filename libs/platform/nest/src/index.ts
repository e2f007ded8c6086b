// The platform every app stands on: the Nest app and its HTTP server, errors, auth, metrics, logs.
export { type AdminHandler, AdminRoutes } from './admin';
export { AdmissionControl, workClassOf } from './admission';
export { API_ACCESS_MODULE_PORTS, ApiAccessModule } from './api-access.module';
export { type AppName, createApp, stopOnSignals } from './app-factory';
export { APP_CONFIG, APP_LOGGER } from './app-tokens';
export {
  API_ACCESS_PORTS,
  API_ACCESS_PROVIDERS,
  ApiKeyGuard,
  AUTH_FAILURE_LIMITER,
  auditActorOf,
  auditContextOf,
  type AuthenticatedRequest,
  cookieOf,
  type Principal,
  SESSION_COOKIE,
  SESSION_VERIFIER,
  sessionCookie,
  type SessionVerifier,
} from './auth';
export { ClientAddressResolver } from './client-address';
export { CompatAccess } from './compat-access';
export { checkAgainst, Contract, problemSchema } from './contract';
export { BrowserOrigins } from './browser-origin';
export { compatCors, compatPreflightHeaders, isCompatPath } from './compat-cors';
export { AcceptsFormBody } from './form-body';
export { frontHandlerOf, FrontRoute } from './front-door';
export { HEALTH_PROBES } from './health';
export { jsonDepth, MAX_JSON_DEPTH, rawBodyOf } from './json-body';
export { Lifecycle, scheduleJob } from './lifecycle';
export { type ContextLogger, createAppLogger, PinoNestLogger } from './logging';
export { METRICS_REGISTRY, PORT_GAUGES, TalliedHistogram, talliedCounter } from './metrics';
export { pageLanguage, prefersHtml } from './negotiation';
export type { OpenApiOptions } from './openapi';
export { problem, problemFor, retryAfterFor } from './problem-details';
export { StreamedBody, StreamedRoutes } from './streamed-body';
export * from './people';
export { versionOf } from './if-match';
