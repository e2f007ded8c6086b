import { stringify } from 'csv-stringify';
import type { Writable } from 'stream';
import { guardCell } from './csv-cells';
import { flushed } from './csv-import';
import { EXPORT_COLUMNS, type ExportedLink, exportRow } from './export-rows';

export { EXPORT_COLUMNS, type ExportedLink, exportRow } from './export-rows';

export interface ExportOptions {
  readonly api: string;
  readonly apiKey: string;
  readonly output: Writable;
  /** Only links with this tag / on this domain / in this status. */
  readonly tag?: string;
  readonly domain?: string;
  readonly status?: 'active' | 'disabled' | 'expired';
  readonly onProgress?: (exported: number) => void;
  /** Told when the export goes on without something (a key without links:write gets no password hashes). */
  readonly onWarning?: (message: string) => void;
}

/** The export route (with password hashes, links:read and links:write), and the list that any reading key may use. */
const EXPORT_PATH = '/api/v1/export/links';
const LIST_PATH = '/api/v1/links';

/**
 * Writes a tenant's links as CSV, newest first, a page of 100 at a time through the export route
 * and its cursor (waiting out 429s); only one page is held at a time. A key without links:write
 * gets the list instead, without password hashes: the warning says so, and those links import
 * disabled (`passwordProtected` without `passwordHash`). Every text cell is guarded against
 * spreadsheet formulas (csv-cells.ts).
 */
export async function exportLinks(o: ExportOptions): Promise<number> {
  const out = exportWriter();
  out.pipe(o.output);
  let path = EXPORT_PATH;
  let cursor: string | null = null;
  let exported = 0;
  do {
    const query = new URLSearchParams({ limit: '100' });
    if (cursor) query.set('cursor', cursor);
    if (o.tag) query.set('tag', o.tag);
    if (o.domain) query.set('domain', o.domain);
    if (o.status) query.set('status', o.status);
    const url = (p: string) => `${o.api.replace(/\/$/, '')}${p}?${query}`;
    let page = await getJson<{ links: ExportedLink[]; nextCursor: string | null }>(url(path), o.apiKey, path === EXPORT_PATH && exported === 0);
    if (page === null) {
      o.onWarning?.('this key lacks links:write, so the export carries no password hashes: password-protected links will import disabled');
      path = LIST_PATH;
      page = (await getJson<{ links: ExportedLink[]; nextCursor: string | null }>(url(path), o.apiKey, false))!;
    }
    for (const l of page.links) {
      if (!out.write(exportRow(l))) await new Promise((r) => out.once('drain', r));
    }
    exported += page.links.length;
    o.onProgress?.(exported);
    cursor = page.nextCursor;
  } while (cursor);
  out.end();
  await flushed(o.output);
  return exported;
}

/** The CSV writer of an export: our columns, every text cell guarded, booleans as true/false. */
export const exportWriter = () => stringify({ header: true, columns: [...EXPORT_COLUMNS], cast: { string: guardCell, boolean: (b) => String(b) } });

/** The answer's JSON; null when `scopeMayLack` and the key lacks the route's scope (403 INSUFFICIENT_SCOPE). */
async function getJson<T>(url: string, apiKey: string, scopeMayLack: boolean): Promise<T | null> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, { headers: { 'x-api-key': apiKey } });
    if (res.status === 200) return (await res.json()) as T;
    const text = await res.text();
    if (scopeMayLack && res.status === 403 && /"code":"INSUFFICIENT_SCOPE"/.test(text)) return null;
    if ((res.status === 429 || res.status === 503) && attempt < 20) {
      await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
      continue;
    }
    throw new Error(`the API answered ${res.status}: ${text.slice(0, 300)}`);
  }
}
