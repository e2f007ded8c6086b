import { Message, Producer } from 'kafkajs';
import { ensureClickTopic } from './ensure-click-topic';
import { createKafkaClient, KafkaConnectionOptions } from './kafka-options';

export interface TopicProducerOptions extends KafkaConnectionOptions {
  readonly topic: string;
  readonly partitions?: number;
}

/**
 * A producer of one topic, opened on first send with the topic created if missing (a failed open
 * is tried again by the next send), acks from every in-sync replica: the events and conversions
 * sinks' shared producer side.
 */
export class TopicProducer {
  private readonly kafka;
  private producer: Promise<Producer> | null = null;

  constructor(
    private readonly options: TopicProducerOptions,
    clientSuffix: string,
  ) {
    this.kafka = createKafkaClient(options, { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 }, clientSuffix);
  }

  async send(messages: Message[]): Promise<void> {
    const producer = await this.connect();
    await producer.send({ topic: this.options.topic, acks: -1, messages });
  }

  async close(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    await producer?.then((p) => p.disconnect()).catch(() => undefined);
  }

  private connect(): Promise<Producer> {
    this.producer ??= (async () => {
      await ensureClickTopic(this.options.brokers, this.options.topic, this.options.partitions ?? 6, this.options);
      const producer = this.kafka.producer({ allowAutoTopicCreation: false });
      await producer.connect();
      return producer;
    })().catch((error) => {
      this.producer = null;
      throw error;
    });
    return this.producer;
  }
}
