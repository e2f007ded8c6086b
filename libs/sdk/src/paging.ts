import type { ShortlinkClient } from './client';
import type { components, operations } from './generation-api';
import { unwrap } from './problem';

/** One page of a cursor-paged list: its items and the cursor of the next page (null on the last). */
export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | null;
}

/**
 * Every page of a cursor-paged list, first to last: `fetchPage(undefined)`, then
 * `fetchPage(nextCursor)` until a page has none. A page is fetched only when the previous one has
 * been taken, so stopping early (`break`) fetches nothing more. A server that answers the cursor it
 * was given fails instead of looping.
 */
export async function* pages<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<Page<T>, void, undefined> {
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (;;) {
    const page = await fetchPage(cursor);
    yield page;
    if (!page.nextCursor) return;
    if (seen.has(page.nextCursor)) throw new Error(`the API answered the cursor ${page.nextCursor} twice: stopping instead of looping`);
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}

/** Every item of a cursor-paged list, one at a time, across pages (see `pages`). */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
  for await (const page of pages(fetchPage)) yield* page.items;
}

type Schemas = components['schemas'];
/** The filters of GET /api/v1/links (and of the export): q, tag, status, domain, and the page size `limit`. */
export type LinkFilters = Omit<NonNullable<operations['listLinks']['parameters']['query']>, 'cursor'>;
/** A link of the export: the link with its password's argon2id hash (or null). */
export type ExportedLink = Schemas['LinkExport'];

/**
 * The tenant's links, newest first, page after page (GET /api/v1/links with its cursor); failures
 * throw ShortlinkApiError:
 *
 *     for await (const link of listLinks(client, { tag: 'promo' })) console.log(link.shortUrl);
 */
export function listLinks(client: ShortlinkClient, filters: LinkFilters = {}): AsyncGenerator<Schemas['Link'], void, undefined> {
  return paginate(async (cursor) => {
    const page = await unwrap(client.GET('/api/v1/links', { params: { query: { ...filters, ...(cursor ? { cursor } : {}) } } }));
    return { items: page.links, nextCursor: page.nextCursor };
  });
}

/** The pages of GET /api/v1/export/links (links with their password hashes; the key needs links:read and links:write). */
export function exportPages(client: ShortlinkClient, filters: LinkFilters = {}): AsyncGenerator<Page<ExportedLink>, void, undefined> {
  return pages(async (cursor) => {
    const page = await unwrap(client.GET('/api/v1/export/links', { params: { query: { ...filters, ...(cursor ? { cursor } : {}) } } }));
    return { items: page.links, nextCursor: page.nextCursor };
  });
}

/** The pages of GET /api/v1/links. */
export function linkPages(client: ShortlinkClient, filters: LinkFilters = {}): AsyncGenerator<Page<Schemas['Link']>, void, undefined> {
  return pages(async (cursor) => {
    const page = await unwrap(client.GET('/api/v1/links', { params: { query: { ...filters, ...(cursor ? { cursor } : {}) } } }));
    return { items: page.links, nextCursor: page.nextCursor };
  });
}
