/** The click topic of the Kafka-bus cases: one per invocation, created before the first such case, deleted at the end. */
import { Kafka, logLevel } from 'kafkajs';
import { ensureClickTopic } from '@shortlink/bus';
import { BenchContext } from './context';

/** Brokers and partitions from the stack's env; the redirect's producer does not create topics. */
export async function ensureBenchTopic(ctx: BenchContext, stackEnv: Record<string, string>): Promise<Record<string, string>> {
  const brokers = stackEnv.KAFKA_BROKERS;
  if (!brokers) throw new Error('KAFKA_BROKERS is not in the stack env');
  const partitions = stackEnv.KAFKA_CLICK_PARTITIONS || '6';
  if (!ctx.kafka.brokers) {
    const r = await ensureClickTopic(brokers.split(','), ctx.kafka.topic, Number(partitions));
    ctx.kafka.brokers = brokers.split(',');
    ctx.log(`kafka: topic ${ctx.kafka.topic} ${r.created ? 'created' : 'exists'} (${r.partitions} partitions)`);
  }
  return { BUS_DRIVER: 'kafka', KAFKA_BROKERS: brokers, KAFKA_CLICK_TOPIC: ctx.kafka.topic, KAFKA_CLICK_PARTITIONS: partitions };
}

/** Deletes the invocation's topic, if one was made; a failure is logged, not thrown. */
export async function deleteBenchTopic(ctx: BenchContext): Promise<void> {
  if (!ctx.kafka.brokers) return;
  const admin = new Kafka({ brokers: ctx.kafka.brokers, clientId: 'shortlink-bench-cleanup', logLevel: logLevel.NOTHING }).admin();
  try {
    await admin.connect();
    await admin.deleteTopics({ topics: [ctx.kafka.topic], timeout: 10_000 });
    ctx.log(`kafka: topic ${ctx.kafka.topic} deleted`);
  } catch (e) {
    ctx.log(`kafka: could not delete topic ${ctx.kafka.topic}: ${(e as Error).message}`);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
