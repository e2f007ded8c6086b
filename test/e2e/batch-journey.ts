import { spawn } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { ClientRequest, request } from 'http';
import { tmpdir } from 'os';
import { join } from 'path';
import { PassThrough } from 'stream';
import { parse } from 'csv-parse/sync';
import { Endpoints, eventually, REPO_ROOT } from '@shortlink/harness';
import { exportLinks } from '@shortlink/link-transfer';
import { propagated, redirectOf } from './support';

export interface BatchLine {
  row: number;
  status: number;
  link?: { code: string; domain: string; url: string; shortUrl: string; tags: string[] };
  problem?: { code: string; detail: string };
  /** On a line an earlier attempt under the same Idempotency-Key answered: nothing was created by this request. */
  replayed?: true;
}

export interface BatchAnswer {
  status: number;
  type: string | undefined;
  /** The answer's complete lines. */
  lines: BatchLine[];
  text: string;
}

/**
 * A batch as a client sends it: rows written to the socket as it takes them (chunked), the
 * answer read while the body is still going out. `onLine` may end the request early (it returns true).
 */
export function postBatch(
  base: string,
  apiKey: string,
  body: Iterable<string>,
  headers: Record<string, string> = {},
  onLine?: (line: BatchLine, count: number) => boolean | void,
): Promise<BatchAnswer> {
  return new Promise((resolve, reject) => {
    const lines: BatchLine[] = [];
    let text = '';
    const req = request(
      `${base}/api/v1/links/batch`,
      { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'x-api-key': apiKey, 'transfer-encoding': 'chunked', ...headers } },
      (res) => {
        let rest = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (res.statusCode !== 200) return;
          const parts = (rest + chunk).split('\n');
          rest = parts.pop()!;
          for (const part of parts) {
            if (!part) continue;
            const line = JSON.parse(part) as BatchLine;
            lines.push(line);
            if (onLine?.(line, lines.length)) {
              req.destroy();
              return resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], lines, text });
            }
          }
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], lines, text }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], lines, text }));
      },
    );
    req.on('error', (e) => (lines.length ? resolve({ status: 200, type: undefined, lines, text }) : reject(e)));
    void (async () => {
      for (const chunk of body) {
        if (req.destroyed) return;
        if (!req.write(chunk)) await drainedOrClosed(req);
      }
      req.end();
    })();
  });
}

/** `n` NDJSON rows of distinct URLs, written in pieces of 500 rows. */
export function* ndjsonRows(n: number, url: (i: number) => string, extra: (i: number) => object = () => ({})): Generator<string> {
  for (let i = 0; i < n; i += 500) {
    let piece = '';
    for (let j = i; j < Math.min(n, i + 500); j++) piece += JSON.stringify({ url: url(j), ...extra(j) }) + '\n';
    yield piece;
  }
}

