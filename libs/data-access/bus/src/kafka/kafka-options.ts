import { Kafka, KafkaConfig, logCreator, LogEntry, logLevel, RetryOptions } from 'kafkajs';
import { DEFAULT_CLICK_TOPIC } from '../codec';
import { BusLogger, BusLogLevel, consoleWarnLogger, filteredLogger } from '../logging';
import { fixKafkajsRequestQueue } from './request-queue-fix';

export interface KafkaConnectionOptions {
  /** `host:port` list; a comma-separated string is accepted too (as the env carries it). */
  readonly brokers: readonly string[] | string;
  /** Default `shortlink`. */
  readonly clientId?: string;
  /** Default `shortlink.clicks`. */
  readonly topic?: string;
  /** TCP connect timeout per broker, ms (default 1000: a down broker fails fast). */
  readonly connectionTimeoutMs?: number;
  /** Timeout of one request, ms (default 5000). */
  readonly requestTimeoutMs?: number;
  /** Receives kafkajs' and the bus' own log entries at or above `logLevel`. Default: stderr. */
  readonly logger?: BusLogger;
  /** Default `warn`: kafkajs is chatty at info. */
  readonly logLevel?: BusLogLevel | 'nothing';
}

export function brokerList(brokers: readonly string[] | string): string[] {
  const list = (typeof brokers === 'string' ? brokers.split(',') : [...brokers]).map((b) => b.trim()).filter((b) => b.length > 0);
  if (list.length === 0) throw new Error('no Kafka broker configured');
  return list;
}

const FROM_KAFKAJS: Record<number, BusLogLevel> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

const TO_KAFKAJS: Record<BusLogLevel | 'nothing', logLevel> = {
  nothing: logLevel.NOTHING,
  error: logLevel.ERROR,
  warn: logLevel.WARN,
  info: logLevel.INFO,
  debug: logLevel.DEBUG,
};

/**
 * kafkajs messages we cause on purpose and know to be harmless; they are dropped so a deliberate
 * setting does not warn on every start.
 */
const EXPECTED_KAFKAJS_WARNINGS = [
  // The sink bounds the idempotent producer's retries so a down broker fails the send quickly
  // (see KafkaClickEventSink); at-least-once is kept by the caller's retry.
  'Limiting retries for the idempotent producer may invalidate EoS guarantees',
];

/** The same kafkajs message is passed on at most once per this window; repeats are counted. */
export const KAFKAJS_REPEAT_WINDOW_MS = 10_000;

/**
 * Routes kafkajs' logs to a BusLogger (namespace = kafkajs' logger name). While a broker is down
 * kafkajs logs the same connection error on every retry of every client; repeats of one message
 * within KAFKAJS_REPEAT_WINDOW_MS are dropped and reported as `repeated` on the next one let through.
 */
export function kafkajsLogCreator(logger: BusLogger, now: () => number = Date.now): logCreator {
  const recent = new Map<string, { at: number; repeated: number }>();
  return () => (entry: LogEntry) => {
    const { message, timestamp: _timestamp, logger: _name, ...extra } = entry.log;
    if (EXPECTED_KAFKAJS_WARNINGS.includes(message)) return;
    let level = FROM_KAFKAJS[entry.level] ?? 'info';
    // kafkajs logs every error response of a request at error level, also the retriable ones it
    // then retries (coordinator loading, topic already exists...). Whatever is not recovered
    // reaches the caller as a thrown error, so these are details: info.
    if (entry.namespace === 'Connection' && level === 'error' && message.startsWith('Response ')) level = 'info';
    const namespace = `kafkajs.${entry.namespace || 'client'}`;
    const key = `${level} ${namespace} ${message}`;
    const t = now();
    const seen = recent.get(key);
    if (seen && t - seen.at < KAFKAJS_REPEAT_WINDOW_MS) {
      seen.repeated++;
      return;
    }
    if (recent.size > 500) {
      for (const [k, v] of recent) if (t - v.at >= KAFKAJS_REPEAT_WINDOW_MS) recent.delete(k);
    }
    recent.set(key, { at: t, repeated: 0 });
    logger({ level, namespace, message, extra: seen?.repeated ? { ...extra, repeated: seen.repeated } : extra });
  };
}

export interface ResolvedKafkaOptions {
  readonly brokers: string[];
  readonly clientId: string;
  readonly topic: string;
  readonly logger: BusLogger;
}

export function resolveKafkaOptions(options: KafkaConnectionOptions): ResolvedKafkaOptions {
  return {
    brokers: brokerList(options.brokers),
    clientId: options.clientId ?? 'shortlink',
    topic: options.topic ?? DEFAULT_CLICK_TOPIC,
    logger: filteredLogger(options.logger ?? consoleWarnLogger, options.logLevel ?? 'warn'),
  };
}

/** One kafkajs client with the bus' timeouts, retries and logging (and kafkajs' idle timer loop fixed: request-queue-fix.ts). */
export function createKafkaClient(options: KafkaConnectionOptions, retry: RetryOptions, clientIdSuffix = ''): Kafka {
  fixKafkajsRequestQueue();
  const resolved = resolveKafkaOptions(options);
  const config: KafkaConfig = {
    clientId: resolved.clientId + clientIdSuffix,
    brokers: resolved.brokers,
    connectionTimeout: options.connectionTimeoutMs ?? 1000,
    requestTimeout: options.requestTimeoutMs ?? 5000,
    enforceRequestTimeout: true,
    retry,
    logLevel: TO_KAFKAJS[options.logLevel ?? 'warn'],
    logCreator: kafkajsLogCreator(resolved.logger),
  };
  return new Kafka(config);
}
