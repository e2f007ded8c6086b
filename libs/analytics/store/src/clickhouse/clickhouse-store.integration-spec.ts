import { randomUUID } from 'crypto';
import { requireEnv } from '@shortlink/testing';
import { SqlClickAggregateStore } from '../click-aggregate-store';
import { describeClickAggregateStoreContract } from '../contract/click-aggregate-store.contract';
import { describeOlapExecutorContract } from '../contract/olap-executor.contract';
import { OlapError } from '../olap-executor';
import { ClickHouseExecutor, ClickHouseExecutorOptions } from './clickhouse-executor';

// Runs against a real ClickHouse server (18.16 in the stack): CLICKHOUSE_URL, optional
// CLICKHOUSE_USER / CLICKHOUSE_PASSWORD. Each suite works in its own database, dropped afterwards.
const options = (): ClickHouseExecutorOptions => ({
  url: requireEnv('CLICKHOUSE_URL'),
  username: process.env.CLICKHOUSE_USER || undefined,
  password: process.env.CLICKHOUSE_PASSWORD || undefined,
});
const testDatabase = () => `shortlink_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

describeOlapExecutorContract('clickhouse server', async () => {
  const database = testDatabase();
  const executor = new ClickHouseExecutor(options());
  return {
    executor,
    database,
    close: async () => {
      await executor.command(`DROP DATABASE IF EXISTS ${database}`);
      await executor.close();
    },
  };
});

describeClickAggregateStoreContract('clickhouse server', async () => {
  const database = testDatabase();
  const executor = new ClickHouseExecutor(options());
  const store = new SqlClickAggregateStore(executor, database);
  return {
    store,
    close: async () => {
      await executor.command(`DROP DATABASE IF EXISTS ${database}`);
      await store.close();
    },
  };
});

describe('clickhouse server executor', () => {
  it('reports an unreachable server as OlapError without credentials in the message', async () => {
    const executor = new ClickHouseExecutor({ url: 'http://someone:s3cret@127.0.0.1:1', requestTimeoutMs: 2000 });
    try {
      const err = await executor.ping().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OlapError);
      expect((err as Error).message).toMatch(/unreachable|failed/);
      expect((err as Error).message).not.toContain('s3cret');
    } finally {
      await executor.close();
    }
  });

  it('refuses calls after close', async () => {
    const executor = new ClickHouseExecutor(options());
    await executor.ping();
    await executor.close();
    await expect(executor.ping()).rejects.toBeInstanceOf(OlapError);
  });
});
