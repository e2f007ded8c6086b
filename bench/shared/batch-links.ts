/**
 * What the benches that load links through the batch API share: the NDJSON request streamed in
 * pieces of 1000 rows while its answer is read line by line, and the clean-up of a tenant's links
 * straight from the shards afterwards.
 */
import { request } from 'http';
import { createConnection } from 'mysql2/promise';
import { loadConfig } from '@shortlink/config';

/** POST /api/v1/links/batch with `rows` creates (`row(i)` the JSON of row i); `answer` sees each answer line; settles when the answer ends. */
export function streamBatch(o: {
  base: string;
  apiKey: string;
  rows: number;
  row: (i: number) => string;
  answer: (line: string) => void;
  idempotencyKey?: string | null;
}): Promise<void> {
  return new Promise((resolve, reject) => {
    let rest = '';
    const headers = {
      'content-type': 'application/x-ndjson',
      'x-api-key': o.apiKey,
      'transfer-encoding': 'chunked',
      ...(o.idempotencyKey ? { 'idempotency-key': o.idempotencyKey } : {}),
    };
    const req = request(`${o.base}/api/v1/links/batch`, { method: 'POST', headers }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop()!;
        for (const line of lines) o.answer(line);
      });
      res.on('end', () => resolve());
    });
    req.on('error', reject);
    void (async () => {
      for (let i = 0; i < o.rows; i += 1000) {
        let piece = '';
        for (let j = i; j < Math.min(o.rows, i + 1000); j++) piece += `${o.row(j)}\n`;
        if (!req.write(piece)) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })();
  });
}

/** Deletes the tenants' links from every shard (MySQL only), 20 000 at a time, so that runs do not grow the shards. */
export async function deleteTenantLinks(tenantIds: readonly string[]): Promise<void> {
  const config = loadConfig(process.env);
  if (config.db.driver !== 'mysql') return;
  for (const s of config.db.shards) {
    const conn = await createConnection(s.url);
    try {
      for (const t of tenantIds) {
        for (;;) {
          const [r] = (await conn.query('DELETE FROM links WHERE tenant_id = ? LIMIT 20000', [t])) as unknown as [{ affectedRows: number }];
          if (r.affectedRows === 0) break;
        }
      }
    } finally {
      await conn.end();
    }
  }
}
