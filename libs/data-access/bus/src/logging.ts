export type BusLogLevel = 'error' | 'warn' | 'info' | 'debug';

export interface BusLogEntry {
  readonly level: BusLogLevel;
  /** Where it comes from: `bus.memory`, `bus.kafka`, or the kafkajs namespace (`Connection`, `Consumer`...). */
  readonly namespace: string;
  readonly message: string;
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** Where the bus (and kafkajs under it) logs to; apps pass their pino logger wrapped in one of these. */
export type BusLogger = (entry: BusLogEntry) => void;

const ORDER: Record<BusLogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

/** Drops entries below `min` (default warn) before they reach `target`. */
export function filteredLogger(target: BusLogger, min: BusLogLevel | 'nothing' = 'warn'): BusLogger {
  if (min === 'nothing') return () => undefined;
  const limit = ORDER[min];
  return (entry) => {
    if (ORDER[entry.level] <= limit) target(entry);
  };
}

/** Default when no logger is passed: warnings and errors only, one line each on stderr. */
export const consoleWarnLogger: BusLogger = (entry) => {
  const line = `[${entry.namespace}] ${entry.message}`;
  if (entry.level === 'error') console.error(line, entry.extra ?? '');
  else console.warn(line, entry.extra ?? '');
};
