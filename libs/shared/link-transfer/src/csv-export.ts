import { stringify } from 'csv-stringify';
import type { Writable } from 'stream';
import { guardCell } from './csv-cells';
import { flushed } from './csv-import';

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

/**
 * The columns of an export: every field a link has, our import's columns first, so an export
 * imports again as it is (docs/design.md, "Import and export"). A password leaves as its argon2id
 * hash; the options that are objects (geo and device targets, variants) as JSON.
 */
export const EXPORT_COLUMNS = [
  'url',
  'alias',
  'domain',
  'title',
  'tags',
  'expiresAt',
  'redirectType',
  'maxClicks',
  'status',
  'passwordProtected',
  'passwordHash',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'forwardQuery',
  'geoTargets',
  'deviceTargets',
  'variants',
  'clicksPerIpPerMinute',
  'passwordRememberHours',
  'social',
  'appTargets',
  'shortUrl',
  'createdAt',
] as const;

/** A link as the API shows it (GET /api/v1/export/links adds passwordHash). */
export interface ExportedLink {
  code: string;
  domain: string;
  shortUrl: string;
  url: string;
  title: string | null;
  tags: string[];
  expiresAt: string | null;
  redirectType: number;
  maxClicks: number | null;
  status: string;
  createdAt: string;
  passwordProtected: boolean;
  passwordHash?: string | null;
  utm: Partial<Record<'source' | 'medium' | 'campaign' | 'term' | 'content', string>> | null;
  forwardQuery: boolean;
  geoTargets: Record<string, string> | null;
  deviceTargets: Record<string, string> | null;
  variants: Array<{ url: string; weight: number }> | null;
  clicksPerIpPerMinute: number | null;
  passwordRememberHours?: number | null;
  social?: { title: string; description: string | null; image: string | null } | null;
  appTargets?: { ios?: string; android?: string } | null;
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

/** One link as a row of EXPORT_COLUMNS. */
export function exportRow(l: ExportedLink): unknown[] {
  const utm = l.utm ?? {};
  const asJson = (v: unknown) => (v === null || v === undefined ? '' : JSON.stringify(v));
  return [
    l.url,
    l.code,
    l.domain,
    l.title ?? '',
    l.tags.join('|'),
    l.expiresAt ?? '',
    l.redirectType,
    l.maxClicks ?? '',
    l.status,
    l.passwordProtected,
    l.passwordHash ?? '',
    utm.source ?? '',
    utm.medium ?? '',
    utm.campaign ?? '',
    utm.term ?? '',
    utm.content ?? '',
    l.forwardQuery,
    asJson(l.geoTargets),
    asJson(l.deviceTargets),
    asJson(l.variants),
    l.clicksPerIpPerMinute ?? '',
    l.passwordRememberHours ?? '',
    asJson(l.social),
    asJson(l.appTargets),
    l.shortUrl,
    l.createdAt,
  ];
}

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
