import { randomUUID } from 'crypto';
import { ClickHouseClient, createClient } from '@clickhouse/client';
import { Kafka, logLevel } from 'kafkajs';
import { ensureClickTopic, KafkaClickEventSink } from '@shortlink/bus';
import { ClickEvent } from '@shortlink/clicks-domain';
import { App, serverSecrets, startApp } from '@shortlink/harness';
import { requireEnv } from '@shortlink/testing';
import { BROWSER_UA } from '../e2e/support';
import { API_KEY } from './support';

/**
 * What an analytics resilience spec runs on: a click topic and a ClickHouse database of its own on the
 * real stack, the real producer, a ClickHouse client to read the truth with, and the analytics
 * consumers it starts. `close` stops the consumers and drops the topic and the database.
 */
export class AnalyticsRig {
  readonly topic: string;
  readonly database: string;
  readonly apps: App[] = [];
  readonly env: Record<string, string>;
  readonly sink: KafkaClickEventSink;
  readonly ch: ClickHouseClient;

  /** `name`: the spec's, in the topic, the database and the Kafka client ids. */
  constructor(private readonly name: string) {
    const run = Date.now().toString(36);
    this.topic = `shortlink.clicks.${name}.${run}`;
    this.database = `shortlink_${name.replace(/-/g, '_')}_${run}`;
    this.env = {
      DB_DRIVER: 'mysql',
      CACHE_DRIVER: 'redis',
      BUS_DRIVER: 'kafka',
      OLAP_DRIVER: 'clickhouse',
      LOG_LEVEL: 'warn',
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      ...serverSecrets(),
      KAFKA_CLICK_TOPIC: this.topic,
      KAFKA_CONSUMER_GROUP: `${this.topic}.analytics`,
      CLICKHOUSE_DATABASE: this.database,
      // A killed member's partitions are given to its successor once this session has expired.
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      // The six partitions in flight at once (the default, named here): a kill lands with several batches half done.
      ANALYTICS_CONSUMER_CONCURRENCY: '6',
    };
    this.sink = new KafkaClickEventSink({ brokers: requireEnv('KAFKA_BROKERS'), topic: this.topic, clientId: `${name}-test`, logLevel: 'nothing' });
    this.ch = createClient({
      url: requireEnv('CLICKHOUSE_URL'),
      username: process.env.CLICKHOUSE_USER || 'default',
      password: process.env.CLICKHOUSE_PASSWORD || '',
    });
  }

  /** The topic, with the partitions the apps use. */
  async open(): Promise<void> {
    await ensureClickTopic(requireEnv('KAFKA_BROKERS').split(','), this.topic, 6);
  }

  async startAnalytics(): Promise<App> {
    const app = await startApp('analytics', this.env, { timeoutMs: 60_000 });
    this.apps.push(app);
    return app;
  }

  async query<T>(sql: string): Promise<T[]> {
    return (await (await this.ch.query({ query: sql, format: 'JSONEachRow' })).json()) as T[];
  }

  async stopApps(): Promise<void> {
    await Promise.all(this.apps.splice(0).map((a) => a.stop()));
  }

  /** After the spec restored every server: ClickHouse must be up to drop the database. */
  async close(): Promise<void> {
    await this.stopApps();
    await this.sink.close();
    await this.ch.command({ query: `DROP DATABASE IF EXISTS ${this.database}` }).catch(() => undefined);
    await this.ch.close();
    const admin = new Kafka({ brokers: requireEnv('KAFKA_BROKERS').split(','), clientId: `${this.name}-cleanup`, logLevel: logLevel.NOTHING }).admin();
    await admin
      .connect()
      .then(() => admin.deleteTopics({ topics: [this.topic], timeout: 10_000 }))
      .catch(() => undefined)
      .finally(() => admin.disconnect());
  }
}

/** Events of one tenant from one producer, numbered from 0 like a redirect process numbers its clicks: 40 links, 7919 visitors. */
export function producerOf(tenantId: string, domain: string): (n: number) => ClickEvent[] {
  const producer = randomUUID().slice(0, 16);
  let seq = 0;
  return (n) =>
    Array.from({ length: n }, () => {
      const i = seq++;
      return {
        producer,
        seq: i,
        kind: 'click',
        occurredAt: Date.now(),
        tenantId,
        linkId: String(i % 40),
        domain,
        code: `code${i % 40}`,
        visitor: i % 7919,
        country: i % 3 === 0 ? 'DE' : 'US',
        region: null,
        city: null,
        source: 'link',
        refererHost: i % 2 === 0 ? null : 'news.example',
        userAgent: BROWSER_UA,
        variant: null,
      };
    });
}
