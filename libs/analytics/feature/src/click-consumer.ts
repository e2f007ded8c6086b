import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { Counter, Registry } from 'prom-client';
import {
  CLICK_AGGREGATE_STORE,
  ClickAggregateStore,
  ClickBatch,
  ClickColumns,
  CountedClicks,
  CountedFacts,
  minuteOf,
  planWrites,
  ProducerMark,
  RollupCaps,
  rollupsOf,
  TableLedgers,
  visitsOf,
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

/** What this member knows of one partition of one source. */
interface PartitionState {
  /** Last offset aggregated (committed), if any. */
  progress: bigint | undefined;
  /** producer -> highest seq counted. */
  readonly marks: Map<string, number>;
}

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
 * `handle` in one step, and the source commits once it resolved. Batches of different partitions
 * may be handled at once (the source's `partitionsConsumedConcurrently`): everything the member
 * remembers is kept per partition, and read again per partition. A batch is read from its columns
 * (`ClickBatch.clicks`), with no object per click (docs/design.md, "Clicks and analytics").
 */
@Controller()
export class ClickConsumer {
  private readonly logger: ContextLogger;
  /** `${source}/${partition}` -> progress and producer marks. */
  private readonly partitions = new Map<string, PartitionState>();
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
    const clicks = batch.clicks ?? ClickColumns.of(batch.messages);
    if (clicks.length === 0) return;
    const { source, partition } = batch;
    const firstRecord = clicks.record[0];
    const state = await this.stateOf(source, partition, clicks.recordOffsetValues[firstRecord]);
    // Records at or below the progress were aggregated already (a replay): skipped whole.
    let record = firstRecord;
    const done = state.progress;
    if (done !== undefined) while (record < clicks.recordCount && clicks.recordOffsetValues[record] <= done) record++;
    const from = clicks.recordBegin(record);
    this.replayed.inc(from);
    if (from === clicks.length) return;
    const updated = new Map<number, number>();
    const counted = new CountedClicks(clicks, clicks.length - from);
    const factsOf = this.factsOf(clicks);
    // Every decision about a click is taken from the log alone (its record's time, the clicks before
    // it after the committed offset), so a batch read again after a crash decides the same (docs/analytics.md, "Exactly once").
    const caps = new RollupCaps(clicks);
    const latenessMs = this.options.allowedLatenessSeconds * 1000;
    let duplicates = 0;
    let late = 0;
    for (let i = from; i < clicks.length; i++) {
      const recordedAt = clicks.recordedAt[clicks.record[i]];
      const sent = clicks.occurredAt[i];
      const time = sent > recordedAt + MAX_CLOCK_AHEAD_MS ? recordedAt : sent;
      const minute = minuteOf(time);
      const code = caps.code(i, minute);
      const referer = caps.referer(i, minute);
      const producer = clicks.producer[i];
      const seq = clicks.seq[i];
      const last = updated.get(producer) ?? state.marks.get(clicks.strings[producer]);
      if (last !== undefined && seq <= last) {
        duplicates++;
        continue;
      }
      updated.set(producer, seq);
      if (time < recordedAt - latenessMs) late++;
      else counted.push(i, time, code, referer, factsOf(clicks.userAgent[i]));
    }
    const lastOffset = clicks.recordOffsets[clicks.record[clicks.length - 1]];
    const through = { source, partition, lastOffset };
    if (counted.length > 0) {
      // Each table says what it holds of this partition: an earlier attempt cut short by a crash (of
      // ClickHouse mid-insert, or of a consumer) may have reached some tables and not others.
      const days = new Set<number>();
      for (let j = 0; j < counted.length; j++) days.add(counted.dayAt(j));
      const ledgers: TableLedgers = (await this.store.writtenThrough(source, partition, [...days])).tables;
      for (const write of planWrites(counted, BigInt(lastOffset), this.store.targets, ledgers)) {
        const positions = write.positions.length === counted.length ? null : write.positions;
        await this.store.write({
          rollups: rollupsOf(counted, positions),
          visits: visitsOf(counted, positions),
          targets: write.targets,
          through: { ...through, lastOffset: String(write.lastOffset) },
        });
      }
    }
    const marks: ProducerMark[] = [...updated].map(([producer, lastSeq]) => ({ source, partition, producer: clicks.strings[producer], lastSeq }));
    await this.store.commit(through, marks);
    // Only now, once written: a failed write leaves the batch to be delivered again, unmarked.
    state.progress = BigInt(lastOffset);
    for (const mark of marks) state.marks.set(mark.producer, mark.lastSeq);
    this.events.inc(counted.length);
    if (duplicates > 0) {
      this.duplicates.inc(duplicates);
      this.logger.warn(`skipped ${duplicates} click events resent by their producer (partition ${partition})`);
    }
    if (late > 0) {
      this.late.inc(late);
      this.logger.warn(`dropped ${late} click events older than the allowed lateness of ${this.options.allowedLatenessSeconds} s`);
    }
  }

  /** The facts of a user agent (a string id of `clicks`) as ids of the batch: classified once per agent and batch (and cached across batches). */
  private factsOf(clicks: ClickColumns): (agent: number) => CountedFacts {
    const known: Array<CountedFacts | undefined> = [];
    return (agent) => {
      let facts = known[agent];
      if (!facts) {
        const f = this.classifier.classify(clicks.strings[agent]);
        facts = { device: clicks.intern(f.device), browser: clicks.intern(f.browser), os: clicks.intern(f.os), bot: f.bot };
        known[agent] = facts;
      }
      return facts;
    };
  }

  /**
   * What this member knows of a partition: its last offset aggregated and its producer marks. Read
   * from the store on first use, and again whenever a batch does not continue where this member
   * left off (a rebalance gave the partition to another member meanwhile, which may have advanced
   * it). Only this partition's state is replaced: batches of other partitions may be in flight.
   */
  private async stateOf(source: string, partition: number, first: bigint): Promise<PartitionState> {
    const key = `${source}/${partition}`;
    const known = this.partitions.get(key);
    const last = known?.progress;
    if (known && last !== undefined && (first === last + 1n || first === last)) return known;
    const [offsets, marks] = await Promise.all([
      this.store.ingestedOffsets(source),
      this.store.producerMarks(source, Math.floor(this.now() / 1000) - MARKS_MAX_AGE_SECONDS),
    ]);
    const state: PartitionState = {
      progress: offsets.get(partition),
      marks: new Map(marks.filter((m) => m.partition === partition).map((m) => [m.producer, m.lastSeq])),
    };
    this.partitions.set(key, state);
    return state;
  }
}
