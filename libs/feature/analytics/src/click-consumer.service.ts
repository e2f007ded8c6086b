import { Logger } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { aggregateBatch, ClickAggregateStore, ClickBatch, ClickEventSource, DeliveredClick } from '@shortlink/clicks-domain';

/**
 * Consumer-group member: folds each partition batch into per-minute rows and writes them in one
 * insert together with the progress they complete. Progress is kept per source and partition in
 * the store, so a replay after a crash or rebalance skips what was already counted, and a new
 * in-process log (offsets from 0 again) is never mistaken for a replay (docs/design.md).
 */
export class ClickConsumer {
  private readonly logger = new Logger('ClickConsumer');
  /** source → partition → last offset aggregated. */
  private readonly progress = new Map<string, Map<number, bigint>>();
  private readonly events: Counter;
  private readonly skipped: Counter;

  constructor(
    private readonly source: ClickEventSource,
    private readonly store: ClickAggregateStore,
    private readonly visitorSecret: string,
    registry: Registry,
  ) {
    this.events = new Counter({ name: 'shortlink_analytics_events_total', help: 'Click events aggregated', registers: [registry] });
    this.skipped = new Counter({ name: 'shortlink_analytics_replayed_events_skipped_total', help: 'Replayed click events skipped because already aggregated', registers: [registry] });
  }

  async start(): Promise<void> {
    await this.source.start((batch) => this.handle(batch));
    this.logger.log('click consumer started');
  }

  async handle(batch: ClickBatch): Promise<void> {
    const done = await this.progressOf(batch);
    const fresh = done === undefined ? batch.messages : batch.messages.filter((m) => BigInt(m.offset) > done);
    this.skipped.inc(batch.messages.length - fresh.length);
    // ClickHouse commits an insert per monthly partition: writing each month's contiguous run
    // of offsets separately keeps what a server crash leaves behind a prefix of the batch.
    for (const run of runsByMonth(fresh)) {
      const lastOffset = run[run.length - 1].offset;
      await this.store.write(aggregateBatch(run.map((m) => m.event), this.visitorSecret), { source: batch.source, partition: batch.partition, lastOffset });
      this.progress.get(batch.source)!.set(batch.partition, BigInt(lastOffset));
    }
    this.events.inc(fresh.length);
  }

  async stop(): Promise<void> {
    await this.source.close();
  }

  /**
   * The last offset aggregated for the batch's partition. Read from the store on first use of a
   * source, and again whenever a batch does not continue where this member left off (a
   * rebalance gave the partition to another member meanwhile, which may have advanced it).
   */
  private async progressOf(batch: ClickBatch): Promise<bigint | undefined> {
    let known = this.progress.get(batch.source);
    const last = known?.get(batch.partition);
    const continues = last !== undefined && BigInt(batch.messages[0].offset) === last + 1n;
    if (!known || !continues) {
      known = await this.store.ingestedOffsets(batch.source);
      this.progress.set(batch.source, known);
    }
    return known.get(batch.partition);
  }
}

const monthOf = (ms: number) => {
  const d = new Date(ms);
  return d.getUTCFullYear() * 100 + d.getUTCMonth();
};

/** Splits messages into maximal runs of consecutive messages whose events fall in one UTC month. */
export function runsByMonth(messages: readonly DeliveredClick[]): DeliveredClick[][] {
  const runs: DeliveredClick[][] = [];
  let month: number | null = null;
  for (const m of messages) {
    const mm = monthOf(m.event.occurredAt);
    if (month === null || mm !== month) runs.push([]);
    month = mm;
    runs[runs.length - 1].push(m);
  }
  return runs;
}
