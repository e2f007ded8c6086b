import { analyticsApi } from './api/analytics-client';
import { api, type Link, type Problem, problemOf, type Schemas } from './api/client';
import type { ConsoleSettings } from './session';

/** The tenant's own domains (and an operator's the service's), as the domains API lists them. */
export async function domainNames(): Promise<string[]> {
  const { data } = await api.GET('/api/v1/domains');
  return data?.domains.map((d) => d.domain) ?? [];
}

/** Every domain the tenant's links may be on: the service's default first, its shared ones, then the tenant's own. */
export async function linkDomains(settings: ConsoleSettings): Promise<string[]> {
  const own = await domainNames();
  return [...new Set([...(settings.defaultDomain ? [settings.defaultDomain] : []), ...settings.sharedDomains, ...own])];
}

const DAY = 86_400;
/** The longest range the analytics API reads by day (3660 days): older clicks are not counted here. */
const MAX_DAYS = 3650;
const sinceDay = (iso: string) => Math.max(Math.floor(Date.parse(iso) / 1000 / DAY) * DAY, Math.floor(Date.now() / 1000 / DAY - MAX_DAYS) * DAY);

/**
 * Clicks of each of these links since it was created (bots left out), in one request through the
 * analytics relay: by `domain/code`; a link without clicks is 0. Null when the counts cannot be read.
 */
export async function clickCounts(links: ReadonlyArray<Pick<Link, 'code' | 'domain' | 'createdAt'>>): Promise<Map<string, number> | null> {
  if (!links.length) return new Map();
  const from = Math.min(...links.map((l) => sinceDay(l.createdAt)));
  const { data } = await analyticsApi
    .GET('/api/v1/stats/top-links', {
      params: { query: { from: String(from), granularity: 'day', limit: links.length, links: links.map((l) => `${l.domain}/${l.code}`).join(',') } },
    })
    .catch(() => ({ data: undefined }));
  if (!data || typeof data === 'string') return null;
  const counts = new Map(links.map((l) => [`${l.domain}/${l.code}`, 0]));
  for (const row of data.links) counts.set(`${row.domain}/${row.code}`, row.clicks);
  return counts;
}

/** One link's clicks and unique visitors since it was created (bots left out); null when they cannot be read. */
export async function linkTotals(link: Pick<Link, 'code' | 'domain' | 'createdAt'>): Promise<{ clicks: number; visitors: number } | null> {
  const { data } = await analyticsApi
    .GET('/api/v1/links/{code}/stats', {
      params: { path: { code: link.code }, query: { from: String(sinceDay(link.createdAt)), granularity: 'day', domain: link.domain } },
    })
    .catch(() => ({ data: undefined }));
  return data && typeof data !== 'string' ? data.totals : null;
}

/** The tenant's tags (for the tag picker); none when they cannot be read. */
export async function tagNames(): Promise<string[]> {
  const { data } = await api.GET('/api/v1/tags').catch(() => ({ data: undefined }));
  return data?.tags ?? [];
}

/** The QR code of a link as an object URL of its SVG (the session's cookie goes along), or null. */
export async function qrObjectUrl(link: Pick<Link, 'code' | 'domain'>): Promise<string | null> {
  const { data, response } = await api.GET('/api/v1/links/{code}/qr', {
    params: { path: { code: link.code }, query: { format: 'svg', domain: link.domain } },
    parseAs: 'blob',
  });
  return response.ok && data instanceof Blob ? URL.createObjectURL(data) : null;
}

/** One line of a bulk answer (NDJSON): a link's code, domain and status, with the problem when it failed. */
export interface BulkResult {
  code: string;
  domain: string;
  status: number;
  link?: Link;
  problem?: Problem;
}

/** PATCH /api/v1/links/bulk: one edit for each link, read line by line. */
export async function bulkEdit(
  links: ReadonlyArray<Pick<Link, 'code' | 'domain'>>,
  edit: Schemas['LinkEdit'],
): Promise<{ results: BulkResult[] } | { problem: Problem }> {
  const { data, error, response } = await api.PATCH('/api/v1/links/bulk', {
    body: { links: links.map((l) => ({ code: l.code, domain: l.domain })), edit },
    parseAs: 'text',
  });
  if (!response.ok || typeof data !== 'string') return { problem: problemOf(error, response) };
  return { results: lines(data) };
}

const lines = (ndjson: string) =>
  ndjson
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as BulkResult);

/** DELETE /api/v1/links/bulk, read line by line. */
export async function bulkDelete(links: ReadonlyArray<Pick<Link, 'code' | 'domain'>>): Promise<{ results: BulkResult[] } | { problem: Problem }> {
  const { data, error, response } = await api.DELETE('/api/v1/links/bulk', {
    body: { links: links.map((l) => ({ code: l.code, domain: l.domain })) },
    parseAs: 'text',
  });
  if (!response.ok || typeof data !== 'string') return { problem: problemOf(error, response) };
  return { results: lines(data) };
}

/** Copies text; true when the clipboard took it. */
export async function copy(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** Fetches the QR code (the session's cookie goes along) and saves it as a file. */
export async function downloadQr(link: Pick<Link, 'code' | 'domain'>, format: 'svg' | 'png'): Promise<Problem | null> {
  const { data, error, response } = await api.GET('/api/v1/links/{code}/qr', {
    params: { path: { code: link.code }, query: { format, domain: link.domain, ...(format === 'png' ? { size: 512 } : {}) } },
    parseAs: 'blob',
  });
  if (!response.ok || !(data instanceof Blob)) return problemOf(error, response);
  const url = URL.createObjectURL(data);
  const a = document.createElement('a');
  a.href = url;
  a.download = `${link.code.replace(/\//g, '_')}.${format}`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return null;
}
