import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { Counter, Registry } from 'prom-client';
import {
  CLICK_AGGREGATE_STORE,
  ClickAggregateStore,
  ClickBatch,
  CountedClick,
  dayOf,
  minuteOf,
  planWrites,
  ProducerMark,
  RollupCaps,
  rollUp,
  TableLedgers,
  visitOf,
} from '@shortlink/clicks-domain';
import { APP_LOGGER, ContextLogger, METRICS_REGISTRY, PinoNestLogger } from '@shortlink/nest-platform';
import { UserAgentClassifier } from '@shortlink/visitors-domain';
import { CLICK_BATCH_PATTERN } from './click-transport';

/** ClickConsumerOptions. */
export const CLICK_CONSUMER_OPTIONS = Symbol('CLICK_CONSUMER_OPTIONS');

export interface ClickConsumerOptions {
  /** Events older than this when their record entered the log are dropped and counted; younger ones land in their own minute. */
  readonly allowedLatenessSeconds: number;
  readonly now?: () => number;
}

/** Events stamped further ahead of their record's time than this (a redirect's clock ahead) are counted at the record's time instead. */
const MAX_CLOCK_AHEAD_MS = 5 * 60_000;
/** Producer marks older than this are not read at start: a producer resends within seconds, not days. */
const MARKS_MAX_AGE_SECONDS = 7 * 86_400;

/**
 * Consumer-group member (docs/analytics.md, "Exactly once"): folds each partition batch into
 * per-minute visitor rows and raw visits, and writes them so that a crash anywhere (of the consumer,
 * or of ClickHouse in the middle of an insert) never counts a click twice:
 * - offsets: progress per source and partition, read from the store's progress table on first use
 *   and after a rebalance; a replayed record below it is skipped;
 * - ledgers: each table keeps, in the same part as its rows, the last offset it holds per partition
 *   and day; a batch beyond the progress is written to each table only from where that table stands;
 * - event ids: per source, partition and producer, the highest seq counted; a producer's resend
 *   after an ambiguous timeout lands at new offsets but carries seqs already counted, and is skipped.
 * The producer marks and then the progress are committed once every table holds the batch.
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
    const counted: CountedClick[] = [];
    // Every decision about a click is taken from the log alone (its record's time, the clicks before
    // it after the committed offset), so a batch read again after a crash decides the same (docs/analytics.md, "Exactly once").
    const caps = new RollupCaps();
    let duplicates = 0;
    let late = 0;
    for (const { offset, recordedAt, event: sent } of fresh) {
      const event = sent.occurredAt > recordedAt + MAX_CLOCK_AHEAD_MS ? { ...sent, occurredAt: recordedAt } : sent;
      const rolled = caps.decide(event, minuteOf(event.occurredAt));
      const key = `${batch.partition}/${event.producer}`;
      const last = updated.get(key)?.lastSeq ?? known.get(key);
      if (last !== undefined && event.seq <= last) {
        duplicates++;
        continue;
      }
      updated.set(key, { source: batch.source, partition: batch.partition, producer: event.producer, lastSeq: event.seq });
      if (event.occurredAt < recordedAt - this.options.allowedLatenessSeconds * 1000) late++;
      else counted.push({ offset: BigInt(offset), event, facts: this.classifier.classify(event.userAgent), ...rolled });
    }
    const lastOffset = batch.messages[batch.messages.length - 1].offset;
    const through = { source: batch.source, partition: batch.partition, lastOffset };
    if (counted.length > 0) {
      // Each table says what it holds of this partition: an earlier attempt cut short by a crash (of
      // ClickHouse mid-insert, or of a consumer) may have reached some tables and not others.
      const days = [...new Set(counted.map((c) => dayOf(c.event.occurredAt)))];
      const ledgers: TableLedgers = (await this.store.writtenThrough(batch.source, batch.partition, days)).tables;
      for (const write of planWrites(counted, BigInt(lastOffset), this.store.targets, ledgers)) {
        await this.store.write({
          rows: rollUp(write.clicks),
          visits: write.clicks.map(visitOf),
          targets: write.targets,
          through: { ...through, lastOffset: String(write.lastOffset) },
        });
      }
    }
    await this.store.commit(through, [...updated.values()]);
    // Only now, once written: a failed write leaves the batch to be delivered again, unmarked.
    this.progress.get(batch.source)!.set(batch.partition, BigInt(lastOffset));
    for (const [key, mark] of updated) known.set(key, mark.lastSeq);
    this.events.inc(counted.length);
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
