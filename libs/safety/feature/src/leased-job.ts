import type { LeaseStore } from '@shortlink/safety-domain';
import type { ContextLogger } from '@shortlink/nest-platform';

export interface LeasedJobOptions {
  /** The lease's name: one instance of the fleet runs the job at a time. */
  readonly name: string;
  /** This instance. */
  readonly owner: string;
  /** How often a step is taken (and the lease renewed). */
  readonly intervalMs: number;
  /** How long the lease holds without a renewal: an instance that died is replaced after this. */
  readonly leaseMs: number;
}

/**
 * A job the fleet runs on one instance at a time (docs/design.md, "Trust and safety"): every
 * `intervalMs` the instance takes (or renews) the job's lease in the meta database and, if it holds
 * it, takes one step. Steps never overlap; a failing step is logged once per distinct failure and
 * tried again at the next interval. `stop` waits for the step under way and gives the lease up.
 */
export class LeasedJob {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private lastFailure: string | null = null;

  constructor(
    private readonly leases: LeaseStore,
    private readonly options: LeasedJobOptions,
    private readonly step: (stillHeld: () => Promise<boolean>) => Promise<void>,
    private readonly logger: ContextLogger,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    await this.leases.releaseLease(this.options.name, this.options.owner).catch(() => undefined);
  }

  /** One tick now (tests, and the first tick at start). */
  tick(): Promise<void> {
    this.running ??= (async () => {
      try {
        if (!(await this.claim())) return;
        await this.step(() => this.claim());
        this.lastFailure = null;
      } catch (error) {
        const message = (error as Error)?.message ?? String(error);
        if (message !== this.lastFailure) this.logger.warn(`${this.options.name}: ${message}; tried again in ${this.options.intervalMs} ms`);
        this.lastFailure = message;
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  private claim(): Promise<boolean> {
    return this.stopped ? Promise.resolve(false) : this.leases.claimLease(this.options.name, this.options.owner, this.options.leaseMs);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.tick().then(() => this.schedule(this.options.intervalMs));
    }, ms);
    this.timer.unref?.();
  }
}
