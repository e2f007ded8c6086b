import { DomainError, ErrorCode } from '@shortlink/core';
import { RawRow, readRows } from './row-reader';

const limits = { maxRows: 1000, maxRowBytes: 64 };

/** The body cut into pieces of `size` bytes (a row, a multi-byte character or an escape may straddle two). */
async function* pieces(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function read(text: string, type: string, size = 3, l = limits): Promise<string[]> {
  const out: string[] = [];
  for await (const row of readRows(pieces(text, size), type, l)) out.push(show(row));
  return out;
}

const show = (row: RawRow) => ('text' in row ? `${row.index}:${row.text.trim()}` : `${row.index}!${row.error.code}`);

describe('readRows', () => {
  for (const size of [1, 2, 7, 4096]) {
    it(`splits NDJSON lines in pieces of ${size} bytes, skipping blank lines and CRs`, async () => {
      expect(await read('{"url":"https://ä.example/1"}\r\n\n{"url":"x\\n"}\n  \n{"a":1}', 'application/x-ndjson', size)).toEqual([
        '0:{"url":"https://ä.example/1"}',
        '1:{"url":"x\\n"}',
        '2:{"a":1}',
      ]);
    });

    it(`splits a JSON array in pieces of ${size} bytes: strings with brackets, commas and escaped quotes stay whole`, async () => {
      const body = ' [ {"url":"a,]\\"}[", "tags":["x","y"]} ,\n{"url":"ü"}, 7 ] \n';
      expect(await read(body, 'application/json', size)).toEqual(['0:{"url":"a,]\\"}[", "tags":["x","y"]}', '1:{"url":"ü"}', '2:7']);
    });
  }

  it('reads an empty array and an empty NDJSON body as no rows', async () => {
    expect(await read('[]', 'application/json')).toEqual([]);
    expect(await read(' [ \n ] ', 'application/json')).toEqual([]);
    expect(await read('', 'application/x-ndjson')).toEqual([]);
  });

  it('fails a row longer than the limit alone', async () => {
    const long = `{"url":"${'x'.repeat(100)}"}`;
    expect(await read(`{"a":1}\n${long}\n{"b":2}`, 'application/x-ndjson')).toEqual(['0:{"a":1}', '1!PAYLOAD_TOO_LARGE', '2:{"b":2}']);
    expect(await read(`[{"a":1},${long},{"b":2}]`, 'application/json')).toEqual(['0:{"a":1}', '1!PAYLOAD_TOO_LARGE', '2:{"b":2}']);
  });

  it('ends a broken array with one INVALID_JSON row', async () => {
    expect(await read('{"url":"x"}', 'application/json')).toEqual(['0!INVALID_JSON']);
    expect(await read('[{"a":1},,{"b":2}]', 'application/json')).toEqual(['0:{"a":1}', '1!INVALID_JSON']);
    expect(await read('[{"a":1}] trailing', 'application/json')).toEqual(['0:{"a":1}', '1!INVALID_JSON']);
    expect(await read('[{"a":1},{"b":', 'application/json')).toEqual(['0:{"a":1}', '1!INVALID_JSON']);
    expect(await read('[{"a":1},]', 'application/json')).toEqual(['0:{"a":1}', '1!INVALID_JSON']);
    expect(await read('', 'application/json')).toEqual(['0!INVALID_JSON']);
  });

  it('stops after the row limit with one BATCH_TOO_LARGE row', async () => {
    const body = Array.from({ length: 10 }, (_, i) => `{"i":${i}}`).join('\n');
    expect(await read(body, 'application/x-ndjson', 5, { ...limits, maxRows: 3 })).toEqual(['0:{"i":0}', '1:{"i":1}', '2:{"i":2}', '3!BATCH_TOO_LARGE']);
    expect(await read(body, 'application/x-ndjson', 5, { ...limits, maxRows: 10 })).toHaveLength(10);
  });

  it('gives the row being read the error of a body that is too large, and fails when the body is cut off', async () => {
    async function* failing(error: Error): AsyncGenerator<Buffer> {
      yield Buffer.from('{"a":1}\n{"b"');
      throw error;
    }
    const read = async (error: Error) => {
      const out: string[] = [];
      for await (const row of readRows(failing(error), 'application/x-ndjson', limits)) out.push(show(row));
      return out;
    };
    expect(await read(new DomainError(ErrorCode.PAYLOAD_TOO_LARGE, 'large'))).toEqual(['0:{"a":1}', '1!PAYLOAD_TOO_LARGE']);
    await expect(read(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))).rejects.toMatchObject({
      code: 'INVALID_JSON',
      message: expect.stringContaining('cut off'),
    });
  });
});
