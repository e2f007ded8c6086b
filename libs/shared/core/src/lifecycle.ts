/** A dependency that can report whether it currently works (for /health). */
export interface HealthProbe {
  readonly name: string;
  check(): Promise<void>;
  /**
   * false: the app stays useful when this fails (one link shard of several: docs/design.md,
   * "Failure containment"), so /health stays 200 and only /health/details shows it. Default true.
   */
  readonly critical?: boolean;
  /** What operators see beside the result at /health/details (e.g. the shard ring version). */
  details?(): Readonly<Record<string, unknown>>;
}

/** A number a port reports as a Prometheus gauge of each app that opened it (read at scrape time). */
export interface PortGauge {
  readonly name: string;
  readonly help: string;
  value(): number;
}
