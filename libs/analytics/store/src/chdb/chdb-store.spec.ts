import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { rollupsOfVisitorRows } from '@shortlink/clicks-domain';
import { SqlClickAggregateStore } from '../click-aggregate-store';
import { CLICK_MIGRATIONS } from '../migrations';
import { aVisitorRow, describeClickAggregateStoreContract, T0 } from '../contract/click-aggregate-store.contract';
import { describeOlapExecutorContract } from '../contract/olap-executor.contract';
import { OlapError } from '../olap-executor';
import { ChdbExecutor } from './chdb-executor';

// chdb maps a ~150 MB engine on first use: under a busy unit tier (parallel workers, 2 cores) that alone can take seconds.
jest.setTimeout(60_000);

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
    const row = aVisitorRow({ clicks: 4, visitor: 3 });
    const q = { tenantId: row.tenantId, domain: row.domain, code: row.code };
    const r = { from: T0, to: T0 + 60, granularity: 'minute' as const, bots: 'exclude' as const };

    const first = new SqlClickAggregateStore(openExecutor(), 'shortlink');
    await first.migrate();
    await first.write({ rollups: rollupsOfVisitorRows([row]) });
    await first.commit({ source: 'memory:a', partition: 2, lastOffset: '9007199254740993' }, []);
    await first.close();

    const executor = openExecutor();
    const again = new SqlClickAggregateStore(executor, 'shortlink');
    const applied = await executor.queryJsonEachRow<{ name: string }>('SELECT name FROM shortlink._migrations ORDER BY name');
    await again.migrate();
    expect(await executor.queryJsonEachRow<{ name: string }>('SELECT name FROM shortlink._migrations ORDER BY name')).toEqual(applied);
    expect(applied.map((m) => m.name)).toEqual([
      '0001_clicks_minute',
      '0002_consumer_progress',
      '0003_rollups_dimensions_marks',
      '0004_visits_and_ledgers',
      '0005_rollup_input',
      '0006_conversions',
      '0007_conversion_dimensions',
    ]);
    expect((await again.series(q, r)).totals).toEqual({ clicks: 4, visitors: 1, botClicks: 0 });
    expect((await again.ingestedOffsets('memory:a')).get(2)).toBe(9007199254740993n);
    await again.write({ rollups: rollupsOfVisitorRows([{ ...row, visitor: 8 }]) });
    await again.commit({ source: 'memory:a', partition: 2, lastOffset: '9007199254740995' }, []);
    expect((await again.ingestedOffsets('memory:a')).get(2)).toBe(9007199254740995n);
    expect(await again.series(q, r)).toEqual({
      series: [{ time: T0, clicks: 8, visitors: 2, botClicks: 0 }],
      totals: { clicks: 8, visitors: 2, botClicks: 0 },
    });
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
    await store.write({ rollups: rollupsOfVisitorRows([aVisitorRow()]) }); // a new row (offset 0) does not read as progress
    expect(await store.ingestedOffsets('kafka:shortlink.clicks')).toEqual(new Map([[3, 77n]]));
    expect(await store.ingestedOffsets('memory:any')).toEqual(new Map());
    await store.commit({ source: 'kafka:shortlink.clicks', partition: 1, lastOffset: '5' }, []);
    expect(await store.ingestedOffsets('kafka:shortlink.clicks')).toEqual(new Map([[1, 5n]]));
  });

  it('migration 0003 copies the aggregates of the earlier schema into the minute, hour and day tables, once', async () => {
    const executor = openExecutor();
    const before = new SqlClickAggregateStore(executor, 'upgrade', CLICK_MIGRATIONS.slice(0, 2));
    await before.migrate();
    for (const [minute, visitor, clicks] of [
      [T0, 1, 2],
      [T0 + 60, 2, 3],
      [T0 + 3600, 1, 4],
    ]) {
      await executor.command(
        `INSERT INTO upgrade.clicks_minute SELECT 't', 'd', 'c', toDateTime(${minute}), toUInt32(0), sumState(toUInt64(${clicks})), uniqCombinedState(toUInt64(${visitor})), maxState(toUInt64(0)) FROM system.one`,
      );
    }
    const after = new SqlClickAggregateStore(executor, 'upgrade');
    await after.migrate();
    await after.migrate();
    const scope = { tenantId: 't', domain: 'd', code: 'c' };
    for (const granularity of ['minute', 'hour', 'day'] as const) {
      expect((await after.series(scope, { from: T0, to: T0 + 86_400, granularity, bots: 'exclude' })).totals).toEqual({ clicks: 9, visitors: 2, botClicks: 0 });
    }
    expect((await after.series(scope, { from: T0, to: T0 + 86_400, granularity: 'hour', bots: 'exclude' })).series.map((p) => p.clicks)).toEqual([5, 4]);
  });

  it('serializes concurrent calls on one session and refuses calls after close', async () => {
    const executor = openExecutor();
    const store = new SqlClickAggregateStore(executor, 'concurrent');
    await store.migrate();
    const row = aVisitorRow();
    const q = { tenantId: row.tenantId, domain: row.domain, code: row.code };
    // Issued without awaiting: they run in order, so every write lands before the read.
    const writes = Array.from({ length: 10 }, (_, i) =>
      store.write({ rollups: rollupsOfVisitorRows([{ ...row, visitor: i }]), through: { source: 'memory:c', partition: 0, lastOffset: String(i) } }),
    );
    const read = store.series(q, { from: T0, to: T0 + 60, granularity: 'minute', bots: 'exclude' });
    await Promise.all(writes);
    expect((await read).totals).toEqual({ clicks: 10, visitors: 10, botClicks: 0 });
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
