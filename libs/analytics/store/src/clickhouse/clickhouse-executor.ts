import { ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { Readable } from 'stream';
import { RequestDeadline } from '@shortlink/core';
import { assertQualifiedTable, columnNames, OlapColumn, OlapError, OlapExecutor, statementHead } from '../olap-executor';

export interface ClickHouseExecutorOptions {
  /** HTTP interface, e.g. http://127.0.0.1:8123. */
  url: string;
  username?: string;
  password?: string;
  /** Per-request timeout, ms (client default 30 s). */
  requestTimeoutMs?: number;
}

/**
 * Per query only, never in createClient: a setting the server does not know fails every request
 * on 18.16. This one exists on 18.16 (where it is already the default) and on current servers.
 */
const QUOTED_64BIT = { output_format_json_quote_64bit_integers: 1 } as const;

/** OlapExecutor over a ClickHouse server's HTTP interface (18.16 and later) via @clickhouse/client. */
export class ClickHouseExecutor implements OlapExecutor {
  private readonly client: ClickHouseClient;
  private readonly where: string;
  private closed = false;

  constructor(options: ClickHouseExecutorOptions) {
    this.where = redactUrl(options.url);
    this.client = createClient({
      url: options.url,
      username: options.username,
      password: options.password,
      request_timeout: options.requestTimeoutMs,
      // A connection per request. ClickHouse closes an idle keep-alive connection after
      // keep_alive_timeout (3 s by default, 18.16 too); on a busy machine a process paused between
      // checking a pooled socket and writing to it reuses one the server closed (ECONNRESET, EPIPE:
      // a consumer's batch redelivered, measured several times a run with the machine saturated),
      // which no client-side TTL rules out. A new connection costs ~0.2 ms on the same host.
      keep_alive: { enabled: false },
      // Failures are thrown as OlapError below; the client's own ERROR log would say it twice.
      log: { level: ClickHouseLogLevel.OFF },
    });
  }

  async command(sql: string): Promise<void> {
    this.assertOpen();
    try {
      await this.client.command({ query: sql });
    } catch (e) {
      throw toOlapError(e, sql, this.where);
    }
  }

  async insertJsonEachRow(table: string, rows: readonly object[]): Promise<void> {
    this.assertOpen();
    assertQualifiedTable(table);
    if (rows.length === 0) return;
    try {
      await this.client.insert({ table, values: rows as object[], format: 'JSONEachRow' });
    } catch (e) {
      throw toOlapError(e, `INSERT INTO ${table} FORMAT JSONEachRow`, this.where);
    }
  }

  async insertRowBinary(table: string, columns: readonly OlapColumn[], rows: Buffer): Promise<void> {
    this.assertOpen();
    assertQualifiedTable(table);
    const query = `INSERT INTO ${table} (${columnNames(columns)}) FORMAT RowBinary`;
    if (rows.length === 0) return;
    try {
      // The client's insert() takes JSON and text formats only; exec() streams any body (docs/design.md, "Analytics").
      const result = await this.client.exec({ query, values: Readable.from([rows]) });
      await drain(result.stream);
    } catch (e) {
      throw toOlapError(e, query, this.where);
    }
  }

  async queryJsonEachRow<T>(sql: string): Promise<T[]> {
    this.assertOpen();
    try {
      // A query for a request gets no longer than what is left of the request's deadline (docs/design.md, "Overload").
      const left = RequestDeadline.remainingMs();
      const abort_signal = Number.isFinite(left) ? AbortSignal.timeout(Math.max(1, Math.ceil(left))) : undefined;
      const result = await this.client.query({ query: sql, format: 'JSONEachRow', clickhouse_settings: QUOTED_64BIT, abort_signal });
      return await result.json<T>();
    } catch (e) {
      throw toOlapError(e, sql, this.where);
    }
  }

  async ping(): Promise<void> {
    // A real query rather than /ping: /ping answers without checking the credentials.
    await this.queryJsonEachRow<{ ok: number }>('SELECT 1 AS ok');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new OlapError(`ClickHouse executor for ${this.where} is closed`, 'clickhouse', undefined);
  }
}

/** Reads a response to its end (an insert answers nothing), so the socket goes back to the pool. */
function drain(stream: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.on('error', reject);
    stream.on('end', resolve);
    stream.resume();
  });
}

/**
 * 18.16 answers errors as `Code: 62, e.displayText() = DB::Exception: <text>, e.what() = DB::Exception`,
 * which @clickhouse/client 1.x does not recognise (plain Error, no code); newer servers answer
 * `Code: 62. DB::Exception: <text>. (SYNTAX_ERROR) (version ...)`, which it turns into a
 * ClickHouseError with a string code. Both become one OlapError: code plus the bare text.
 */
export function toOlapError(error: unknown, sql: string, where: string): OlapError {
  if (error instanceof OlapError) return error;
  const err = error instanceof Error ? error : new Error(String(error));
  const parsed = parseServerError(err);
  if (parsed) {
    return new OlapError(`ClickHouse error ${parsed.code} on "${statementHead(sql)}": ${parsed.text}`, 'clickhouse', parsed.code, { cause: err });
  }
  const sysCode = (err as NodeJS.ErrnoException).code;
  if (typeof sysCode === 'string' && /^E[A-Z]+$/.test(sysCode)) {
    return new OlapError(`ClickHouse at ${where} is unreachable (${sysCode}): ${err.message}`, 'clickhouse', undefined, { cause: err });
  }
  return new OlapError(`ClickHouse request to ${where} failed on "${statementHead(sql)}": ${err.message}`, 'clickhouse', undefined, { cause: err });
}

function parseServerError(err: Error): { code: number; text: string } | undefined {
  const m = /^\s*Code:\s*(\d+)[.,]\s*(?:e\.displayText\(\) = )?(?:DB::Exception: )?([\s\S]*?)(?:, e\.what\(\) = [\s\S]*)?\s*$/.exec(err.message);
  if (m) return { code: Number(m[1]), text: m[2].trim() };
  const code = (err as { code?: unknown }).code;
  if (err.name === 'ClickHouseError' && typeof code === 'string' && /^\d+$/.test(code)) {
    return { code: Number(code), text: err.message.trim() };
  }
  return undefined;
}

/** The URL without credentials, for messages. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '<invalid url>';
  }
}
