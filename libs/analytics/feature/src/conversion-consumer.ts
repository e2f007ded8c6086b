import type { ClickAggregateStore, ConversionBatch, ConversionEventSource, ConversionRow } from '@shortlink/clicks-domain';
import type { ContextLogger } from '@shortlink/nest-platform';

/** Pause before a start that failed (the bus down at boot) is tried again. */
const RESTART_MS = 5000;

/**
 * The analytics group on the conversions topic (docs/analytics.md, "Conversions"): each partition
 * batch goes into the `conversions` table, guarded as the clicks are (docs/analytics.md, "Exactly
 * once"): the committed progress per source and partition skips a replay; the table is its own
 * ledger (its highest offset of that source partition, in the same part as the rows), so a batch
 * cut short after its insert is not written twice; and every answer counts an event key once, so a
 * producer's resend or a retried report that reached the bus twice counts once. The progress is
 * committed after the insert; a failed insert leaves the batch to come again.
 */
export class ConversionConsumer {
  /** `${source}/${partition}` -> last offset known written and committed. */
  private readonly done = new Map<string, bigint | undefined>();
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  counted = 0;

  constructor(
    private readonly store: ClickAggregateStore,
    private readonly source: ConversionEventSource,
    private readonly logger: Pick<ContextLogger, 'warn' | 'log'>,
  ) {}

  /** Joins the group in the background (a bus down at boot is tried again every 5 s); the app does not wait. */
  start(): void {
    this.stopped = false;
    this.source
      .start((batch) => this.handle(batch))
      .catch((error: unknown) => {
        if (this.stopped) return;
        this.logger.warn(`conversions consumer not started (retried in ${RESTART_MS / 1000} s): ${(error as Error)?.message}`);
        this.timer = setTimeout(() => this.start(), RESTART_MS);
        this.timer.unref?.();
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.source.close();
  }

  async handle(batch: ConversionBatch): Promise<void> {
    if (batch.messages.length === 0) return;
    const { source, partition } = batch;
    const key = `${source}/${partition}`;
    let done = this.done.get(key);
    if (!this.done.has(key) || (done !== undefined && BigInt(batch.messages[0].offset) > done + 1n)) {
      // First batch of this partition here, or one that does not continue where this member left off (a rebalance).
      const [progress, through] = await Promise.all([this.store.ingestedOffsets(source), this.store.conversionsThrough(source, partition)]);
      done = max(progress.get(partition), through);
    }
    const rows: ConversionRow[] = batch.messages
      .filter((m) => done === undefined || BigInt(m.offset) > done)
      .map((m) => ({ event: m.event, source, partition, offset: m.offset }));
    const lastOffset = batch.messages[batch.messages.length - 1].offset;
    if (rows.length > 0) await this.store.writeConversions(rows);
    await this.store.commit({ source, partition, lastOffset }, []);
    this.done.set(key, max(done, BigInt(lastOffset)));
    this.counted += rows.length;
  }
}

const max = (a: bigint | undefined, b: bigint | undefined): bigint | undefined => (a === undefined ? b : b === undefined ? a : a > b ? a : b);
