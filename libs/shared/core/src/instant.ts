/**
 * ISO 8601 as APIs accept it: a calendar date, optionally with a time, which then needs a zone
 * (`Z` or `±hh:mm`); four-digit years only, so expanded (`+002026`) and negative years are refused.
 */
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2})))?$/;

/**
 * Epoch milliseconds of a strict ISO 8601 date or date-time, or null when the text is not one or
 * names no real calendar day (2030-02-30 is refused, not rolled over into March).
 */
export function parseIsoInstant(text: string): number | null {
  const m = ISO_INSTANT.exec(text);
  if (!m) return null;
  const [y, mo, d, hh = '0', mm = '0', ss = '0'] = m.slice(1, 7).map((v) => v ?? undefined) as string[];
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  if (Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 59) return null;
  if (m[8] !== undefined && (Number(m[8]) > 14 || Number(m[9]) > 59)) return null;
  const ms = Date.parse(m[4] === undefined ? `${m[1]}-${m[2]}-${m[3]}T00:00:00Z` : text);
  return Number.isFinite(ms) ? ms : null;
}
