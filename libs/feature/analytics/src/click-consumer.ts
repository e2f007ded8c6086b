import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { Counter, Registry } from 'prom-client';
import { aggregateClicks, CLICK_AGGREGATE_STORE, ClickAggregateStore, ClickBatch, ClickEvent, ProducerMark } from '@shortlink/clicks-domain';
import { APP_LOGGER, ContextLogger, METRICS_REGISTRY, PinoNestLogger } from '@shortlink/nest-platform';
import { UserAgentClassifier } from '@shortlink/visitors-domain';
import { CLICK_BATCH_PATTERN } from './click-transport';

/** ClickConsumerOptions. */
export const CLICK_CONSUMER_OPTIONS = Symbol('CLICK_CONSUMER_OPTIONS');

export interface ClickConsumerOptions {
  /** Events older than this at the consumer are dropped and counted; younger ones land in their own minute. */
  readonly allowedLatenessSeconds: number;
  readonly now?: () => number;
}

/** Events stamped further ahead than this (a redirect's clock ahead of ours) are counted now instead. */
const MAX_CLOCK_AHEAD_MS = 5 * 60_000;
/** Producer marks older than this are not read at start: a producer resends within seconds, not days. */
const MARKS_MAX_AGE_SECONDS = 7 * 86_400;

/**
 * Consumer-group member (docs/analytics.md, "Exactly once"): folds each partition batch into
 * per-minute visitor rows and writes them in one insert with the progress they complete and the
 * producers' marks. Two guards keep counts exact:
 * - offsets: progress per source and partition, read from the store's progress table on first use
 *   and after a rebalance; a replayed record (consumer crash before the commit) is skipped;
 * - event ids: per source, partition and producer, the highest seq counted; a producer's resend
 *   after an ambiguous timeout lands at new offsets but carries seqs already counted, and is skipped.
 *
 * The handler of the click bus's Nest transport (click-transport.ts): each partition batch reaches
 * `handle` in one step, and the source commits once it resolved.
 */
@Controller()
export class ClickConsumer {
  private readonly logger: ContextLogger;
  /** source -> partition -> last offset aggregated. */
  private readonly progress = new Map<string, Map<number, bigint>>();
  /** source -> `${partition}/${producer}` -> highest seq counted. */
  private readonly marks = new Map<string, Map<string, number>>();
  private readonly events: Counter;
  private readonly replayed: Counter;
  private readonly duplicates: Counter;
  private readonly late: Counter;
  private readonly now: () => number;

  constructor(
    @Inject(CLICK_AGGREGATE_STORE) private readonly store: ClickAggregateStore,
    @Inject(UserAgentClassifier) private readonly classifier: UserAgentClassifier,
    @Inject(CLICK_CONSUMER_OPTIONS) private readonly options: ClickConsumerOptions,
    @Inject(METRICS_REGISTRY) registry: Registry,
    @Inject(APP_LOGGER) logger: PinoNestLogger,
  ) {
    this.logger = logger.scoped('ClickConsumer');
    this.now = options.now ?? Date.now;
    this.events = new Counter({ name: 'shortlink_analytics_events_total', help: 'Click events aggregated', registers: [registry] });
    this.replayed = new Counter({
      name: 'shortlink_analytics_replayed_events_skipped_total',
      help: 'Replayed click events skipped because already aggregated (offset below the progress)',
      registers: [registry],
    });
    this.duplicates = new Counter({
      name: 'shortlink_analytics_duplicate_events_skipped_total',
      help: 'Click events skipped because a producer resent them (event id already counted)',
      registers: [registry],
    });
    this.late = new Counter({
      name: 'shortlink_analytics_late_events_dropped_total',
      help: 'Click events older than the allowed lateness, dropped',
      registers: [registry],
    });
  }

  @EventPattern(CLICK_BATCH_PATTERN)
  async handle(@Payload() batch: ClickBatch): Promise<void> {
    if (batch.messages.length === 0) return;
    const done = await this.progressOf(batch);
    const fresh = done === undefined ? batch.messages : batch.messages.filter((m) => BigInt(m.offset) > done);
    this.replayed.inc(batch.messages.length - fresh.length);
    if (fresh.length === 0) return;
    const known = this.marks.get(batch.source)!;
    const updated = new Map<string, ProducerMark>();
    const accepted: ClickEvent[] = [];
    const now = this.now();
    const oldest = now - this.options.allowedLatenessSeconds * 1000;
    let duplicates = 0;
    let late = 0;
    for (const { event } of fresh) {
      const key = `${batch.partition}/${event.producer}`;
      const last = updated.get(key)?.lastSeq ?? known.get(key);
      if (last !== undefined && event.seq <= last) {
        duplicates++;
        continue;
      }
      updated.set(key, { source: batch.source, partition: batch.partition, producer: event.producer, lastSeq: event.seq });
      if (event.occurredAt < oldest) late++;
      else accepted.push(event.occurredAt > now + MAX_CLOCK_AHEAD_MS ? { ...event, occurredAt: now } : event);
    }
    const lastOffset = batch.messages[batch.messages.length - 1].offset;
    const rows = aggregateClicks(accepted, (ua) => this.classifier.classify(ua));
    await this.store.write(rows, { source: batch.source, partition: batch.partition, lastOffset }, [...updated.values()]);
    // Only now, once written: a failed write leaves the batch to be delivered again, unmarked.
    this.progress.get(batch.source)!.set(batch.partition, BigInt(lastOffset));
    for (const [key, mark] of updated) known.set(key, mark.lastSeq);
    this.events.inc(accepted.length);
    if (duplicates > 0) {
      this.duplicates.inc(duplicates);
      this.logger.warn(`skipped ${duplicates} click events resent by their producer (partition ${batch.partition})`);
    }
    if (late > 0) {
      this.late.inc(late);
      this.logger.warn(`dropped ${late} click events older than the allowed lateness of ${this.options.allowedLatenessSeconds} s`);
    }
  }

  /**
   * The last offset aggregated for the batch's partition. Read from the store on first use of a
   * source, and again whenever a batch does not continue where this member left off (a
   * rebalance gave the partition to another member meanwhile, which may have advanced it); the
   * producer marks of the source are read with it.
   */
  private async progressOf(batch: ClickBatch): Promise<bigint | undefined> {
    let known = this.progress.get(batch.source);
    const last = known?.get(batch.partition);
    const first = BigInt(batch.messages[0].offset);
    const continues = last !== undefined && (first === last + 1n || first === last);
    if (!known || !continues) {
      const [offsets, marks] = await Promise.all([
        this.store.ingestedOffsets(batch.source),
        this.store.producerMarks(batch.source, Math.floor(this.now() / 1000) - MARKS_MAX_AGE_SECONDS),
      ]);
      known = offsets;
      this.progress.set(batch.source, known);
      this.marks.set(batch.source, new Map(marks.map((m) => [`${m.partition}/${m.producer}`, m.lastSeq])));
    }
    return known.get(batch.partition);
  }
}
