import { randomUUID } from 'crypto';
import { OlapError, OlapExecutor } from '../olap-executor';
import { sqlString } from '../sql-literals';

export interface OlapExecutorFixture {
  executor: OlapExecutor;
  /** A database the suite may create tables in (created by the suite if missing). */
  database: string;
  close(): Promise<void>;
}

/** What the stores rely on from an executor, identical on the server and on chdb. */
export function describeOlapExecutorContract(backend: string, open: () => Promise<OlapExecutorFixture>) {
  describe(`olap executor contract: ${backend}`, () => {
    let f: OlapExecutorFixture;
    let x: OlapExecutor;
    let table: string;
    beforeAll(async () => {
      f = await open();
      x = f.executor;
      table = `${f.database}.exec_contract_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
      await x.command(`CREATE DATABASE IF NOT EXISTS ${f.database}`);
      await x.command(`CREATE TABLE ${table} (k String, n UInt64, small UInt32, at DateTime('UTC')) ENGINE = MergeTree() ORDER BY k`);
    });
    afterAll(async () => {
      await x?.command(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
      await f?.close();
    });

    it('returns 64-bit integers as decimal strings and 32-bit ones as numbers', async () => {
      const rows = await x.queryJsonEachRow<{ big: unknown; max: unknown; small: unknown }>(
        `SELECT toUInt64(9007199254740993) AS big, toUInt64('18446744073709551615') AS max, toUInt32(7) AS small`,
      );
      expect(rows).toEqual([{ big: '9007199254740993', max: '18446744073709551615', small: 7 }]);
    });

    it('returns rows in the order of ORDER BY and an empty array for no rows', async () => {
      const rows = await x.queryJsonEachRow<{ n: string }>('SELECT number AS n FROM system.numbers LIMIT 3');
      expect(rows.map((r) => Number(r.n))).toEqual([0, 1, 2]);
      expect(await x.queryJsonEachRow(`SELECT 1 AS one FROM system.one WHERE 0`)).toEqual([]);
    });

    it('round-trips string literals with quotes, backslashes, control characters and non-ASCII', async () => {
      const values = ["a'b\\c", "\\'", 'x\\', "'; DROP TABLE t; --", 'line1\nline2\r\n\ttab', 'nul\0byte', 'ünïcode 😀', '', '\\n literally'];
      for (const v of values) {
        const rows = await x.queryJsonEachRow<{ s: string }>(`SELECT ${sqlString(v)} AS s`);
        expect(rows).toEqual([{ s: v }]);
      }
    });

    it('inserts JSONEachRow rows: strings verbatim, UInt64 from a decimal string, DateTime from epoch seconds', async () => {
      await x.insertJsonEachRow(table, [
        { k: "q'uo\\te\n😀", n: '18446744073709551615', small: 1, at: 1709251200 },
        { k: 'plain', n: 42, small: 2, at: 1709251260 },
      ]);
      const rows = await x.queryJsonEachRow<{ k: string; n: string; small: number; ts: number }>(
        `SELECT k, n, small, toUnixTimestamp(at) AS ts FROM ${table} ORDER BY small`,
      );
      expect(rows).toEqual([
        { k: "q'uo\\te\n😀", n: '18446744073709551615', small: 1, ts: 1709251200 },
        { k: 'plain', n: '42', small: 2, ts: 1709251260 },
      ]);
    });

    it('treats an insert of no rows as a no-op', async () => {
      await expect(x.insertJsonEachRow(table, [])).resolves.toBeUndefined();
    });

    it('refuses table names that are not database.table identifiers', async () => {
      await expect(x.insertJsonEachRow('t; DROP TABLE x', [{ k: 'a' }])).rejects.toThrow(/database\.table/);
    });

    it('maps engine errors to OlapError with the ClickHouse code and a readable message', async () => {
      const syntax = await x.command('SELEC 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(syntax).toBeInstanceOf(OlapError);
      expect((syntax as OlapError).clickhouseCode).toBe(62);
      expect((syntax as OlapError).message).toMatch(/Syntax error/);
      expect((syntax as OlapError).message).not.toMatch(/e\.what\(\)|e\.displayText/);

      const unknown = await x.queryJsonEachRow(`SELECT * FROM ${f.database}.no_such_table_here`).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(unknown).toBeInstanceOf(OlapError);
      expect((unknown as OlapError).clickhouseCode).toBe(60);
      expect((unknown as OlapError).message).toMatch(/no_such_table_here/);
    });

    it('answers ping', async () => {
      await expect(x.ping()).resolves.toBeUndefined();
    });
  });
}
