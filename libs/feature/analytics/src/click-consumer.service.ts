import { Logger } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { aggregateBatch, ClickAggregateStore, ClickBatch, ClickEventSource, DeliveredClick } from '@shortlink/clicks-domain';

/**
 * Consumer-group member: folds each partition batch into per-minute rows and writes them in one
 * insert. Progress lives in ClickHouse next to the aggregates (max offset per partition), so a
 * replay after a crash or rebalance skips what was already counted.
 */
export class ClickConsumer {
  private readonly logger = new Logger('ClickConsumer');
  private progress: Map<number, bigint> | null = null;
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
    // Re-read on (re)start: another member may have advanced a partition while we did not own it.
    this.progress ??= await this.store.ingestedOffsets();
    const done = this.progress.get(batch.partition);
    const fresh = done === undefined ? batch.messages.length : batch.messages.filter((m) => BigInt(m.offset) > done).length;
    this.skipped.inc(batch.messages.length - fresh);
    // ClickHouse commits an insert per monthly partition: writing each month's contiguous run
    // of offsets separately keeps what a crash leaves behind a prefix of the batch.
    for (const run of runsByMonth(batch)) {
      const rows = aggregateBatch(run, this.progress.get(batch.partition), this.visitorSecret);
      if (rows.length === 0) continue;
      await this.store.write(rows);
      const max = rows.reduce((m, r) => (BigInt(r.sourceOffset) > m ? BigInt(r.sourceOffset) : m), -1n);
      this.progress.set(batch.partition, max);
    }
    this.events.inc(fresh);
  }

  async stop(): Promise<void> {
    await this.source.close();
  }
}

const monthOf = (ms: number) => {
  const d = new Date(ms);
  return d.getUTCFullYear() * 100 + d.getUTCMonth();
};

/** Splits a batch into maximal runs of consecutive messages whose events fall in one UTC month. */
export function runsByMonth(batch: ClickBatch): ClickBatch[] {
  const runs: ClickBatch[] = [];
  let current: DeliveredClick[] = [];
  let month: number | null = null;
  for (const m of batch.messages) {
    const mm = monthOf(m.event.occurredAt);
    if (month !== null && mm !== month) {
      runs.push({ partition: batch.partition, messages: current });
      current = [];
    }
    month = mm;
    current.push(m);
  }
  if (current.length) runs.push({ partition: batch.partition, messages: current });
  return runs;
}
