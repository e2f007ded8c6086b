import { createWriteStream } from 'fs';
import { parseArgs } from 'util';
import { SingleBar } from 'cli-progress';
import { loadClientConfig } from '@shortlink/config';
import { Format, FORMATS, importLinks } from '@shortlink/link-transfer';

/**
 * `npm run links:import -- file.csv`: streams a CSV (ours, or an export of Bitly, Shlink or YOURLS;
 * Kutt's JSON link list) through POST /api/v1/links/batch and writes a results CSV (row, status,
 * code, shortUrl, error, note: why a row was created disabled). The key comes from SHORTLINK_API_KEY
 * (not the command line, where other users of the machine could read it). Column mapping: README,
 * "Import and export".
 */
const USAGE = `usage: npm run links:import -- <file.csv|kutt.json> [--api URL] [--out results.csv]
       [--format ${FORMATS.join('|')}] [--no-codes] [--keep-domains] [--idempotency-key KEY] [--batch-rows 100000]
settings: SHORTLINK_API_KEY (the key), SHORTLINK_API_URL (default http://127.0.0.1:8081; --api overrides it)`;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      api: { type: 'string' },
      out: { type: 'string' },
      format: { type: 'string' },
      'no-codes': { type: 'boolean', default: false },
      'keep-domains': { type: 'boolean', default: false },
      'idempotency-key': { type: 'string' },
      'batch-rows': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const file = positionals[0];
  const settings = loadClientConfig(process.env);
  const apiKey = settings.apiKey;
  if (values.help || !file || !apiKey || (values.format && !FORMATS.includes(values.format as Format))) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const out = values.out ?? file.replace(/(\.[^./]+)?$/, '.results.csv');
  const bar = new SingleBar({
    format: 'import |{bar}| {percentage}% | {value}/{total} rows | {speed} rows/s | ETA {eta_formatted} | {failed} failed',
    etaBuffer: 50,
    hideCursor: true,
    stream: process.stderr,
  });
  const started = Date.now();
  let barStarted = false;
  const summary = await importLinks({
    api: values.api ?? settings.apiUrl,
    apiKey,
    file,
    results: createWriteStream(out),
    format: values.format as Format | undefined,
    keepCodes: !values['no-codes'],
    keepDomains: values['keep-domains'],
    idempotencyKey: values['idempotency-key'],
    batchRows: values['batch-rows'] ? Number(values['batch-rows']) : undefined,
    onProgress: (p) => {
      if (!barStarted) bar.start(p.total, 0, { speed: '0', failed: 0 });
      barStarted = true;
      bar.update(p.answered, { speed: Math.round(p.answered / Math.max(0.001, (Date.now() - started) / 1000)).toString(), failed: p.failed });
    },
    onRetry: (why, waitMs) => console.error(`\nretrying in ${waitMs} ms with the same Idempotency-Key: ${why}`),
  });
  bar.stop();
  console.log(JSON.stringify({ ...summary, results: out, seconds: (Date.now() - started) / 1000 }));
  return summary.failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error((error as Error).message);
    process.exit(3);
  },
);
