/** The output formats of YOURLS' API (`format=`). */
export const YOURLS_FORMATS = ['json', 'xml', 'simple', 'jsonp'] as const;
export type YourlsFormat = (typeof YOURLS_FORMATS)[number];

/** One answer of the API: its HTTP status, its body (json, xml, jsonp) and the text of `format=simple`. */
export interface YourlsAnswer {
  readonly httpStatus: number;
  readonly body: Readonly<Record<string, unknown>>;
  readonly simple: string;
}

/** `format=` as YOURLS reads it: xml when absent, simple for a value it does not know (its `default:` branch). */
export function formatOf(raw: unknown): YourlsFormat {
  if (raw === undefined || raw === null || raw === '') return 'xml';
  return (YOURLS_FORMATS as readonly unknown[]).includes(raw) ? (raw as YourlsFormat) : 'simple';
}

/** A JSONP callback: a dotted JavaScript identifier path of at most 64 characters; anything else is refused (no script injection). */
export function callbackOf(raw: unknown): string | null {
  return typeof raw === 'string' && raw.length <= 64 && /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/.test(raw) ? raw : null;
}

/** The body as YOURLS writes it for the format: its media type and text. */
export function render(format: YourlsFormat, answer: YourlsAnswer, callback: string | null): { contentType: string; text: string } {
  switch (format) {
    case 'json':
      return { contentType: 'application/json; charset=utf-8', text: JSON.stringify(answer.body) };
    case 'jsonp':
      // YOURLS echoes the callback inside the object too.
      return { contentType: 'application/javascript; charset=utf-8', text: `${callback}(${JSON.stringify({ ...answer.body, callback })})` };
    case 'xml':
      return { contentType: 'application/xml; charset=utf-8', text: toXml(answer.body) };
    default:
      return { contentType: 'text/plain; charset=utf-8', text: answer.simple };
  }
}

/**
 * YOURLS' XML: `<result>` with an element per key, nested objects as nested elements, null as an
 * empty element, arrays as repeated `<item>`s. Keys that are not XML names are written as `<item key="…">`.
 */
export function toXml(body: Readonly<Record<string, unknown>>): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<result>${elements(body)}</result>\n`;
}

function elements(value: Readonly<Record<string, unknown>>): string {
  return Object.entries(value)
    .map(([key, v]) => element(key, v))
    .join('');
}

function element(key: string, value: unknown): string {
  const name = /^[A-Za-z_][\w.-]*$/.test(key) && !/^xml/i.test(key) ? key : null;
  const open = name ?? `item key="${escapeXml(key)}"`;
  const close = name ?? 'item';
  if (value === null || value === undefined) return `<${open}/>`;
  if (Array.isArray(value)) return `<${open}>${value.map((v) => element('item', v)).join('')}</${close}>`;
  if (typeof value === 'object') return `<${open}>${elements(value as Record<string, unknown>)}</${close}>`;
  return `<${open}>${escapeXml(String(value))}</${close}>`;
}

function escapeXml(text: string): string {
  return (
    text
      // Characters XML 1.0 cannot carry at all.
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
  );
}

/** YOURLS' date form (`2026-12-05 18:30:00`, UTC here). */
export function yourlsDate(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}
