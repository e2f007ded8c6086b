import { ClickBatch, ClickColumns, ClickEventSource, ColumnarClickBatch } from '@shortlink/clicks-domain';
import { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { AbortableSleeper, RetryBackoff, RetryBackoffOptions } from '../backoff';
import { clicksIn, readClickRecord } from '../codec';
import { deliverUntilHandled } from '../delivery';
import { BusLogger } from '../logging';
import { createKafkaClient, KafkaConnectionOptions, resolveKafkaOptions } from './kafka-options';

export interface KafkaClickEventSourceOptions extends KafkaConnectionOptions {
  readonly groupId: string;
  /** Where a group without committed offsets starts: earliest (default) or latest. */
  readonly fromBeginning?: boolean;
  /** Default 30 000 ms. */
  readonly sessionTimeoutMs?: number;
  /** Default 3 000 ms; also the heartbeat period while a handler runs or a batch waits for redelivery. */
  readonly heartbeatIntervalMs?: number;
  /** Longest a fetch waits for data on the broker, ms (default 1 000; also bounds close()). */
  readonly maxWaitTimeMs?: number;
  /** Default 1 MiB. */
  readonly maxBytesPerPartition?: number;
  /** Wait between redeliveries of a batch whose handler threw (default 100 ms doubling to 5 s). */
  readonly retryBackoff?: RetryBackoffOptions;
  /**
   * Default true. false: offsets are never committed (a group of one instance's own reading from the
   * end, as the live stream's: it starts again at the end after a restart, and leaves nothing behind).
   */
  readonly commitOffsets?: boolean;
  /** Waited for before the consumer joins its group: the topic exists (the analytics app may boot before anyone created it). */
  readonly topicReady?: () => Promise<unknown>;
  /**
   * Partitions whose batches the handler may be running at once (kafkajs' partitionsConsumedConcurrently;
   * default 1). Batches of one partition never overlap, and each partition keeps its order and its
   * redelivery. kafkajs (2.2) runs the batches of one fetch at once and fetches from that broker again
   * once all of them resolved: a partition whose handler is slow or keeps failing lets the others of
   * its fetch through, and then holds every partition that broker leads until it resolves.
   */
  readonly partitionsConsumedConcurrently?: number;
}

/**
 * Consumer side of the click topic on Kafka, one member of the consumer group `groupId`.
 *
 * - `eachBatch` with `eachBatchAutoResolve: false` and `autoCommit: false`: after the handler
 *   resolved, the batch's last offset is resolved and committed explicitly (offset + 1) before the
 *   next batch of that partition is fetched. A crash before that replays the batch (at-least-once).
 * - A handler that throws gets the same batch again after a backoff (100 ms doubling to 5 s) for as
 *   long as it keeps failing; the member heartbeats meanwhile so it keeps its partitions, and
 *   nothing later of that partition is delivered before, nor anything of a later fetch from the
 *   same broker (see `partitionsConsumedConcurrently`). A rebalance or close() during the wait leaves the batch
 *   uncommitted: it comes again.
 * - Records that are not click records of a known version are skipped (counted in
 *   `skippedMessages`, logged at warn) and committed with the batch: they never block a partition.
 *   One record carries several events, all delivered with the record's offset. Batches carry their
 *   clicks as columns (`ClickBatch.clicks`); the objects of `messages` are made on first read.
 * - The handler runs for at most `partitionsConsumedConcurrently` partitions at once, never twice
 *   for one partition at once, and never with an empty batch.
 * - A start that fails (the topic check or the brokers, after the client's retries) rejects and
 *   leaves the source as new: it may be started again.
 */
export class KafkaClickEventSource implements ClickEventSource {
  private readonly topic: string;
  private readonly logger: BusLogger;
  private readonly kafka: Kafka;
  private readonly heartbeatIntervalMs: number;
  private readonly concurrency: number;
  private readonly sleeper = new AbortableSleeper();
  private consumer: Consumer | null = null;
  private admin: Promise<Admin> | null = null;
  private state: 'new' | 'running' | 'closed' = 'new';
  private skipped = 0;
  private failures = 0;

  constructor(private readonly options: KafkaClickEventSourceOptions) {
    const resolved = resolveKafkaOptions(options);
    this.topic = resolved.topic;
    this.logger = resolved.logger;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 3000;
    this.concurrency = Math.max(1, Math.floor(options.partitionsConsumedConcurrently ?? 1));
    this.kafka = createKafkaClient(options, { retries: 8, initialRetryTime: 300, maxRetryTime: 5000 }, '-consumer');
  }

  /** Records skipped because they were not click records of a known version. */
  get skippedMessages(): number {
    return this.skipped;
  }

  /** Handler calls that threw (each one is followed by a redelivery). */
  get handlerFailures(): number {
    return this.failures;
  }

  async start(handler: (batch: ClickBatch) => Promise<void>): Promise<void> {
    if (this.state !== 'new') throw new Error(`KafkaClickEventSource is ${this.state === 'running' ? 'already started' : 'closed'}`);
    this.state = 'running';
    try {
      await this.options.topicReady?.();
    } catch (error) {
      // A start that failed (the brokers down) leaves the source as it was: it may be started again.
      if (this.state === 'running') this.state = 'new';
      throw error;
    }
    if ((this.state as string) === 'closed') return; // closed while waiting for the topic
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      sessionTimeout: this.options.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: this.heartbeatIntervalMs,
      maxWaitTimeInMs: this.options.maxWaitTimeMs ?? 1000,
      maxBytesPerPartition: this.options.maxBytesPerPartition ?? 1024 * 1024,
      allowAutoTopicCreation: false,
    });
    this.consumer = consumer;
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      this.logger({
        level: 'error',
        namespace: 'bus.kafka',
        message: `click consumer crashed${payload.restart ? ', restarting' : ''}`,
        extra: { groupId: payload.groupId, error: String(payload.error) },
      });
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [this.topic], fromBeginning: this.options.fromBeginning ?? true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.concurrency,
        eachBatch: (payload) => this.onBatch(payload, handler),
      });
    } catch (error) {
      this.consumer = null;
      await consumer.disconnect().catch(() => undefined);
      if (this.state === 'running') this.state = 'new';
      throw error;
    }
  }

  /**
   * Lag per partition from the broker: log end offset minus the group's committed offset. Read
   * from the broker rather than from the last fetch, so it keeps growing while the handler is
   * stuck (ClickHouse down) and the consumer fetches nothing.
   */
  async lag(): Promise<Map<number, number>> {
    this.admin ??= (async () => {
      const admin = this.kafka.admin();
      await admin.connect();
      return admin;
    })().catch((error) => {
      this.admin = null;
      throw error;
    });
    const admin = await this.admin;
    const [ends, committed] = await Promise.all([
      admin.fetchTopicOffsets(this.topic),
      admin.fetchOffsets({ groupId: this.options.groupId, topics: [this.topic] }),
    ]);
    const done = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
    const lag = new Map<number, number>();
    for (const p of ends) {
      const end = BigInt(p.high);
      const at = done.get(p.partition) ?? -1n;
      lag.set(p.partition, Number(at < 0n ? end - BigInt(p.low) : end > at ? end - at : 0n));
    }
    return lag;
  }

  async close(): Promise<void> {
    const admin = this.admin;
    this.admin = null;
    await admin?.then((a) => a.disconnect()).catch(() => undefined);
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.sleeper.abort();
    const consumer = this.consumer;
    this.consumer = null;
    // Waits for a running batch (its handler and commit) to finish, then leaves the group.
    await consumer?.disconnect();
  }

  private get running(): boolean {
    return this.state === 'running';
  }

  private async onBatch(payload: EachBatchPayload, handler: (batch: ClickBatch) => Promise<void>): Promise<void> {
    const { batch, resolveOffset, commitOffsetsIfNecessary, heartbeat, isRunning, isStale } = payload;
    if (batch.messages.length === 0) return;
    let bytes = 0;
    for (const message of batch.messages) bytes += message.value?.length ?? 0;
    const clicks = new ClickColumns(clicksIn(bytes));
    for (const message of batch.messages) {
      const read = readClickRecord(message.value, clicks, message.offset, Number(message.timestamp));
      if (typeof read === 'string') {
        this.skipped++;
        this.logger({
          level: 'warn',
          namespace: 'bus.kafka',
          message: `skipped a click record (${read})`,
          extra: { topic: batch.topic, partition: batch.partition, offset: message.offset },
        });
      }
    }
    if (clicks.length > 0) {
      const delivered = await this.deliver(
        handler,
        new ColumnarClickBatch(`kafka:${this.topic}`, batch.partition, clicks),
        heartbeat,
        () => isRunning() && !isStale(),
      );
      if (!delivered) return; // closing, or the partition moved: leave it uncommitted
    }
    const last = batch.messages[batch.messages.length - 1].offset;
    resolveOffset(last);
    // batch.lastOffset() covers trailing records kafkajs filtered out (control records).
    if (this.options.commitOffsets === false) return;
    const next = (BigInt(batch.lastOffset()) + 1n).toString();
    await commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }] });
  }

  /** Calls the handler until it resolves, heartbeating meanwhile; false if it must stop first. */
  private deliver(
    handler: (batch: ClickBatch) => Promise<void>,
    batch: ClickBatch,
    heartbeat: () => Promise<void>,
    stillOwned: () => boolean,
  ): Promise<boolean> {
    let heartbeatError: unknown = null;
    return deliverUntilHandled(handler, batch, {
      // One backoff per batch: partitions consumed at once fail and recover apart.
      backoff: new RetryBackoff(this.options.retryBackoff),
      logger: this.logger,
      namespace: 'bus.kafka',
      groupId: this.options.groupId,
      attempt: async (call) => {
        heartbeatError = null;
        const ticker = setInterval(() => {
          heartbeat().catch((error) => (heartbeatError = error));
        }, this.heartbeatIntervalMs);
        try {
          await call();
        } finally {
          clearInterval(ticker);
        }
      },
      stillWanted: () => this.running && stillOwned(),
      waitBeforeRetry: (ms) => {
        // A rebalance seen while the handler ran: give the partition back, it is refetched from the commit.
        if (heartbeatError) throw heartbeatError;
        return this.waitBeforeRetry(ms, heartbeat, stillOwned);
      },
      failed: () => void this.failures++,
    });
  }

  private async waitBeforeRetry(ms: number, heartbeat: () => Promise<void>, stillOwned: () => boolean): Promise<boolean> {
    const until = Date.now() + ms;
    for (;;) {
      if (!this.running || !stillOwned()) return false;
      const left = until - Date.now();
      if (left <= 0) return true;
      await this.sleeper.sleep(Math.min(left, this.heartbeatIntervalMs));
      if (!this.running) return false;
      await heartbeat(); // throws on a rebalance: kafkajs rejoins and the batch comes again
    }
  }
}
