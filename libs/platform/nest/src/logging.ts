import { DynamicModule, LoggerService, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino, { Logger as Pino } from 'pino';

export const PLAIN_LOGGER = Symbol('PLAIN_LOGGER');

/**
 * JSON logs (pino) tagged with the app, with request logs (pino-http) for API requests. Request
 * logging runs inside AsyncLocalStorage, which turns on promise hooks for the whole process:
 * apps with a hot path use `plainLoggingModule` instead.
 */
export function loggingModule(app: string, level: string): DynamicModule {
  return LoggerModule.forRoot({
    pinoHttp: {
      level,
      base: { app },
      autoLogging: { ignore: (req) => !req.url?.startsWith('/api/') },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
      redact: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
    },
  });
}

/** Nest's LoggerService over a plain pino instance: same JSON lines, no per-request work. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly pino: Pino) {}
  log(message: unknown, context?: string) {
    this.pino.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.pino.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.pino.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.pino.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.pino.trace({ context }, String(message));
  }
}

@Module({})
export class PlainLoggingModule {}

export function plainLoggingModule(app: string, level: string): DynamicModule {
  const logger = new PinoNestLogger(pino({ level, base: { app } }));
  return { module: PlainLoggingModule, global: true, providers: [{ provide: PLAIN_LOGGER, useValue: logger }], exports: [PLAIN_LOGGER] };
}
