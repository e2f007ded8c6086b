import { LoggerService } from '@nestjs/common';
import pino, { Logger as Pino } from 'pino';
import PinoPretty from 'pino-pretty';

export type LogFormat = 'json' | 'pretty' | 'auto';

/**
 * One pino logger per app, every line tagged with the app's name. JSON by default; readable lines
 * when asked, or with `auto` when stdout is a terminal (a developer running `npm start`).
 */
export function createAppLogger(app: string, level: string, format: LogFormat): Pino {
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
  return pretty
    ? pino({ level, base: { app } }, PinoPretty({ colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname', messageFormat: '[{app}] {if context}{context}: {end}{msg}' }))
    : pino({ level, base: { app } });
}

/** Nest's LoggerService over a pino logger: same lines, no per-request context machinery. */
export class PinoNestLogger implements LoggerService {
  constructor(readonly pino: Pino) {}

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
