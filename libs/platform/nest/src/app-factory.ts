import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR, DiscoveryModule, NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DestinationStream } from 'pino';
import { Counter, Registry } from 'prom-client';
import type { AppConfig } from '@shortlink/config';
import { KeyedWindowLimiter } from '@shortlink/core';
import { AdminModule } from './admin';
import { AdmissionControl } from './admission';
import { AUTH_FAILURE_LIMITER } from './auth';
import { BrowserOrigins } from './browser-origin';
import { ClientAddressResolver } from './client-address';
import { ContractInterceptor } from './contract';
import { OpenApiModule, OpenApiOptions } from './openapi';
import { HealthModule } from './health';
import { acceptFormBodies } from './form-body';
import { FrontDoor, FrontRoutes } from './front-door';
import { clientErrorHandler, frameworkErrorHandler, httpServerFactory } from './http-server';
import { limitJsonDepth } from './json-body';
import { acceptStreamedBodies, StreamedRoutes } from './streamed-body';
import { createAppLogger, PinoNestLogger } from './logging';
import { METRICS_REGISTRY, MetricsModule } from './metrics';
import { ProblemDetailsFilter } from './problem-details.filter';

export type AppName = 'generation' | 'redirect' | 'analytics';

export { APP_CONFIG, APP_LOGGER } from './app-tokens';
import { APP_CONFIG, APP_LOGGER } from './app-tokens';

/**
 * What every app gets from the platform: its config, logger, metrics registry and admin listener,
 * the client address resolver (TRUSTED_PROXIES), the failed-authentication limiter, the check of
 * browsers' origins for cookie writes and the front door of its HTTP server (the @FrontRoute
 * methods of its providers).
 */
@Global()
@Module({})
export class PlatformModule {
  static forApp(app: AppName, config: AppConfig, logger: PinoNestLogger, frontDoor: FrontDoor, streamedRoutes = new StreamedRoutes()): DynamicModule {
    return {
      module: PlatformModule,
      imports: [MetricsModule.forApp(app), AdminModule.forApp({ app, host: config.admin.host, port: config.admin.ports[app] }), DiscoveryModule],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: APP_LOGGER, useValue: logger },
        { provide: FrontDoor, useValue: frontDoor },
        FrontRoutes,
        { provide: StreamedRoutes, useValue: streamedRoutes },
        { provide: ClientAddressResolver, useValue: new ClientAddressResolver(config.http.trustedProxies) },
        { provide: AUTH_FAILURE_LIMITER, useValue: new KeyedWindowLimiter({ limit: config.http.authFailuresPerMinute, windowMs: 60_000 }) },
        { provide: BrowserOrigins, useValue: BrowserOrigins.of(config) },
        { provide: APP_INTERCEPTOR, useClass: ContractInterceptor },
      ],
      exports: [APP_CONFIG, APP_LOGGER, FrontDoor, StreamedRoutes, ClientAddressResolver, AUTH_FAILURE_LIMITER, BrowserOrigins, MetricsModule, AdminModule],
    };
  }
}

export interface AppDefinition {
  readonly name: AppName;
  readonly config: AppConfig;
  /** The app's feature module (controllers, handlers, its domain services). */
  readonly feature: DynamicModule;
  /** Binds the domain tokens the feature injects (the wiring's ports module, or a bridge to shared ones). */
  readonly ports: DynamicModule;
  /** Log each /api/ request (method, path, status, time); off for the redirect's hot path. */
  readonly requestLog: boolean;
  /** Publish the OpenAPI document of the app's contracts at /docs. */
  readonly openApi?: OpenApiOptions;
  /** Where the app's log lines go (stdout by default; the apps of the embedded process share one stream). */
  readonly logDestination?: DestinationStream;
}

/**
 * Builds one app: Nest on Fastify with the platform, the ports and the feature; problem+json for
 * every error, hardened HTTP, a pino logger named after the app. Signals are the caller's (see
 * stopOnSignals): Nest's own shutdown hooks would re-raise the signal mid-shutdown.
 */
