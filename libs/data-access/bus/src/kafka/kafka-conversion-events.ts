import { randomUUID } from 'crypto';
import { Consumer, EachBatchPayload, Kafka, Message } from 'kafkajs';
import type { ConversionBatch, ConversionEvent, ConversionEventSink, ConversionEventSource } from '@shortlink/clicks-domain';
import { BusLogger } from '../logging';
import { createKafkaClient, KafkaConnectionOptions, resolveKafkaOptions } from './kafka-options';
import { ensureClickTopic } from './ensure-click-topic';
import { SendBatcher } from './send-batcher';
import { TopicProducer } from './topic-producer';

const VERSION = 1;

/** A record of the conversions topic: one event as JSON, versioned; a record of an unknown version is skipped. */
export const encodeConversionEvent = (event: ConversionEvent): string => JSON.stringify({ v: VERSION, ...event });

export function decodeConversionEvent(value: Buffer | string | null): ConversionEvent | null {
  if (!value) return null;
  try {
    const parsed = JSON.parse(typeof value === 'string' ? value : value.toString('utf8')) as { v?: number } & ConversionEvent;
    if (parsed.v !== VERSION || typeof parsed.id !== 'string' || typeof parsed.key !== 'string' || typeof parsed.tenantId !== 'string') return null;
    if (parsed.kind !== 'lead' && parsed.kind !== 'sale') return null;
    const { v: _v, ...event } = parsed;
    return event;
  } catch {
    return null;
  }
}

/** A customer's events share a partition, in order: the key is the tenant and the customer. */
export const conversionKeyOf = (event: Pick<ConversionEvent, 'tenantId' | 'customerId'>): string => `${event.tenantId}/${event.customerId}`;

export interface KafkaConversionOptions extends KafkaConnectionOptions {
  readonly topic: string;
  readonly partitions?: number;
}

/**
 * Producer side of the conversions topic (docs/analytics.md, "Conversions"): acks from every in-sync
 * replica, awaited by the track call (it answers once the bus holds the event). Opened on first
 * use, the topic created if missing. Concurrent track calls' events share producer requests
 * (SendBatcher): one request, one write and one wait for acks per group instead of per event
 * (docs/benchmarks.md, "Track endpoints"); each call still answers after its own event's acks.
 */
export class KafkaConversionEventSink implements ConversionEventSink {
  private readonly producer: TopicProducer;
  private readonly batcher: SendBatcher<Message>;

  constructor(options: KafkaConversionOptions) {
    this.producer = new TopicProducer(options, '-conversions-producer');
    this.batcher = new SendBatcher<Message>({ send: (messages) => this.producer.send(messages) });
  }

  async send(events: readonly ConversionEvent[]): Promise<void> {
    await this.batcher.send(events.map((e) => ({ key: conversionKeyOf(e), value: encodeConversionEvent(e) })));
  }

  close(): Promise<void> {
    return this.producer.close();
  }
}

export interface KafkaConversionSourceOptions extends KafkaConversionOptions {
  readonly groupId: string;
  /** Pause before a batch whose handler threw is handed over again (default 1000 ms). */
  readonly retryMs?: number;
  /** Where a group without committed offsets starts (default true: the analytics group counts every event). */
  readonly fromBeginning?: boolean;
  /** false: nothing is committed (a live stream's own group, read from the end on every start). Default true. */
  readonly commitOffsets?: boolean;
  /** The group's session (default kafkajs' 30 s); a live group of one member keeps it short. */
  readonly sessionTimeoutMs?: number;
  readonly heartbeatIntervalMs?: number;
}

/**
 * The analytics group on the conversions topic: a partition batch (with its offsets, for the
 * consumer's guards) is committed after the handler resolved; one that throws comes again.
 */
export class KafkaConversionEventSource implements ConversionEventSource {
  private readonly kafka: Kafka;
  private readonly logger: BusLogger;
  private consumer: Consumer | null = null;
  private running = false;

  constructor(private readonly options: KafkaConversionSourceOptions) {
    this.kafka = createKafkaClient(options, { retries: 8, initialRetryTime: 300, maxRetryTime: 5000 }, '-conversions-consumer');
    this.logger = resolveKafkaOptions(options).logger;
  }

