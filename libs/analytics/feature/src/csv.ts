import { guardCell } from '@shortlink/link-transfer';

/**
 * RFC 4180 CSV: fields with a comma, quote or line break are quoted, quotes doubled. A field that a
 * spreadsheet would run as a formula (= + - @ tab CR first) is guarded (guardCell, shared with the
 * link export): referer hosts and user-agent names come from visitors (OWASP "CSV injection").
 */
export function toCsv(header: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number | null>>): string {
  const lines = [header.map(field).join(',')];
  for (const row of rows) lines.push(row.map(field).join(','));
  return lines.join('\r\n') + '\r\n';
}

function field(value: string | number | null): string {
  if (value === null) return '';
  const s = typeof value === 'string' ? guardCell(value) : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
