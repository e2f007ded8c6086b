import { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { PlatformEvent, PlatformEventSink, PlatformEventSource } from '@shortlink/webhooks-domain';
import { BusLogger } from '../logging';
import { createKafkaClient, KafkaConnectionOptions, resolveKafkaOptions } from './kafka-options';
import { ensureClickTopic } from './ensure-click-topic';
import { TopicProducer } from './topic-producer';

const VERSION = 1;

/** A record of the events topic: JSON, versioned; a record of an unknown version is skipped. */
export const encodePlatformEvent = (event: PlatformEvent): string => JSON.stringify({ v: VERSION, ...event });

export function decodePlatformEvent(value: Buffer | null): PlatformEvent | null {
  if (!value) return null;
  try {
    const parsed = JSON.parse(value.toString('utf8')) as { v?: number } & PlatformEvent;
    if (parsed.v !== VERSION || typeof parsed.id !== 'string' || typeof parsed.tenantId !== 'string') return null;
    const { v: _v, ...event } = parsed;
    return event;
  } catch {
    return null;
  }
}

export interface KafkaPlatformEventOptions extends KafkaConnectionOptions {
  readonly topic: string;
  readonly partitions?: number;
}

/**
 * Producer side of the platform's events topic (docs/design.md, "Webhooks"): keyed by tenant, so
 * a tenant's events stay in order; acks from every in-sync replica. Opened on first use, the topic
 * created if missing; the caller (generation, after a write was acknowledged) never waits on a
 * receiver, only on this send.
 */
export class KafkaPlatformEventSink implements PlatformEventSink {
  private readonly producer: TopicProducer;

  constructor(options: KafkaPlatformEventOptions) {
    this.producer = new TopicProducer(options, '-events-producer');
  }

  async publish(events: readonly PlatformEvent[]): Promise<void> {
    if (!events.length) return;
    await this.producer.send(events.map((e) => ({ key: e.tenantId, value: encodePlatformEvent(e) })));
  }

  close(): Promise<void> {
    return this.producer.close();
  }
}

export interface KafkaPlatformEventSourceOptions extends KafkaPlatformEventOptions {
  readonly groupId: string;
  /** Pause before a batch whose handler threw is handed over again (default 1000 ms). */
  readonly retryMs?: number;
}

/**
 * A member of a consumer group on the events topic: a batch's offsets are committed after the
 * handler resolved (at-least-once); a handler that throws gets the batch again after `retryMs`.
 */
export class KafkaPlatformEventSource implements PlatformEventSource {
  private readonly kafka: Kafka;
  private readonly logger: BusLogger;
  private consumer: Consumer | null = null;
  private running = false;

  constructor(private readonly options: KafkaPlatformEventSourceOptions) {
    this.kafka = createKafkaClient(options, { retries: 8, initialRetryTime: 300, maxRetryTime: 5000 }, '-events-consumer');
    this.logger = resolveKafkaOptions(options).logger;
  }

  async start(handler: (events: readonly PlatformEvent[]) => Promise<void>): Promise<void> {
    this.running = true;
    await ensureClickTopic(this.options.brokers, this.options.topic, this.options.partitions ?? 6, this.options);
    const consumer = this.kafka.consumer({ groupId: this.options.groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 200 });
    this.consumer = consumer;
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [this.options.topic], fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: (payload) => this.onBatch(payload, handler) });
    } catch (error) {
      // Startable again: the caller retries a start that failed.
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

  private async onBatch(payload: EachBatchPayload, handler: (events: readonly PlatformEvent[]) => Promise<void>): Promise<void> {
    const { batch, heartbeat, isRunning, isStale, commitOffsetsIfNecessary, resolveOffset } = payload;
    if (!batch.messages.length) return;
    const events = batch.messages.map((m) => decodePlatformEvent(m.value)).filter((e): e is PlatformEvent => e !== null);
    for (;;) {
      if (!this.running || !isRunning() || isStale()) return;
      try {
        await handler(events);
        break;
      } catch (error) {
        this.logger({
          level: 'warn',
          namespace: 'bus.kafka',
          message: 'platform event handler failed; the batch comes again',
          extra: { error: String(error) },
        });
        await new Promise((r) => setTimeout(r, this.options.retryMs ?? 1000));
        await heartbeat();
      }
    }
    resolveOffset(batch.messages[batch.messages.length - 1].offset);
    const next = (BigInt(batch.lastOffset()) + 1n).toString();
    await commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }] });
  }
}
