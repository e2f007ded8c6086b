/**
 * Import a peer's export (the formats `npm run links:import` reads: Shlink, Bitly, YOURLS, Kutt
 * and ours), read in the browser with the CLI's own mapping (libs/shared/link-transfer formats.ts),
 * sent in chunks through POST /api/v1/links/batch, each with an Idempotency-Key made of the file
 * and the options (the same import again creates nothing twice). A progress bar follows the
 * answer's NDJSON lines as they arrive; the results download as CSV. Loaded on demand: not part of
 * the console's first load.
 */
import { parse } from 'csv-parse/browser/esm/sync';
import { useState } from 'preact/hooks';
import { guardCell } from '@shortlink/link-transfer/csv-cells';
import { type CsvRecord, detectFormat, type Format, FORMATS, kuttRecords, mapRecord, normaliseHeader } from '@shortlink/link-transfer/formats';
import { api, type Problem, problemOf, type Schemas } from '../api/client';
import { Field, ProblemNote, ScrollRegion } from '../ui';

/** Rows per request: a progress step each, and a retry resends no more than this. */
const CHUNK = 250;

interface Row {
  row: number;
  status: number;
  code: string;
  shortUrl: string;
  error: string;
  note: string;
}

interface Progress {
  total: number;
  answered: number;
  created: number;
  /** Answered by an earlier import of the same file (the batch's Idempotency-Key): nothing created now. */
  already: number;
  failed: number;
}

async function sha256(bytes: ArrayBuffer): Promise<string> {
  if (!crypto.subtle) return `${Date.now()}-${Math.random().toString(36).slice(2)}`; // not a secure context: no digest, a key for this run only
  return [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** The file's records by normalised header, and the format its header names. */
function readRecords(name: string, text: string): { records: CsvRecord[]; detected: Format | null } {
  if (name.toLowerCase().endsWith('.json')) return { records: kuttRecords(JSON.parse(text)), detected: 'kutt' };
  const rows = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: true }) as string[][];
  const header = (rows[0] ?? []).map(normaliseHeader);
  const records = rows.slice(1).map((cells) => Object.fromEntries(header.map((h, i) => [h, cells[i] ?? ''])));
  return { records, detected: detectFormat(header) };
}

