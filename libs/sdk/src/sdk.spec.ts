import { createShortlinkClient, type FetchLike, retryingFetch } from './client';
import type { components } from './generation-api';
import { linkPages, listLinks, pages, paginate } from './paging';
import { isShortlinkApiError, type ProblemCode, problemOf, retryAfterSeconds, ShortlinkApiError, unwrap } from './problem';

type Link = components['schemas']['Link'];

/** The requests a client sent, answered in order by `answers` (this tests the client's own logic; the e2e suites run it against the apps). */
function recorder(...answers: Array<Response | Error>) {
  const requests: Request[] = [];
  const fetch: FetchLike = async (request) => {
    requests.push(request);
    const next = answers.shift();
    if (!next) throw new Error('no answer left');
    if (next instanceof Error) throw next;
    return next;
  };
  return { requests, fetch };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers } });
const problem = (status: number, code: string, detail: string, extra: object = {}) =>
  json(status, { type: `https://shortlink.dev/problems/${code.toLowerCase()}`, title: 'x', status, code, detail, ...extra });
const link = (code: string): Link => ({ code, url: `https://example.com/${code}`, shortUrl: `http://s.test/${code}` }) as Link;

describe('createShortlinkClient', () => {
  it('sends the key as x-api-key to the base URL (trailing slash dropped), with the typed path, query and body', async () => {
    const { requests, fetch } = recorder(json(201, link('abc')), json(200, { links: [], nextCursor: null }));
    const client = createShortlinkClient({ baseUrl: 'https://api.sho.rt/', apiKey: 'sl_secret', fetch, headers: { 'user-agent': 'test' } });
    const created = await unwrap(client.POST('/api/v1/links', { body: { url: 'https://example.com/abc', tags: ['a', 'b'] } }));
    expect(created.code).toBe('abc');
    await client.GET('/api/v1/links', { params: { query: { tag: 'promo', status: 'active', limit: 5 } } });
    expect(requests.map((r) => [r.method, r.url, r.headers.get('x-api-key'), r.headers.get('user-agent')])).toEqual([
      ['POST', 'https://api.sho.rt/api/v1/links', 'sl_secret', 'test'],
      ['GET', 'https://api.sho.rt/api/v1/links?tag=promo&status=active&limit=5', 'sl_secret', 'test'],
    ]);
    expect(await requests[0].json()).toEqual({ url: 'https://example.com/abc', tags: ['a', 'b'] });
  });

  it('sends no x-api-key without a key (a page of the console: its session cookie)', async () => {
    const { requests, fetch } = recorder(json(200, { keys: [] }));
    await createShortlinkClient({ baseUrl: 'http://localhost:8081', fetch }).GET('/api/v1/keys');
    expect(requests[0].headers.has('x-api-key')).toBe(false);
  });
});

describe('unwrap and ShortlinkApiError', () => {
  it('answers the data; undefined for a 204', async () => {
    const { fetch } = recorder(json(200, link('x')), new Response(null, { status: 204 }));
    const client = createShortlinkClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch });
    expect((await unwrap(client.GET('/api/v1/links/{code}', { params: { path: { code: 'x' } } }))).code).toBe('x');
    expect(await unwrap(client.DELETE('/api/v1/links/{code}', { params: { path: { code: 'x' } } }))).toBeUndefined();
  });

  it('throws the problem+json answer with its stable code, status, detail and VALIDATION_FAILED issues', async () => {
    const issues = [{ in: 'body', path: 'url', message: 'Invalid URL' }];
    const { fetch } = recorder(
      problem(400, 'VALIDATION_FAILED', 'The request is not valid', { errors: issues }),
      problem(404, 'LINK_NOT_FOUND', 'No link nope'),
    );
    const client = createShortlinkClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch });
    const error = await unwrap(client.POST('/api/v1/links', { body: { url: 'nope' } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShortlinkApiError);
    expect(error).toMatchObject({
      name: 'ShortlinkApiError',
      status: 400,
      code: 'VALIDATION_FAILED',
      detail: 'The request is not valid',
      errors: issues,
      retryAfterSeconds: null,
    });
    expect((error as Error).message).toBe('VALIDATION_FAILED (400): The request is not valid');
    const missing = await unwrap(client.GET('/api/v1/links/{code}', { params: { path: { code: 'nope' } } })).catch((e: unknown) => e);
    expect(isShortlinkApiError(missing, 'LINK_NOT_FOUND')).toBe(true);
    expect(isShortlinkApiError(missing, 'VALIDATION_FAILED', 'ALIAS_TAKEN')).toBe(false);
    expect(isShortlinkApiError(new Error('LINK_NOT_FOUND'))).toBe(false);
  });

  it('carries Retry-After of a 429 (seconds or a date)', async () => {
    const { fetch } = recorder(problem(429, 'RATE_LIMITED', 'Slow down', {}), problem(429, 'RATE_LIMITED', 'Slow down'));
    const client = createShortlinkClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch });
    const limited = await unwrap(client.GET('/api/v1/keys')).catch((e: unknown) => e);
    expect(limited).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: null });
    const res = new Response('', { headers: { 'retry-after': '7' } });
    expect(retryAfterSeconds(res)).toBe(7);
    expect(retryAfterSeconds(new Response('', { headers: { 'retry-after': new Date(60_000).toUTCString() } }), 0)).toBe(60);
    expect(retryAfterSeconds(new Response(''))).toBeNull();
  });

  it('gives NETWORK_ERROR when no answer came and UNEXPECTED_RESPONSE for an answer that is not a problem', async () => {
    const { fetch } = recorder(new TypeError('fetch failed'), new Response('<html>Bad gateway</html>', { status: 502 }));
    const client = createShortlinkClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch });
    const down = await unwrap(client.GET('/api/v1/keys')).catch((e: unknown) => e);
    expect(down).toMatchObject({ status: 0, code: 'NETWORK_ERROR', detail: 'The API did not answer: fetch failed' });
    expect((down as Error).cause).toBeInstanceOf(TypeError);
    const proxy = await unwrap(client.GET('/api/v1/keys')).catch((e: unknown) => e);
    expect(proxy).toMatchObject({ status: 502, code: 'UNEXPECTED_RESPONSE', detail: 'The API answered 502: <html>Bad gateway</html>' });
    expect(problemOf(undefined, new Response(null, { status: 500 }))).toMatchObject({ status: 500, code: 'UNEXPECTED_RESPONSE' });
  });

  it('types the codes of the document (a code the API does not have fails the type check)', () => {
    const known: ProblemCode[] = ['LINK_NOT_FOUND', 'VALIDATION_FAILED', 'INSUFFICIENT_SCOPE', 'ALIAS_TAKEN'];
    // @ts-expect-error not a code of the API's document
    const unknown: ProblemCode = 'NO_SUCH_CODE';
    expect([...known, unknown]).toHaveLength(5);
  });
});

