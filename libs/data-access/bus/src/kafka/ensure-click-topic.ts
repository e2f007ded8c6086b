import { createKafkaClient, KafkaConnectionOptions, resolveKafkaOptions } from './kafka-options';

export interface EnsureClickTopicOptions extends Omit<KafkaConnectionOptions, 'brokers' | 'topic'> {
  /** Default -1: the broker's default.replication.factor (1 on the local single broker). */
  readonly replicationFactor?: number;
  /** Topic configs for a topic that is created, e.g. `{ 'retention.ms': '604800000' }`. */
  readonly configEntries?: Readonly<Record<string, string>>;
}

export interface EnsureClickTopicResult {
  readonly created: boolean;
  /** Partitions the topic has now (an existing topic keeps its count: more would move keys). */
  readonly partitions: number;
}

/**
 * Creates the click topic when it is missing; idempotent (an existing topic, also one created by
 * a concurrent caller, is left as it is). Resolves once the partitions have leaders.
 */
export async function ensureClickTopic(
  brokers: readonly string[] | string,
  topic: string,
  partitions: number,
  options: EnsureClickTopicOptions = {},
): Promise<EnsureClickTopicResult> {
  if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
  const connection: KafkaConnectionOptions = { ...options, brokers, topic };
  const { logger } = resolveKafkaOptions(connection);
  const admin = createKafkaClient(connection, { retries: 5, initialRetryTime: 200, maxRetryTime: 2000 }, '-admin').admin();
  try {
    // Inside the try: a failed connect must still disconnect, or its sockets and timers outlive the call.
    await admin.connect();
    // Look first: creating an existing topic works too, but makes the broker answer with an error.
    const exists = (await admin.listTopics()).includes(topic);
    const created =
      !exists &&
      (await admin.createTopics({
        waitForLeaders: true,
        topics: [
          {
            topic,
            numPartitions: partitions,
            replicationFactor: options.replicationFactor ?? -1,
            configEntries: Object.entries(options.configEntries ?? {}).map(([name, value]) => ({ name, value })),
          },
        ],
      }));
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    const actual = metadata.topics[0]?.partitions.length ?? 0;
    if (!created && actual !== partitions) {
      logger({ level: 'warn', namespace: 'bus.kafka', message: `topic ${topic} exists with ${actual} partitions (asked for ${partitions}); left unchanged` });
    }
    return { created, partitions: actual };
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
