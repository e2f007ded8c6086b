/** Anything holding connections, files or timers that must be released at shutdown. */
export interface Closeable {
  close(): Promise<void>;
}

/** A dependency that can report whether it currently works (for /health). */
export interface HealthProbe {
  readonly name: string;
  check(): Promise<void>;
}
