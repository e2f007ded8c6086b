/**
 * Export the links of the current filter as CSV, the file `npm run links:export` writes (the same
 * columns and rows: libs/shared/link-transfer export-rows.ts), read page by page from
 * GET /api/v1/export/links (password hashes included, so the file imports again as it is).
 * Loaded on demand.
 */
import { guardCell } from '@shortlink/link-transfer/csv-cells';
import { EXPORT_COLUMNS, type ExportedLink, exportRow } from '@shortlink/link-transfer/export-rows';
import { api, type Problem, problemOf } from './api/client';

export interface ExportFilters {
  q?: string;
  tag?: string;
  status?: 'active' | 'disabled' | 'expired';
  domain?: string;
  health?: 'ok' | 'broken' | 'unchecked';
}

const cell = (v: unknown) => {
  const s = typeof v === 'string' ? guardCell(v) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** The CSV of every link the filters select; `onPage` is told the count so far. */
export async function exportCsv(filters: ExportFilters, onPage: (exported: number) => void): Promise<{ csv: string; count: number } | { problem: Problem }> {
  const lines = [EXPORT_COLUMNS.join(',')];
  let cursor: string | undefined;
  let count = 0;
  do {
    const { data, error, response } = await api.GET('/api/v1/export/links', { params: { query: { limit: 100, ...filters, ...(cursor ? { cursor } : {}) } } });
    if (!data) return { problem: problemOf(error, response) };
    for (const link of data.links)
      lines.push(
        exportRow(link as unknown as ExportedLink)
          .map(cell)
          .join(','),
      );
    count += data.links.length;
    onPage(count);
    cursor = data.nextCursor ?? undefined;
  } while (cursor);
  return { csv: lines.join('\n') + '\n', count };
}
