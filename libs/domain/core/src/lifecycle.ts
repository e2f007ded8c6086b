
/** A dependency that can report whether it currently works (for /health). */
export interface HealthProbe {
  readonly name: string;
  check(): Promise<void>;
}
