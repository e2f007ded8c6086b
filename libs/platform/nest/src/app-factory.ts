import { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyServerOptions } from 'fastify';
import { Logger } from 'nestjs-pino';
import { ProblemDetailsFilter } from './problem-details.filter';
import { PLAIN_LOGGER } from './logging';

/** Nest on Fastify with JSON logs, the problem+json filter and graceful shutdown. */
export async function createFastifyApp(module: Type<unknown> | { module: Type<unknown> }, options: { bodyLimitBytes?: number; trustProxy?: boolean; plainLogger?: boolean; serverFactory?: FastifyServerOptions['serverFactory'] } = {}): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({ bodyLimit: options.bodyLimitBytes ?? 1_048_576, trustProxy: options.trustProxy ?? true, routerOptions: { maxParamLength: 200 }, ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}) });
  const app = await NestFactory.create<NestFastifyApplication>(module as Type<unknown>, adapter, { bufferLogs: true, abortOnError: false });
  app.useLogger(options.plainLogger ? app.get(PLAIN_LOGGER) : app.get(Logger));
  app.useGlobalFilters(new ProblemDetailsFilter());
  app.enableShutdownHooks();
  return app;
}