/** Runs `npm run <script> -- args` with the key in SHORTLINK_API_KEY; its exit code and output. */
export function runCli(
  script: 'links:import' | 'links:export',
  args: string[],
  apiKey: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script, '--', ...args], { cwd: REPO_ROOT, env: { ...process.env, SHORTLINK_API_KEY: apiKey } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const FIXTURES = join(REPO_ROOT, 'libs/shared/link-transfer/src/fixtures');

/**
 * Batch creation, bulk changes and the import/export CLI as a tenant uses them, on either profile
 * (docs/design.md, "Batch creation"). `newKey` makes a fresh paid tenant.
 */
export function describeBatchJourney(endpoints: () => Endpoints, newKey: () => Promise<string>) {
  describe('batch journey', () => {
    it('creates a batch sent as NDJSON while the answer streams back: a line per row, bad rows alone, every link redirects', async () => {
      const key = await newKey();
      const alias = `probed-${Date.now().toString(36)}`;
      expect((await redirectOf(endpoints(), alias)).status).toBe(404); // a scan leaves "no such code" in the caches
      const rows = [
        JSON.stringify({ url: 'https://example.com/batch/one', tags: ['batch'] }),
        'not json',
        JSON.stringify({ url: 'https://example.com/batch/aliased', alias }),
        JSON.stringify({ url: 'http://10.0.0.1/private' }),
        JSON.stringify({ url: 'https://example.com/batch/twice', alias }),
        JSON.stringify({ url: 'https://example.com/batch/last', redirectType: 301 }),
      ];
      const answer = await postBatch(endpoints().generation, key, [rows.join('\n') + '\n']);
      expect(answer.status).toBe(200);
      expect(answer.type).toBe('application/x-ndjson; charset=utf-8');
      expect(answer.lines.map((l) => [l.row, l.status, l.problem?.code])).toEqual([
        [0, 201, undefined],
        [1, 400, 'INVALID_JSON'],
        [2, 201, undefined],
        [3, 400, 'URL_NOT_ALLOWED'],
        [4, 409, 'ALIAS_TAKEN'],
        [5, 201, undefined],
      ]);
      for (const line of answer.lines.filter((l) => l.link)) {
        await eventually(
          `${line.link!.code} redirects`,
          async () => {
            const res = await redirectOf(endpoints(), line.link!.code);
            return [301, 302].includes(res.status) && res.headers.get('location') === line.link!.url;
          },
          15_000,
          250,
        );
      }
    });

    it('answers a retry with the same Idempotency-Key with the same lines, each marked replayed, and creates nothing twice; other rows under the key are 422', async () => {
      const key = await newKey();
      const rows = [...ndjsonRows(2500, (i) => `https://example.com/idem/${i}`)];
      const first = await postBatch(endpoints().generation, key, rows, { 'idempotency-key': 'e2e-idem' });
      const again = await postBatch(endpoints().generation, key, rows, { 'idempotency-key': 'e2e-idem' });
      expect(first.lines).toHaveLength(2500);
      expect(first.text).not.toContain('"replayed"');
      expect(again.text).toBe(first.text.replace(/^\{/gm, '{"replayed":true,'));
      const other = await postBatch(endpoints().generation, key, [...ndjsonRows(10, (i) => `https://example.com/other/${i}`)], {
        'idempotency-key': 'e2e-idem',
      });
      expect(other.status).toBe(422);
      expect(JSON.parse(other.text)).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
      const listed = await fetch(`${endpoints().generation}/api/v1/links?limit=100&q=example.com/idem/249`, { headers: { 'x-api-key': key } });
      expect(((await listed.json()) as { links: unknown[] }).links).toHaveLength(11); // /idem/249 and /idem/2490..2499: once each
    });

    it('edits by tag and deletes by code in bulk; every redirect follows within the propagation bound of the answer', async () => {
      const key = await newKey();
      const tag = `bulk-${Date.now().toString(36)}`;
      const created = (
        await postBatch(endpoints().generation, key, [
          ...ndjsonRows(
            30,
            (i) => `https://example.com/bulk/${i}`,
            (i) => ({ tags: i < 20 ? [tag] : [] }),
          ),
        ])
      ).lines.map((l) => l.link!);
      for (const l of created.slice(0, 3)) expect((await redirectOf(endpoints(), l.code)).headers.get('location')).toBe(l.url); // now in every cache
      const edit = await fetch(`${endpoints().generation}/api/v1/links/bulk`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ tag, edit: { url: 'https://example.com/bulk/moved' } }),
      });
      const edited = (await edit.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { status: number; code: string });
      await propagated(Date.now()); // each line is written once its link's change is out (docs/design.md, "Edits reach every instance")
      expect(edited.map((l) => l.status)).toEqual(Array(20).fill(200));
      for (const l of created.slice(0, 3)) expect((await redirectOf(endpoints(), l.code)).headers.get('location')).toBe('https://example.com/bulk/moved');
      expect((await redirectOf(endpoints(), created[25].code)).headers.get('location')).toBe(created[25].url);
      const removed = await fetch(`${endpoints().generation}/api/v1/links/bulk`, {
        method: 'DELETE',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ links: [created[0].code, created[25].code, 'nosuchcode'] }),
      });
      const removedLines = (await removed.text())
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { status: number }).status);
      await propagated(Date.now());
      expect(removedLines).toEqual([204, 204, 404]);
      for (const l of [created[0], created[25]]) expect((await redirectOf(endpoints(), l.code)).status).toBe(404);
    });

    it('imports the exports of Bitly, Shlink, YOURLS and Kutt and our own CSV with the CLI, writes the results, and exports them again', async () => {
      const key = await newKey();
      const dir = mkdtempSync(join(tmpdir(), 'shortlink-import-'));
      try {
        const suffix = Date.now().toString(36);
        const expected: Record<string, Array<[number, string]>> = {
          'shortlink.csv': [
            [1, '201'],
            [2, '201'],
            [3, '201'],
            [4, '400'],
          ],
          'bitly.csv': [
            [1, '201'],
            [2, '201'],
            [3, '201'],
          ],
          'shlink.csv': [
            [1, '201'],
            [2, '201'],
            [3, '201'],
            [4, '201'],
          ],
          'yourls.csv': [
            [1, '201'],
            [2, '201'],
            [3, '201'],
          ],
          'kutt.json': [
            [1, '201'],
            [2, '201'],
            [3, '201'],
          ],
        };
        for (const [file, rows] of Object.entries(expected)) {
          const out = join(dir, `${file}.results.csv`);
          // The fixtures' codes would be taken on a second run against the same shards: Shlink's and YOURLS'
          // are made unique per run (and kept), the others get new codes. (One-letter codes on a domain new on
          // every run: transfer-journey.ts.)
          const input = join(dir, file);
          const unique = (c: string) => `${c}-${suffix}`;
          writeFileSync(
            input,
            readFileSync(join(FIXTURES, file), 'utf8')
              .replace(/shlink-docs|Ab3dE|q-tags|blog\/2024\/launch|yourls-home|yourls2/g, unique)
              .replace(/^a,/m, `${unique('a')},`),
          );
          const keepCodes = file === 'shlink.csv' || file === 'yourls.csv';
          const args = [input, '--api', endpoints().generation, '--out', out, ...(keepCodes ? [] : ['--no-codes']), '--idempotency-key', `${file}-${suffix}`];
          const run = await runCli('links:import', args, key);
          expect({
            file,
            code: run.code,
            stderr: run.stderr
              .split('\n')
              .filter((l) => !l.startsWith('import |'))
              .join('\n')
              .trim(),
          }).toEqual({ file, code: rows.some(([, s]) => s !== '201') ? 1 : 0, stderr: '' });
          const results = parse(readFileSync(out, 'utf8'), { columns: true }) as Array<{
            row: string;
            status: string;
            code: string;
            shortUrl: string;
            error: string;
          }>;
          expect(results.map((r) => [Number(r.row), r.status])).toEqual(rows);
          for (const r of results) expect(r.status === '201' ? r.shortUrl.endsWith(`/${r.code}`) : r.error.length > 0).toBe(true);
          if (file === 'shlink.csv') expect(results[0].code).toBe(`shlink-docs-${suffix}`);
          if (file === 'shlink.csv') expect(results[3].code).toBe(`blog/2024/launch-${suffix}`);
          if (file === 'yourls.csv') expect(results[2].code).toBe(`a-${suffix}`);
          expect(JSON.parse(run.stdout)).toMatchObject({ total: rows.length, answered: rows.length });
          // The same import again: answered from the record, nothing created twice.
          const firstResults = readFileSync(out, 'utf8');
          const again = await runCli('links:import', args, key);
          expect(readFileSync(out, 'utf8')).toBe(firstResults);
          expect(again.code).toBe(run.code);
        }
        const exportFile = join(dir, 'export.csv');
        const exported = await runCli('links:export', ['--api', endpoints().generation, '--out', exportFile], key);
        expect(exported.code).toBe(0);
        const links = parse(readFileSync(exportFile, 'utf8'), { columns: true }) as Array<{ url: string; alias: string; tags: string }>;
        expect(links).toHaveLength(3 + 3 + 4 + 3 + 3);
        expect(links.find((l) => l.alias === `shlink-docs-${suffix}`)).toMatchObject({ url: 'https://example.com/shlink/docs', tags: 'docs|blog' });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

/** Every link of the tenant, through the export (the list API with its cursor): how many, and how many distinct targets. */
export async function countLinks(base: string, apiKey: string): Promise<{ links: number; urls: number }> {
  const csv: string[] = [];
  const sink = new PassThrough();
  sink.on('data', (d: Buffer) => csv.push(d.toString('utf8')));
  await exportLinks({ api: base, apiKey, output: sink });
  const rows = parse(csv.join(''), { columns: true }) as Array<{ url: string }>;
  return { links: rows.length, urls: new Set(rows.map((r) => r.url)).size };
}

/**
 * The crash test: a batch with an Idempotency-Key, the generation process SIGKILLed in
 * the middle of it, started again, the batch sent again. The retry must answer every row, the
 * lines the client had already received must be the same (marked replayed), and every row must exist exactly once.
 */
export async function crashAndRetry(o: {
  base: () => string;
  apiKey: string;
  rows: number;
  killAfterLines: number;
  kill: () => void;
  restart: () => Promise<void>;
}): Promise<{ before: BatchLine[]; after: BatchAnswer }> {
  const key = `crash-${Date.now().toString(36)}`;
  const body = () => ndjsonRows(o.rows, (i) => `https://example.com/crash/${key}/${i}`);
  const before = await postBatch(o.base(), o.apiKey, body(), { 'idempotency-key': key }, (_line, count) => {
    if (count !== o.killAfterLines) return false;
    o.kill();
    return true;
  });
  expect(before.lines.length).toBeGreaterThanOrEqual(o.killAfterLines);
  expect(before.lines.length).toBeLessThan(o.rows);
  await o.restart();
  // The dead attempt's lease runs out within BATCH_LEASE_MS: until then a retry is told 409 with Retry-After.
  const after = await eventually(
    'the retry taken',
    async () => {
      const answer = await postBatch(o.base(), o.apiKey, body(), { 'idempotency-key': key });
      if (answer.status === 409) expect(JSON.parse(answer.text)).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE' });
      return answer.status === 200 ? answer : null;
    },
    60_000,
    500,
  );
  expect(after.lines).toHaveLength(o.rows);
  expect(after.lines.map((l) => l.row)).toEqual(Array.from({ length: o.rows }, (_, i) => i));
  expect(after.lines.filter((l) => l.status !== 201)).toEqual([]);
  // The lines the client had received were on record before they were sent: they come back the same, marked replayed.
  expect(after.lines.slice(0, before.lines.length)).toEqual(before.lines.map((line) => ({ replayed: true, ...line })));
  expect(await countLinks(o.base(), o.apiKey)).toEqual({ links: o.rows, urls: o.rows });
  return { before: before.lines, after };
}

/** Waits for a backpressured request to drain or close, and leaves no listener behind either way. */
function drainedOrClosed(req: ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      req.off('drain', done).off('close', done);
      resolve();
    };
    req.on('drain', done).on('close', done);
  });
}