  async start(handler: (batch: ConversionBatch) => Promise<void>): Promise<void> {
    this.running = true;
    await ensureClickTopic(this.options.brokers, this.options.topic, this.options.partitions ?? 6, this.options);
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 200,
      ...(this.options.sessionTimeoutMs ? { sessionTimeout: this.options.sessionTimeoutMs } : {}),
      ...(this.options.heartbeatIntervalMs ? { heartbeatInterval: this.options.heartbeatIntervalMs } : {}),
    });
    this.consumer = consumer;
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [this.options.topic], fromBeginning: this.options.fromBeginning ?? true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: (payload) => this.onBatch(payload, handler) });
    } catch (error) {
      this.consumer = null;
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.running = false;
    const consumer = this.consumer;
    this.consumer = null;
    await consumer?.disconnect().catch(() => undefined);
  }

  private async onBatch(payload: EachBatchPayload, handler: (batch: ConversionBatch) => Promise<void>): Promise<void> {
    const { batch, heartbeat, isRunning, isStale, commitOffsetsIfNecessary, resolveOffset } = payload;
    if (!batch.messages.length) return;
    const messages = batch.messages.flatMap((m) => {
      const event = decodeConversionEvent(m.value);
      return event ? [{ offset: m.offset, event }] : [];
    });
    const delivered: ConversionBatch = { source: `kafka:${batch.topic}`, partition: batch.partition, messages };
    for (;;) {
      if (!this.running || !isRunning() || isStale()) return;
      try {
        await handler(delivered);
        break;
      } catch (error) {
        this.logger({ level: 'warn', namespace: 'bus.kafka', message: 'conversion handler failed; the batch comes again', extra: { error: String(error) } });
        await new Promise((r) => setTimeout(r, this.options.retryMs ?? 1000));
        await heartbeat();
      }
    }
    resolveOffset(batch.messages[batch.messages.length - 1].offset);
    if (this.options.commitOffsets === false) return;
    const next = (BigInt(batch.lastOffset()) + 1n).toString();
    await commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }] });
  }
}

/**
 * The embedded twin of the conversions topic: one in-process log (one partition, offsets from 0),
 * one consumer. A batch leaves the log only once the handler resolved for it; one that throws comes
 * again after `retryMs`. The source names this incarnation (`memory:<uuid>`), as the click log does,
 * so progress of an earlier process never hides this one's offsets. Lost with the process.
 */
export class InProcessConversionLog {
  readonly sourceName = `memory:${randomUUID()}`;
  private readonly log: Array<{ offset: string; event: ConversionEvent }> = [];
  private next = 0;
  private handler: ((batch: ConversionBatch) => Promise<void>) | null = null;
  private draining: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly live = new Set<(messages: ConversionBatch['messages']) => void>();

  constructor(private readonly options: { retryMs?: number; batchSize?: number; maxPending?: number } = {}) {}

  readonly sink: ConversionEventSink = {
    send: async (events) => {
      const sent = events.map((event) => ({ offset: String(this.next++), event }));
      for (const m of sent) this.log.push(m);
      for (const listener of this.live) listener(sent);
      const max = this.options.maxPending ?? 100_000;
      if (this.log.length > max) this.log.splice(0, this.log.length - max);
      this.drain();
    },
    close: async () => undefined,
  };

  readonly source: ConversionEventSource = {
    start: async (handler) => {
      if (this.handler) throw new Error('the in-process conversions log has one consumer');
      this.handler = handler;
      this.closed = false;
      this.drain();
    },
    close: async () => {
      this.closed = true;
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      await this.draining;
      this.handler = null;
    },
  };

  /**
   * A live reader of the log (the analytics instance's live stream, docs/design.md "Live click
   * stream"): each event sent from its start on, as it is sent, committing nothing and holding
   * nothing back; the log's own consumer is not affected. A handler that throws loses that batch
   * (the stream is best effort, as the Kafka live group is).
   */
  liveSource(): ConversionEventSource {
    let handler: ((batch: ConversionBatch) => Promise<void>) | null = null;
    const sourceName = `${this.sourceName}.live`;
    const listener = (messages: ConversionBatch['messages']) => {
      const h = handler;
      if (h)
        void Promise.resolve()
          .then(() => h({ source: sourceName, partition: 0, messages }))
          .catch(() => undefined);
    };
    return {
      start: async (h) => {
        handler = h;
        this.live.add(listener);
      },
      close: async () => {
        handler = null;
        this.live.delete(listener);
      },
    };
  }

  /** Settles once everything sent so far was handled (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private drain(): void {
    if (!this.handler || this.draining || this.closed || this.timer) return;
    this.draining = (async () => {
      while (this.log.length && this.handler && !this.closed) {
        const messages = this.log.slice(0, this.options.batchSize ?? 500);
        try {
          await this.handler({ source: this.sourceName, partition: 0, messages });
        } catch {
          this.timer = setTimeout(() => {
            this.timer = null;
            this.drain();
          }, this.options.retryMs ?? 1000);
          this.timer.unref?.();
          return;
        }
        this.log.splice(0, messages.length);
      }
    })().finally(() => {
      this.draining = null;
      if (this.log.length && !this.timer) this.drain();
    });
  }
}
