import { stringify } from 'csv-stringify';
import type { Writable } from 'stream';
import {
  type ExportedLink as ApiExportedLink,
  createShortlinkClient,
  exportPages,
  isShortlinkApiError,
  type Link,
  type LinkFilters,
  linkPages,
  type ShortlinkClient,
} from '@shortlink/sdk';
import { guardCell } from './csv-cells';
import { flushed } from './csv-import';
import { EXPORT_COLUMNS, type ExportedLink, exportRow } from './export-rows';

export { EXPORT_COLUMNS, type ExportedLink, exportRow } from './export-rows';

export interface ExportOptions {
  /** The generation API and the key to read it with, or `client`: a client of the SDK (@shortlink/sdk). */
  readonly api?: string;
  readonly apiKey?: string;
  readonly client?: ShortlinkClient;
  readonly output: Writable;
  /** Only links with this tag / on this domain / in this status. */
  readonly tag?: string;
  readonly domain?: string;
  readonly status?: 'active' | 'disabled' | 'expired';
  readonly onProgress?: (exported: number) => void;
  /** Told when the export goes on without something (a key without links:write gets no password hashes). */
  readonly onWarning?: (message: string) => void;
}

/**
 * Writes a tenant's links as CSV, newest first, a page of 100 at a time through the export route
 * and its cursor (the SDK's paging; 429s waited out); only one page is held at a time. A key
 * without links:write gets the list instead, without password hashes: the warning says so, and
 * those links import disabled (`passwordProtected` without `passwordHash`). Every text cell is
 * guarded against spreadsheet formulas (csv-cells.ts). A failure throws the SDK's
 * ShortlinkApiError (the problem's code and detail).
 */
export async function exportLinks(o: ExportOptions): Promise<number> {
  if (!o.client && !o.api) throw new Error('exportLinks: give `api` (and `apiKey`) or `client`');
  const client = o.client ?? createShortlinkClient({ baseUrl: o.api!, apiKey: o.apiKey, retries: 20 });
  const filters: LinkFilters = {
    limit: 100,
    ...(o.tag ? { tag: o.tag } : {}),
    ...(o.domain ? { domain: o.domain } : {}),
    ...(o.status ? { status: o.status } : {}),
  };
  const out = exportWriter();
  out.pipe(o.output);
  let exported = 0;
  const write = async (links: ReadonlyArray<ApiExportedLink | Link>) => {
    for (const l of links) {
      // The API's link (the SDK's type) as the rows read it: the same fields, looser types (the fixtures write them by hand).
      if (!out.write(exportRow(l as unknown as ExportedLink))) await new Promise((r) => out.once('drain', r));
    }
    exported += links.length;
    o.onProgress?.(exported);
  };
  try {
    for await (const page of exportPages(client, filters)) await write(page.items);
  } catch (error) {
    // Only the first page falls back: a key that loses the scope in the middle of an export fails.
    if (exported > 0 || !isShortlinkApiError(error, 'INSUFFICIENT_SCOPE')) throw error;
    o.onWarning?.('this key lacks links:write, so the export carries no password hashes: password-protected links will import disabled');
    for await (const page of linkPages(client, filters)) await write(page.items);
  }
  out.end();
  await flushed(o.output);
  return exported;
}

/** The CSV writer of an export: our columns, every text cell guarded, booleans as true/false. */
export const exportWriter = () => stringify({ header: true, columns: [...EXPORT_COLUMNS], cast: { string: guardCell, boolean: (b) => String(b) } });
