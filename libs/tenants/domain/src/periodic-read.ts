export interface PeriodicReadOptions {
  /** How often the read runs again: the bound on how late a change in the meta database is seen. */
  readonly refreshMs: number;
  /** Longest the start waits for the first read: a hung meta database must not hold the redirect's boot (default 2000). */
  readonly bootWaitMs?: number;
  /** The first failed read after a good one (one report per outage, not one per read). */
  readonly onOutage?: (error: unknown) => void;
}

/**
 * A read of the meta database kept up in the background, for the redirect's in-memory tables: run once
 * at start (awaited for at most `bootWaitMs`), then every `refreshMs`; concurrent runs share one read,
 * and an outage is reported once, when it begins. A failed read leaves the tables as they were.
 */
export class PeriodicRead {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private failing = false;

  constructor(
    private readonly read: () => Promise<void>,
    private readonly options: PeriodicReadOptions,
  ) {}

  /** A first read still running after `bootWaitMs` completes in the background. */
  async start(): Promise<void> {
    const waited = new Promise<void>((resolve) => setTimeout(resolve, this.options.bootWaitMs ?? 2000).unref());
    await Promise.race([this.run(), waited]);
    this.timer = setInterval(() => void this.run(), this.options.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      try {
        await this.read();
        this.failing = false;
      } catch (error) {
        this.failed(error);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** A read outside `run` failed too (the next run reads again). */
  failed(error: unknown): void {
    if (!this.failing) this.options.onOutage?.(error);
    this.failing = true;
  }
}