export async function createApp(definition: AppDefinition): Promise<NestFastifyApplication> {
  const { name, config } = definition;
  const logger = new PinoNestLogger(createAppLogger(name, config.runtime.logLevel, config.runtime.logFormat, definition.logDestination));
  const frontDoor = new FrontDoor(logger);
  const streamedRoutes = new StreamedRoutes();
  const admission = new AdmissionControl(name, config.http.admission);
  @Module({})
  class AppRoot {}
  const root: DynamicModule = {
    module: AppRoot,
    imports: [
      PlatformModule.forApp(name, config, logger, frontDoor, streamedRoutes),
      definition.ports,
      HealthModule,
      definition.feature,
      ...(definition.openApi ? [OpenApiModule.forApp(definition.openApi)] : []),
    ],
  };
  const adapter = new FastifyAdapter({
    bodyLimit: 1_048_576,
    // Client addresses come from ClientAddressResolver (TRUSTED_PROXIES), never from Fastify's request.ip.
    trustProxy: false,
    routerOptions: { maxParamLength: 200 },
    serverFactory: httpServerFactory(config.http, frontDoor, (req) => streamedRoutes.timeoutOf(req), admission),
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
  });
  // bodyParser: false leaves Fastify's own JSON parser in place, which limitJsonDepth then wraps.
  const app = await NestFactory.create<NestFastifyApplication>(root, adapter, { bufferLogs: true, abortOnError: false, bodyParser: false });
  app.useLogger(logger);
  // Nest buffers its lines in one buffer per process: written now, they name this app.
  app.flushLogs();
  app.useGlobalFilters(new ProblemDetailsFilter(logger));
  if (definition.openApi && config.http.corsOrigins.length) app.enableCors(corsOptions(config.http.corsOrigins));
  limitJsonDepth(app.getHttpAdapter().getInstance());
  acceptFormBodies(app.getHttpAdapter().getInstance());
  acceptStreamedBodies(app.getHttpAdapter().getInstance(), streamedRoutes);
  observeResponses(app, definition.requestLog ? logger : null);
  admission.register(app.get<Registry>(METRICS_REGISTRY));
  return app;
}

/**
 * CORS for the APIs (CORS_ORIGINS; docs/design.md, "Contract"): the listed origins may send the
 * headers the API reads and read the ones it answers with. Cookies ride along only for listed
 * origins, never for `*`.
 */
export function corsOptions(origins: readonly string[]) {
  const any = origins.includes('*');
  return {
    origin: any ? '*' : [...origins],
    credentials: !any,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['x-api-key', 'content-type', 'accept', 'if-match', 'idempotency-key', 'x-csrf-token'],
    exposedHeaders: ['etag', 'location', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'www-authenticate'],
    maxAge: 600,
  };
}

/**
 * shortlink_http_requests_total{status} for every response Fastify sends (the redirect's hot route
 * has its own counter), and a log line per /api/ request: path without query, never headers.
 */
function observeResponses(app: NestFastifyApplication, logger: PinoNestLogger | null): void {
  const registry = app.get<Registry>(METRICS_REGISTRY);
  const counter = new Counter({
    name: 'shortlink_http_requests_total',
    help: 'HTTP responses sent through the framework, by status',
    labelNames: ['status'],
    registers: [registry],
  });
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onResponse', (request, reply, done) => {
      counter.inc({ status: String(reply.statusCode) });
      if (logger && request.url.startsWith('/api/')) {
        const status = reply.statusCode;
        const line = { method: request.method, path: request.url.split('?', 1)[0], status, ms: Math.round(reply.elapsedTime) };
        const level = requestLogLevel(line.method, line.path, status, request.headers['x-api-key'] !== undefined);
        logger.pino[level](line, level === 'error' ? 'request failed' : level === 'warn' ? 'request refused' : 'request');
      }
      done();
    });
}

/**
 * The level of a request's log line: a failure is an error, a refusal a warning, except the
 * question a page of the console asks on every load (`GET /api/v1/me` without a key): a visitor who
 * is not signed in is the usual answer there, not something for an operator to look at.
 */
export function requestLogLevel(method: string, path: string, status: number, withKey: boolean): 'error' | 'warn' | 'info' {
  if (status >= 500) return 'error';
  if (status === 401 && method === 'GET' && path === '/api/v1/me' && !withKey) return 'info';
  return status >= 400 ? 'warn' : 'info';
}

/**
 * Runs `stop` once on the first SIGTERM or SIGINT, then exits. The process owns its signals (Nest's
 * own shutdown hooks would close each app on its own and re-raise the signal, killing the process
 * before the others had closed in order); a second signal during the stop exits at once.
 */
export function stopOnSignals(stop: () => Promise<void>, log: (message: string) => void = (m) => process.stderr.write(`${m}\n`)): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log(`${signal} again during shutdown: exiting now`);
      process.exit(1);
    }
    stopping = true;
    stop().then(
      () => process.exit(0),
      (error) => {
        log(`shutdown failed: ${(error as Error)?.stack ?? String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
