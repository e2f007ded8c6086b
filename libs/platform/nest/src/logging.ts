import { LoggerService } from '@nestjs/common';
import pino, { DestinationStream, Logger as Pino } from 'pino';
import PinoPretty from 'pino-pretty';

export type LogFormat = 'json' | 'pretty' | 'auto';

/**
 * One pino logger per app, every line tagged with the app's name. JSON by default; readable lines
 * when asked, or with `auto` when stdout is a terminal (a developer running `npm start`). Lines go
 * to `destination` (stdout by default), written asynchronously; the apps of one process share one.
 */
export function createAppLogger(app: string, level: string, format: LogFormat, destination: DestinationStream = pino.destination(1)): Pino {
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
  const messageFormat = '[{app}] {if context}{context}: {end}{msg}';
  return pretty
    ? pino({ level, base: { app } }, PinoPretty({ colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname', messageFormat, destination }))
    : pino({ level, base: { app } }, destination);
}

/** An app's lines under one context (`Generation`, `ReadPath`, …). */
export interface ContextLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Nest's LoggerService over a pino logger: same lines, no per-request context machinery. Nest's
 * own `Logger` is one per process (the last app's, in the embedded process of three apps), so the
 * apps' code logs through `scoped`, which always names its app (docs/design.md, "The house").
 */
export class PinoNestLogger implements LoggerService {
  constructor(readonly pino: Pino) {}

  scoped(context: string): ContextLogger {
    return {
      log: (message) => this.log(message, context),
      warn: (message) => this.warn(message, context),
      error: (message) => this.error(message, undefined, context),
    };
  }

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
