import { api, type Link, type Problem, problemOf, type Schemas } from './api/client';

/** The domains a link may be on (the default first as the API lists them), for the filters and the form. */
export async function domainNames(): Promise<string[]> {
  const { data } = await api.GET('/api/v1/domains');
  return data?.domains.map((d) => d.domain) ?? [];
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