const csvCell = (v: string | number) => {
  const s = typeof v === 'string' ? guardCell(v) : String(v); // a cell a spreadsheet would run as a formula, guarded as the CLI does
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export function Import() {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [results, setResults] = useState<Row[] | null>(null);
  const [format, setFormat] = useState<Format | null>(null);
  const [running, setRunning] = useState(false);

  const run = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const file = f.get('file') as File | null;
    setProblem(null);
    setResults(null);
    if (!file || !file.size) return setProblem({ status: 400, code: 'NO_FILE', detail: 'Choose a file to import.' });
    const bytes = await file.arrayBuffer();
    let read: ReturnType<typeof readRecords>;
    try {
      read = readRecords(file.name, new TextDecoder().decode(bytes));
    } catch (error) {
      return setProblem({ status: 400, code: 'UNREADABLE_FILE', detail: `The file could not be read: ${(error as Error).message}` });
    }
    const chosen = (String(f.get('format') || '') as Format) || read.detected;
    if (!chosen) return setProblem({ status: 400, code: 'UNKNOWN_FORMAT', detail: 'The header names no format this console reads: choose one.' });
    setFormat(chosen);
    const options = { keepCodes: f.get('keepCodes') === 'on', keepDomains: f.get('keepDomains') === 'on' };
    const key = `import-${(await sha256(bytes)).slice(0, 40)}-${chosen}-${options.keepCodes ? 'c' : 'n'}${options.keepDomains ? 'd' : 'n'}`;
    const mapped = read.records.map((r) => mapRecord(chosen, r, options));
    const total = mapped.length;
    const rows: Row[] = [];
    let state: Progress = { total, answered: 0, created: 0, already: 0, failed: 0 };
    setProgress(state);
    setRunning(true);
    try {
      for (let start = 0; start < total; start += CHUNK) {
        const chunk = mapped.slice(start, start + CHUNK);
        const { response, error } = await api.POST('/api/v1/links/batch', {
          params: { header: { 'idempotency-key': `${key}-${start / CHUNK}` } },
          body: chunk.map((m) => m.body) as unknown as Schemas['LinkCreation'],
          bodySerializer: (body: unknown) => (body as unknown[]).map((b) => JSON.stringify(b)).join('\n') + '\n',
          headers: { 'content-type': 'application/x-ndjson' },
          parseAs: 'stream',
        });
        if (!response.ok || !response.body) throw problemOf(error, response);
        // The answer's lines as they arrive: the bar moves while the server still creates.
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffered = '';
        for (;;) {
          const { value, done } = await reader.read();
          buffered += value ?? '';
          const lines = buffered.split('\n');
          buffered = done ? '' : lines.pop()!;
          for (const text of lines.filter((l) => l.trim())) {
            const line = JSON.parse(text) as Schemas['BatchLine'];
            const row = start + line.row;
            rows.push({
              row: row + 1,
              status: line.status,
              code: line.link?.code ?? '',
              shortUrl: line.link?.shortUrl ?? '',
              error: line.problem ? `${line.problem.code}: ${line.problem.detail}` : '',
              note: line.link ? [line.replayed ? 'already imported' : '', mapped[row]?.note ?? ''].filter(Boolean).join('; ') : '',
            });
            state = {
              ...state,
              answered: state.answered + 1,
              created: state.created + (line.link && !line.replayed ? 1 : 0),
              already: state.already + (line.link && line.replayed ? 1 : 0),
              failed: state.failed + (line.link ? 0 : 1),
            };
          }
          setProgress(state);
          if (done) break;
        }
      }
      setResults(rows);
    } catch (error) {
      setProblem(problemOf(error));
      setResults(rows);
    } finally {
      setRunning(false);
    }
  };

  const download = () => {
    const csv = [
      'row,status,code,shortUrl,error,note',
      ...(results ?? []).map((r) => [r.row, r.status, r.code, r.shortUrl, r.error, r.note].map(csvCell).join(',')),
    ].join('\n');
    const url = URL.createObjectURL(new Blob([csv + '\n'], { type: 'text/csv' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'import-results.csv';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };

  const failed = results?.filter((r) => r.error) ?? [];
  // Rows created less open than at their source (disabled, without a past expiry), each saying why.
  const noted = results?.filter((r) => !r.error && r.note && r.note !== 'already imported') ?? [];
  return (
    <section aria-labelledby="import-title">
      <h1 id="import-title">Import links</h1>
      <form class="card" id="import-form" onSubmit={run} noValidate>
        <p class="hint">An export of Shlink, Bitly, YOURLS or Kutt (its API’s link list as JSON), or of this platform: the files npm run links:import reads.</p>
        <Field label="File" name="file" input={{ type: 'file', accept: '.csv,.json,text/csv,application/json', required: true }} />
        <Field id="f-import-format" label="Format" name="format">
          <select id="f-import-format" name="format">
            <option value="">Told by the header</option>
            {FORMATS.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        </Field>
        <label class="check">
          <input type="checkbox" name="keepCodes" defaultChecked /> Keep the source’s short codes
        </label>
        <label class="check">
          <input type="checkbox" name="keepDomains" /> Keep the source’s domains (they must be yours here)
        </label>
        <button type="submit" id="start-import" disabled={running}>
          Import
        </button>
        <ProblemNote problem={problem} id="import-error" />
      </form>
      {progress && (
        <div class="card" id="import-progress">
          <label for="import-bar">
            {format ? `${format}: ` : ''}
            {progress.answered} of {progress.total} rows answered
          </label>
          <progress id="import-bar" max={progress.total || 1} value={progress.answered} />
          <p role="status" id="import-counts">
            {progress.created} created, {progress.already > 0 && `${progress.already} already imported, `}
            {progress.failed} failed
          </p>
        </div>
      )}
      {results && (
        <div class="card" id="import-results">
          <button type="button" class="secondary" id="download-results" onClick={download}>
            Download the results (CSV)
          </button>
          {failed.length > 0 && (
            <ScrollRegion label="Rows not created">
              <table>
                <caption>Rows not created</caption>
                <thead>
                  <tr>
                    <th scope="col">Row</th>
                    <th scope="col">Error</th>
                  </tr>
                </thead>
                <tbody>
                  {failed.slice(0, 100).map((r) => (
                    <tr key={r.row} data-row={r.row}>
                      <td>{r.row}</td>
                      <td>{r.error}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollRegion>
          )}
          {noted.length > 0 && (
            <ScrollRegion label="Rows created with a note">
              <table id="import-notes">
                <caption>Rows created less open than at their source</caption>
                <thead>
                  <tr>
                    <th scope="col">Row</th>
                    <th scope="col">Link</th>
                    <th scope="col">Why</th>
                  </tr>
                </thead>
                <tbody>
                  {noted.slice(0, 100).map((r) => (
                    <tr key={r.row} data-noted-row={r.row} data-code={r.code}>
                      <td>{r.row}</td>
                      <td>{r.code}</td>
                      <td>{r.note}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollRegion>
          )}
        </div>
      )}
    </section>
  );
}
