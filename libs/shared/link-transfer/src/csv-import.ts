import { createHash } from 'crypto';
import { createReadStream, readFileSync } from 'fs';
import { request as httpRequest, IncomingMessage } from 'http';
import { request as httpsRequest } from 'https';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify';
import type { Writable } from 'stream';
import { finished } from 'stream/promises';
import { guardCell } from './csv-cells';
import { CsvRecord, detectFormat, Format, kuttRecords, MapOptions, mapRecord, normaliseHeader } from './formats';

export interface ImportOptions extends Partial<MapOptions> {
  /** Base URL of the generation API, e.g. http://127.0.0.1:8081. */
  readonly api: string;
  readonly apiKey: string;
  readonly file: string;
  /** The results CSV: row, status, code, shortUrl, error, note. */
  readonly results: Writable;
  /** Default: told by the header (or .json: Kutt). */
  readonly format?: Format;
  /** Rows per request (the API takes up to 100 000). */
  readonly batchRows?: number;
  /** Default: derived from the file's content and the options that change its rows (importKey), so running the same import again creates nothing twice. */
  readonly idempotencyKey?: string;
  /** Attempts per request after a lost connection, a 503 or a 409 (the same key: nothing twice). */
  readonly retries?: number;
  readonly onProgress?: (p: ImportProgress) => void;
  /** Called before a retry, with why. */
  readonly onRetry?: (why: string, waitMs: number) => void;
}

export interface ImportProgress {
  /** Rows in the file (known after a first pass). */
  readonly total: number;
  readonly answered: number;
  readonly created: number;
  readonly failed: number;
}

export interface ImportSummary extends ImportProgress {
  readonly format: Format;
  readonly idempotencyKey: string;
  /** Rows created less open than their source (disabled), each with a note in the results saying why. */
  readonly noted: number;
}

/**
 * The default Idempotency-Key of an import: the file's SHA-256 and what changes the rows made of it
 * (the format they are read as, --no-codes, --keep-domains). The same file with the same options is
 * the same batch (a retry creates nothing twice); with other options it is another batch, not a
 * reuse of the key (422).
 */
export function importKey(fileSha256: string, format: Format, options: MapOptions): string {
  const rows = JSON.stringify({ format, keepCodes: options.keepCodes, keepDomains: options.keepDomains });
  return `import-${createHash('sha256').update(fileSha256).update('\n').update(rows).digest('hex').slice(0, 40)}`;
}

/** One line of the batch answer. */
interface BatchLine {
  row: number;
  status: number;
  link?: { code: string; shortUrl: string };
  problem?: { code: string; detail: string };
}

class RetryableError extends Error {
  constructor(
    message: string,
    readonly waitMs: number,
  ) {
    super(message);
  }
}

/**
 * Streams a CSV (or a Kutt JSON list) through `POST /api/v1/links/batch` and writes one results
 * row per input row (docs/design.md, "Batch creation"). Nothing of the file is held in memory but
 * the rows in flight: the file is read as the API takes its rows. A request that fails on the way
 * (connection lost, 503, 409 while the server still finishes the first attempt) is sent again with
 * the same Idempotency-Key, so its rows are created once and the answer is the same.
 */
export async function importLinks(o: ImportOptions): Promise<ImportSummary> {
  const format = o.format ?? (await sniffFormat(o.file));
  const options: MapOptions = { keepCodes: o.keepCodes ?? true, keepDomains: o.keepDomains ?? false };
  const { total, hash } = await fileFacts(o.file);
  const idempotencyKey = o.idempotencyKey ?? importKey(hash, format, options);
  const batchRows = o.batchRows ?? 100_000;
  const out = stringify({ header: true, columns: ['row', 'status', 'code', 'shortUrl', 'error', 'note'], cast: { string: guardCell } });
  out.pipe(o.results);
  let progress = { total, answered: 0, created: 0, failed: 0 };
  let noted = 0;
  for (let batch = 0; batch * batchRows < Math.max(total, 1); batch++) {
    const key = total > batchRows ? `${idempotencyKey}-${batch}` : idempotencyKey;
    for (let attempt = 0; ; attempt++) {
      const lines: BatchLine[] = [];
      /** Why a row of this batch was made less open than its source, by its index in the batch. */
      const notes = new Map<number, string>();
      try {
        const rows = bodies(o.file, format, options, batch * batchRows, batchRows, notes);
        await sendBatch(o, key, rows, (line) => {
          lines.push(line);
          o.onProgress?.({
            ...progress,
            answered: progress.answered + lines.length,
            created: progress.created + lines.filter((l) => l.link).length,
            failed: progress.failed + lines.filter((l) => !l.link).length,
          });
        });
      } catch (error) {
        if (!(error instanceof RetryableError) || attempt >= (o.retries ?? 5)) throw error;
        o.onRetry?.(error.message, error.waitMs);
        await new Promise((r) => setTimeout(r, error.waitMs));
        continue;
      }
      // Only a whole answer is written: a retried request answers every row again.
      for (const l of lines) {
        const row = batch * batchRows + l.row + 1;
        const note = l.link ? (notes.get(l.row) ?? '') : '';
        if (note) noted++;
        const ok = await writeRow(out, [
          row,
          l.status,
          l.link?.code ?? '',
          l.link?.shortUrl ?? '',
          l.problem ? `${l.problem.code}: ${l.problem.detail}` : '',
          note,
        ]);
        if (!ok) throw new Error('could not write the results');
      }
      const created = lines.filter((l) => l.link).length;
      progress = { total, answered: progress.answered + lines.length, created: progress.created + created, failed: progress.failed + lines.length - created };
      break;
    }
  }
  out.end();
  await flushed(o.results);
  return { ...progress, format, idempotencyKey, noted };
}

