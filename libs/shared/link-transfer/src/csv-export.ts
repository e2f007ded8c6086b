import { stringify } from 'csv-stringify';
import type { Writable } from 'stream';
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
}

/** The columns of an export: our import's columns first, so an export imports again as it is. */
export const EXPORT_COLUMNS = ['url', 'alias', 'domain', 'title', 'tags', 'expiresAt', 'redirectType', 'maxClicks', 'status', 'shortUrl', 'createdAt'] as const;

interface LinkView {
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
}

/**
 * Writes a tenant's links as CSV, newest first, a page of 100 at a time through the list API and
 * its cursor (waiting out 429s); only one page is held at a time.
 */
export async function exportLinks(o: ExportOptions): Promise<number> {
  const out = stringify({ header: true, columns: [...EXPORT_COLUMNS] });
  out.pipe(o.output);
  let cursor: string | null = null;
  let exported = 0;
  do {
    const query = new URLSearchParams({ limit: '100' });
    if (cursor) query.set('cursor', cursor);
    if (o.tag) query.set('tag', o.tag);
    if (o.domain) query.set('domain', o.domain);
    if (o.status) query.set('status', o.status);
    const page: { links: LinkView[]; nextCursor: string | null } = await getJson(`${o.api.replace(/\/$/, '')}/api/v1/links?${query}`, o.apiKey);
    for (const l of page.links) {
      const row = [l.url, l.code, l.domain, l.title ?? '', l.tags.join('|'), l.expiresAt ?? '', l.redirectType, l.maxClicks ?? '', l.status, l.shortUrl, l.createdAt];
      if (!out.write(row)) await new Promise((r) => out.once('drain', r));
    }
    exported += page.links.length;
    o.onProgress?.(exported);
    cursor = page.nextCursor;
  } while (cursor);
  out.end();
  await flushed(o.output);
  return exported;
}

async function getJson<T>(url: string, apiKey: string): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, { headers: { 'x-api-key': apiKey } });
    if (res.status === 200) return (await res.json()) as T;
    const text = await res.text();
    if ((res.status === 429 || res.status === 503) && attempt < 20) {
      await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
      continue;
    }
    throw new Error(`the API answered ${res.status}: ${text.slice(0, 300)}`);
  }
}
