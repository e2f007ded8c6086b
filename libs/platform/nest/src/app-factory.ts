import { DynamicModule, Global, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { Counter, Registry } from 'prom-client';
import type { AppConfig } from '@shortlink/config';
import { KeyedWindowLimiter } from '@shortlink/core';
import { AdminModule } from './admin';
import { AUTH_FAILURE_LIMITER } from './auth';
import { ClientAddressResolver } from './client-address';
import { clientErrorHandler, frameworkErrorHandler, FrontHandler, httpServerFactory } from './http-server';
import { PLAIN_LOGGER } from './logging';
import { METRICS_REGISTRY, MetricsModule } from './metrics';
import { ProblemDetailsFilter } from './problem-details.filter';

export type AppName = 'generation' | 'redirect' | 'analytics';

/**
 * What every app gets from the platform: its metrics registry and admin listener, the client
 * address resolver (TRUSTED_PROXIES) and the failed-authentication limiter.
 */
@Global()
@Module({})
export class PlatformModule {
  static forApp(app: AppName, config: AppConfig, adminPort = config.admin.ports[app]): DynamicModule {
    return {
      module: PlatformModule,
      imports: [MetricsModule.forApp(app), AdminModule.forApp({ app, host: config.admin.host, port: adminPort })],
      providers: [
        { provide: ClientAddressResolver, useValue: new ClientAddressResolver(config.http.trustedProxies) },
        { provide: AUTH_FAILURE_LIMITER, useValue: new KeyedWindowLimiter({ limit: config.http.authFailuresPerMinute, windowMs: 60_000 }) },
      ],
      exports: [ClientAddressResolver, AUTH_FAILURE_LIMITER, MetricsModule, AdminModule],
    };
  }
}

export interface FastifyAppOptions {
  readonly bodyLimitBytes?: number;
  readonly plainLogger?: boolean;
  /** Answers some requests before Fastify (bound after the app is built). */
  readonly front?: { handle: FrontHandler | null };
}

/** Nest on Fastify with JSON logs, problem+json for every error and hardened HTTP (signals: see stopOnSignals). */
export async function createFastifyApp(module: Type<unknown> | DynamicModule, config: AppConfig, options: FastifyAppOptions = {}): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: options.bodyLimitBytes ?? 1_048_576,
    // Client addresses come from ClientAddressResolver (TRUSTED_PROXIES), never from Fastify's request.ip.
    trustProxy: false,
    routerOptions: { maxParamLength: 200 },
    serverFactory: httpServerFactory(config.http, options.front),
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
  });
  const app = await NestFactory.create<NestFastifyApplication>(module as Type<unknown>, adapter, { bufferLogs: true, abortOnError: false });
  app.useLogger(options.plainLogger ? app.get(PLAIN_LOGGER) : app.get(Logger));
  app.useGlobalFilters(new ProblemDetailsFilter());
  countResponses(app);
  return app;
}

/** shortlink_http_requests_total{status}: every response Fastify sends (the redirect's hot route has its own counter). */
function countResponses(app: NestFastifyApplication): void {
  const registry = app.get<Registry>(METRICS_REGISTRY);
  const counter = new Counter({ name: 'shortlink_http_requests_total', help: 'HTTP responses sent through the framework, by status', labelNames: ['status'], registers: [registry] });
  app.getHttpAdapter().getInstance().addHook('onResponse', (_request, reply, done) => {
    counter.inc({ status: String(reply.statusCode) });
    done();
  });
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