/** Resolves once everything piped into `output` is written (a file is flushed; stdout is never ended by a pipe). */
export async function flushed(output: Writable): Promise<void> {
  if (output === process.stdout || output === process.stderr) return;
  await finished(output);
}

const writeRow = (out: ReturnType<typeof stringify>, row: unknown[]): Promise<boolean> =>
  new Promise((resolve) => (out.write(row) ? resolve(true) : out.once('drain', () => resolve(true))));

/** The format of a file: Kutt for .json, else told by its CSV header (README, "Import and export"). */
export async function sniffFormat(file: string): Promise<Format> {
  if (isJson(file)) return 'kutt';
  for await (const header of createReadStream(file).pipe(parse({ to_line: 1, bom: true }))) {
    const format = detectFormat(header as string[]);
    if (format) return format;
    throw new Error(`cannot tell the format of ${file} from its header (${(header as string[]).join(', ')}); name it with --format`);
  }
  throw new Error(`${file} is empty`);
}

const isJson = (file: string) => /\.json$/i.test(file);

/** Rows in the file (for the progress bar) and its SHA-256 (for the default Idempotency-Key). */
async function fileFacts(file: string): Promise<{ total: number; hash: string }> {
  const hash = createHash('sha256');
  let total = 0;
  if (isJson(file)) {
    const text = readFileSync(file);
    return { total: kuttRecords(JSON.parse(text.toString('utf8'))).length, hash: hash.update(text).digest('hex') };
  }
  const parser = createReadStream(file)
    .on('data', (d) => hash.update(d))
    .pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true }));
  for await (const _ of parser) total++;
  return { total: Math.max(0, total - 1), hash: hash.digest('hex') };
}

/** The file's rows from `skip`, at most `take`, each as the create body its format maps it to; their notes by index from `skip`. */
async function* bodies(file: string, format: Format, options: MapOptions, skip: number, take: number, notes: Map<number, string>): AsyncGenerator<string> {
  const records: AsyncIterable<CsvRecord> | Iterable<CsvRecord> = isJson(file)
    ? kuttRecords(JSON.parse(readFileSync(file, 'utf8')))
    : createReadStream(file).pipe(parse({ bom: true, columns: (h: string[]) => h.map(normaliseHeader), relax_column_count: true, skip_empty_lines: true }));
  let i = 0;
  for await (const record of records) {
    if (i++ < skip) continue;
    if (i > skip + take) break;
    const { body, note } = mapRecord(format, record, options);
    if (note) notes.set(i - 1 - skip, note);
    yield JSON.stringify(body);
  }
}

/**
 * One batch request over node:http, body and answer streamed at once (the server answers while it
 * reads): rows are written as the socket takes them, answer lines handed on as they arrive.
 */
function sendBatch(o: ImportOptions, key: string, rows: AsyncGenerator<string>, onLine: (l: BatchLine) => void): Promise<void> {
  const url = new URL('/api/v1/links/batch', o.api);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      req.destroy();
      reject(e);
    };
    const req = send(
      url,
      { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'x-api-key': o.apiKey, 'idempotency-key': key, 'transfer-encoding': 'chunked' } },
      (res) => {
        void readAnswer(res, onLine).then(
          () => {
            settled = true;
            resolve();
          },
          (e: Error) => fail(e),
        );
      },
    );
    req.on('error', (e) => fail(new RetryableError(`the connection failed (${e.message})`, 1000)));
    void (async () => {
      try {
        for await (const row of rows) {
          if (settled || req.destroyed) return;
          if (!req.write(row + '\n')) await new Promise<void>((r) => req.once('drain', r).once('close', r));
        }
        req.end();
      } catch (e) {
        fail(e as Error);
      }
    })();
  });
}

async function readAnswer(res: IncomingMessage, onLine: (l: BatchLine) => void): Promise<void> {
  if (res.statusCode !== 200) {
    let text = '';
    for await (const chunk of res) text += chunk;
    const retryAfter = Number(res.headers['retry-after'] ?? 1) * 1000;
    const why = `the API answered ${res.statusCode}: ${text.slice(0, 300)}`;
    if (res.statusCode === 409 || res.statusCode === 503 || res.statusCode === 429) throw new RetryableError(why, retryAfter);
    throw new Error(why);
  }
  let rest = '';
  try {
    for await (const chunk of res) {
      rest += chunk;
      const lines = rest.split('\n');
      rest = lines.pop()!;
      for (const line of lines) if (line) onLine(JSON.parse(line) as BatchLine);
    }
  } catch (e) {
    throw new RetryableError(`the answer was cut off (${(e as Error).message})`, 1000);
  }
  if (rest.trim() || !res.complete) throw new RetryableError('the answer was cut off', 1000);
}