describe('retries (opt-in)', () => {
  it('sends a 429 again after its Retry-After, then answers; gives up after `retries`', async () => {
    const waits: number[] = [];
    const limited = () => problem(429, 'RATE_LIMITED', 'Slow down', {});
    const withWait = (r: Response) => new Response(r.body, { status: r.status, headers: { ...Object.fromEntries(r.headers), 'retry-after': '2' } });
    const { requests, fetch } = recorder(withWait(limited()), json(201, link('ok')), withWait(limited()), withWait(limited()));
    const retrying = retryingFetch(fetch, 1, 60, async (ms) => void waits.push(ms));
    const client = createShortlinkClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch: retrying });
    expect((await unwrap(client.POST('/api/v1/links', { body: { url: 'https://example.com/' } }))).code).toBe('ok');
    expect(await requests[1].json()).toEqual({ url: 'https://example.com/' }); // the body went again
    await expect(unwrap(client.GET('/api/v1/keys'))).rejects.toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 2 });
    expect(waits).toEqual([2000, 2000]);
    expect(requests).toHaveLength(4);
  });

  it('does not send a write again after a 503 (it may have been done)', async () => {
    const { requests, fetch } = recorder(problem(503, 'SHARD_UNAVAILABLE', 'Down'));
    const client = createShortlinkClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch: retryingFetch(fetch, 3, 60, async () => undefined) });
    await expect(unwrap(client.POST('/api/v1/links', { body: { url: 'https://example.com/' } }))).rejects.toMatchObject({ code: 'SHARD_UNAVAILABLE' });
    expect(requests).toHaveLength(1);
  });
});

describe('cursor paging', () => {
  it('walks every page of GET /api/v1/links with the cursor and the filters, fetching a page only when needed', async () => {
    const { requests, fetch } = recorder(
      json(200, { links: [link('c'), link('b')], nextCursor: 'cur-1' }),
      json(200, { links: [link('a')], nextCursor: null }),
      json(200, { links: [link('c'), link('b')], nextCursor: 'cur-1' }),
    );
    const client = createShortlinkClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch });
    const codes: string[] = [];
    for await (const l of listLinks(client, { tag: 'promo', limit: 2 })) codes.push(l.code);
    expect(codes).toEqual(['c', 'b', 'a']);
    expect(requests.map((r) => new URL(r.url).search)).toEqual(['?tag=promo&limit=2', '?tag=promo&limit=2&cursor=cur-1']);
    for await (const l of listLinks(client)) {
      expect(l.code).toBe('c');
      break; // stopping early fetches no further page
    }
    expect(requests).toHaveLength(3);
  });

  it('pages one at a time; a failing page throws its problem', async () => {
    const { fetch } = recorder(json(200, { links: [link('b')], nextCursor: 'x' }), problem(400, 'INVALID_CURSOR', 'Bad cursor'));
    const client = createShortlinkClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch });
    const seen: number[] = [];
    const walk = async () => {
      for await (const page of linkPages(client)) seen.push(page.items.length);
    };
    await expect(walk()).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    expect(seen).toEqual([1]);
  });

  it('stops with an error instead of looping when a server answers a cursor twice', async () => {
    const answers = [
      { items: [1], nextCursor: 'a' },
      { items: [2], nextCursor: 'b' },
      { items: [3], nextCursor: 'a' },
    ];
    const cursors: Array<string | undefined> = [];
    const items: number[] = [];
    const walk = async () => {
      for await (const n of paginate(async (cursor) => (cursors.push(cursor), answers.shift()!))) items.push(n);
    };
    await expect(walk()).rejects.toThrow('the API answered the cursor a twice');
    expect(items).toEqual([1, 2, 3]);
    expect(cursors).toEqual([undefined, 'a', 'b']);
    const empty: number[] = [];
    for await (const page of pages(async () => ({ items: [] as number[], nextCursor: null }))) empty.push(page.items.length);
    expect(empty).toEqual([0]);
  });
});
