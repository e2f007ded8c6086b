import { ClickEvent, ClickEventSink } from '@shortlink/clicks-domain';
import { CompressionTypes, Kafka, Partitioners, Producer } from 'kafkajs';
import { byPartition, encodeClickRecord, kafkaPartitionOf } from '../codec';
import { BusLogger } from '../logging';
import { createKafkaClient, KafkaConnectionOptions, resolveKafkaOptions } from './kafka-options';

export interface KafkaClickEventSinkOptions extends KafkaConnectionOptions {
  /**
   * Idempotent producer (default true): the broker drops the duplicates of kafkajs' own retries
   * of a produce request. Works with a single broker (needs acks=-1, one request in flight).
   */
  readonly idempotent?: boolean;
  /** kafkajs retries inside one send (default 2, backoff 100 ms..1 s). Kept low: the caller retries. */
  readonly sendRetries?: number;
  /** Upper bound of one send() including connecting, ms (default 10 000). It never waits longer. */
  readonly sendTimeoutMs?: number;
  /**
   * Default none (KAFKA_CLICK_COMPRESSION): a record is binary with its strings interned already, and
   * gzip, the one codec kafkajs has built in, spent ~12 µs of the redirect's core per click on a
   * flush's few-kilobyte records (zlib's setup per record; docs/benchmarks.md).
   */
  readonly compression?: 'none' | 'gzip';
}

/**
 * Producer side of the click topic on Kafka.
 *
 * - `acks: -1` (all in-sync replicas): clicks are the only record of a redirect's analytics, and
 *   the flusher is off the request path, so waiting for the ISR costs no user latency while a
 *   leader failover loses nothing that was acknowledged. The idempotent producer requires it too.
 * - Partitioned by `${domain}/${code}` with Kafka's default partitioner (murmur2, as the Java
 *   client): a link's clicks stay in one partition, and other tools agree on which.
 * - `send(events)` is one `producer.send` with ONE record per partition holding all its events
 *   (codec.ts), compressed: the Kafka cost is per flush, not per click (docs/analytics.md). The
 *   partition count is read from the topic's metadata when the producer connects.
 * - Fails fast: the connection is opened lazily, connect/request timeouts are short, retries are
 *   few and a deadline bounds the whole call, so a down broker rejects the send within seconds;
 *   the redirect app's buffer keeps the events and retries. After any failed send the producer
 *   is replaced (new connection, new producer id), so kafkajs' idempotent sequence numbers can
 *   never stay out of step with the broker's after an ambiguous failure.
 * - Sends are serialised (kafkajs' idempotent producer needs one batch in flight at a time).
 */
export class KafkaClickEventSink implements ClickEventSink {
  private readonly topic: string;
  private readonly logger: BusLogger;
  private readonly idempotent: boolean;
  private readonly sendTimeoutMs: number;
  private readonly compression: CompressionTypes;
  private readonly kafka: Kafka;
  private producer: Promise<{ producer: Producer; partitions: number }> | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: KafkaClickEventSinkOptions) {
    const resolved = resolveKafkaOptions(options);
    this.topic = resolved.topic;
    this.logger = resolved.logger;
    this.idempotent = options.idempotent ?? true;
    this.sendTimeoutMs = options.sendTimeoutMs ?? 10_000;
    this.compression = options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
    this.kafka = createKafkaClient(options, { retries: options.sendRetries ?? 2, initialRetryTime: 100, maxRetryTime: 1000 }, '-producer');
  }

  send(events: readonly ClickEvent[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('KafkaClickEventSink is closed'));
    if (events.length === 0) return Promise.resolve();
    const run = this.tail.then(() => this.sendNow(events));
    this.tail = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail;
    await this.dropProducer();
  }

  private async sendNow(events: readonly ClickEvent[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`sending ${events.length} click events to Kafka timed out after ${this.sendTimeoutMs} ms`)),
        this.sendTimeoutMs,
      );
    });
    try {
      await Promise.race([this.attempt(events), deadline]);
    } catch (error) {
      // The producer's state is unknown now (maybe half connected, maybe a request in flight):
      // start over with a fresh one on the next send.
      void this.dropProducer();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private async attempt(events: readonly ClickEvent[]): Promise<void> {
    const { producer, partitions } = await this.connectedProducer();
    const now = String(Date.now());
    const messages = [...byPartition(events, (key) => kafkaPartitionOf(key, partitions))].map(([partition, group]) => ({
      partition,
      value: encodeClickRecord(group),
      timestamp: now,
    }));
    await producer.send({ topic: this.topic, acks: -1, compression: this.compression, messages });
  }

  private connectedProducer(): Promise<{ producer: Producer; partitions: number }> {
    if (!this.producer) {
      const producer = this.kafka.producer({
        idempotent: this.idempotent,
        maxInFlightRequests: this.idempotent ? 1 : undefined,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      const connecting = producer.connect().then(async () => ({ producer, partitions: await this.partitionCount() }));
      // A failed connect must not stay cached; the next send tries again.
      connecting.catch(() => {
        if (this.producer === connecting) this.producer = null;
        producer.disconnect().catch(() => undefined);
      });
      this.producer = connecting;
    }
    return this.producer;
  }

  /** Partitions of the topic (the producer has no public metadata call): a short-lived admin client. */
  private async partitionCount(): Promise<number> {
    const admin = this.kafka.admin();
    try {
      await admin.connect();
      const metadata = await admin.fetchTopicMetadata({ topics: [this.topic] });
      const count = metadata.topics[0]?.partitions.length ?? 0;
      if (count < 1) throw new Error(`topic ${this.topic} has no partitions`);
      return count;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  private async dropProducer(): Promise<void> {
    const current = this.producer;
    this.producer = null;
    if (!current) return;
    try {
      const { producer } = await current;
      await producer.disconnect();
    } catch (error) {
      this.logger({ level: 'debug', namespace: 'bus.kafka', message: 'closing the Kafka producer failed', extra: { error: String(error) } });
    }
  }
}
