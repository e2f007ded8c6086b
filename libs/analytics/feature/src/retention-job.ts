import type { ClickAggregateStore, Retention } from '@shortlink/clicks-domain';
import type { ContextLogger } from '@shortlink/nest-platform';

/** The job runs at start and then every hour (dropping a partition is cheap; nothing waits on it). */
const EVERY_MS = 3600_000;

/** Drops the partitions of the click tables past their retention (docs/analytics.md, "Retention"). */
export class RetentionJob {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: ClickAggregateStore,
    private readonly retention: Retention,
    private readonly logger: ContextLogger,
  ) {}

  start(): void {
    void this.run();
    this.timer = setInterval(() => void this.run(), EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private run(): Promise<unknown> {
    return this.store.dropExpired(Math.floor(Date.now() / 1000), this.retention).then(
      (dropped) => dropped.length > 0 && this.logger.log(`retention dropped ${dropped.length} partitions: ${dropped.join(', ')}`),
      (error: Error) => this.logger.warn(`retention failed: ${error.message}`),
    );
  }
}
