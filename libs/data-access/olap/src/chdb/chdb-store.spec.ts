import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { SqlClickAggregateStore } from '../click-aggregate-store';
import { aMinuteRow, describeClickAggregateStoreContract, T0 } from '../contract/click-aggregate-store.contract';
import { describeOlapExecutorContract } from '../contract/olap-executor.contract';
import { OlapError } from '../olap-executor';
import { ChdbExecutor } from './chdb-executor';

// libchdb binds one data directory per process: the suites below run one after the other and
// each closes its executor (which waits for the engine to let go) before the next opens.
const tempDir = () => mkdtempSync(join(tmpdir(), 'shortlink-chdb-'));

describeOlapExecutorContract('chdb', async () => {
  const dir = tempDir();
  const executor = new ChdbExecutor(join(dir, 'chdb'));
  return {
    executor,
    database: 'exec_contract',
    close: async () => {
      await executor.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeClickAggregateStoreContract('chdb', async () => {
  const dir = tempDir();
  const store = new SqlClickAggregateStore(new ChdbExecutor(join(dir, 'chdb')));
  return {
    store,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('chdb click aggregate store on disk', () => {
  let dir: string;
  let opened: ChdbExecutor[];
  /** Every executor a test opens is closed after it, pass or fail: a leaked session would hold the process's one chdb directory. */
  const openExecutor = () => {
    const executor = new ChdbExecutor(join(dir, 'chdb'));
    opened.push(executor);
    return executor;
  };
  beforeEach(() => {
    dir = tempDir();
    opened = [];
  });
  afterEach(async () => {
    for (const executor of opened) await executor.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps aggregates, offsets and applied migrations across closing and reopening the directory', async () => {
    const row = aMinuteRow({ clicks: 4, visitor: 3 });
    const q = { tenantId: row.tenantId, domain: row.domain, code: row.code, from: T0, to: T0 + 60 };

    const first = new SqlClickAggregateStore(openExecutor(), 'shortlink');
    await first.migrate();
    await first.write([row], { source: 'memory:a', partition: 2, lastOffset: '9007199254740993' });
    await first.close();

    const executor = openExecutor();
    const again = new SqlClickAggregateStore(executor, 'shortlink');
    const applied = await executor.queryJsonEachRow<{ name: string }>('SELECT name FROM shortlink._migrations ORDER BY name');
    await again.migrate();
    expect(await executor.queryJsonEachRow<{ name: string }>('SELECT name FROM shortlink._migrations ORDER BY name')).toEqual(applied);
    expect(applied.map((r) => r.name)).toEqual(['0001_clicks_minute', '0002_consumer_progress']);
    expect((await again.stats(q)).totals).toEqual({ clicks: 4, visitors: 1 });
    expect((await again.ingestedOffsets('memory:a')).get(2)).toBe(9007199254740993n);
    await again.write([{ ...row, visitor: 8 }], { source: 'memory:a', partition: 2, lastOffset: '9007199254740995' });
    expect((await again.ingestedOffsets('memory:a')).get(2)).toBe(9007199254740995n);
    expect(await again.stats(q)).toEqual({ series: [{ minute: T0, clicks: 8, visitors: 2 }], totals: { clicks: 8, visitors: 2 } });
    await again.close();
  });

  it('reads the progress of a Kafka topic from rows written before 0002 until the topic has its own', async () => {
    const executor = openExecutor();
    const store = new SqlClickAggregateStore(executor, 'legacy');
    await store.migrate();
    // A row as 0001's view wrote it: the offset inside the aggregate.
    await executor.command(
      `INSERT INTO legacy.clicks_minute SELECT 't', 'd', 'c', toDateTime(1709251200), toUInt32(3), sumState(toUInt64(1)), uniqCombinedState(toUInt64(1)), maxState(toUInt64(77)) FROM system.one`,
    );
    await store.write([aMinuteRow()]); // a new row (offset 0) does not read as progress
    expect(await store.ingestedOffsets('kafka:shortlink.clicks')).toEqual(new Map([[3, 77n]]));
    expect(await store.ingestedOffsets('memory:any')).toEqual(new Map());
    await store.write([], { source: 'kafka:shortlink.clicks', partition: 1, lastOffset: '5' });
    expect(await store.ingestedOffsets('kafka:shortlink.clicks')).toEqual(new Map([[1, 5n]]));
  });

  it('serializes concurrent calls on one session and refuses calls after close', async () => {
    const executor = openExecutor();
    const store = new SqlClickAggregateStore(executor, 'concurrent');
    await store.migrate();
    const row = aMinuteRow();
    const q = { tenantId: row.tenantId, domain: row.domain, code: row.code, from: T0, to: T0 + 60 };
    // Issued without awaiting: they run in order, so every write lands before the read.
    const writes = Array.from({ length: 10 }, (_, i) => store.write([{ ...row, visitor: i }], { source: 'memory:c', partition: 0, lastOffset: String(i) }));
    const read = store.stats(q);
    await Promise.all(writes);
    expect((await read).totals).toEqual({ clicks: 10, visitors: 10 });
    const closing = store.close();
    await expect(executor.ping()).rejects.toBeInstanceOf(OlapError);
    await closing;
    await expect(store.close()).resolves.toBeUndefined();
  });

  it('reports chdb errors as OlapError naming the statement', async () => {
    const executor = openExecutor();
    await expect(executor.command('CREATE TABLE nope.t (a UInt8) ENGINE = Memory')).rejects.toThrow(/chdb error 81 on "CREATE TABLE nope\.t/);
  });
});
