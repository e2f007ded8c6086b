/**
 * Spreadsheet formulas in CSV cells (OWASP "CSV injection"): text a spreadsheet would run as a
 * formula (`=`, `+`, `-`, `@`, a tab or a carriage return first) is written with a leading
 * apostrophe, which spreadsheets show as text. One implementation for every CSV we write: the
 * analytics exports, `links:export` and the importer's results.
 *
 * Text that already starts with apostrophes before such a character gets one more, so that
 * `unguardCell` (our own import reading our own export) gives back exactly what was written.
 */
const FORMULA = /^'*[=+\-@\t\r]/;
const GUARDED = /^'+[=+\-@\t\r]/;

export const guardCell = (text: string): string => (FORMULA.test(text) ? `'${text}` : text);

export const unguardCell = (text: string): string => (GUARDED.test(text) ? text.slice(1) : text);
