import { PassThrough, Readable } from 'stream';
import { InProcessGeneration, startGenerationInProcess } from '../testing/in-process-generation';

/** Batch creation and bulk changes in process (Fastify's inject) on the embedded adapters of a temp dir. */
describe('batch and bulk API', () => {
  const OPERATOR = 'sl_batch_api_spec_operator_0123456789';
  let g: InProcessGeneration;

  beforeAll(async () => {
    g = await startGenerationInProcess(OPERATOR, {
      PLAN_FREE_BATCH_ROWS_PER_DAY: '30',
      BATCH_CHUNK_ROWS: '20',
      BATCH_MAX_ROWS: '500',
      BATCH_MAX_BODY_BYTES: '200000',
      PLAN_FREE_CONCURRENT_BATCHES: '2',
    });
  }, 60_000);

  afterAll(() => g?.close());

  const newKey = async (plan = 'paid'): Promise<string> =>
    (await g.call(OPERATOR, 'POST', '/api/v1/admin/tenants', { name: `t-${Math.random()}`, plan })).json().apiKey;
  const post = (key: string, payload: string, type = 'application/x-ndjson', headers: Record<string, string> = {}) =>
    g.app.inject({ method: 'POST', url: '/api/v1/links/batch', headers: { 'x-api-key': key, 'content-type': type, ...headers }, payload });
  const lines = (body: string) =>
    body
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { row: number; status: number; link?: { code: string; url: string; tags: string[] }; problem?: { code: string } });
  const ndjson = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n');

  it('creates from NDJSON and from a JSON array: one line per row, links like a single create, problems like its problem+json', async () => {
    const key = await newKey();
    const rows = [
      { url: 'https://example.com/a', tags: ['spring'], title: 'A' },
      { url: 'javascript:alert(1)' },
      { url: 'https://example.com/c', alias: 'batch-spec-c' },
      { url: 'https://example.com/d', nope: 1 },
    ];
    const res = await post(key, ndjson(rows));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers['ratelimit-limit']).toBe('10000');
    const out = lines(res.body);
    expect(out.map((l) => [l.row, l.status, l.problem?.code])).toEqual([
      [0, 201, undefined],
      [1, 400, 'INVALID_URL'],
      [2, 201, undefined],
      [3, 400, 'VALIDATION_FAILED'],
    ]);
    const single = (await g.call(key, 'GET', `/api/v1/links/${out[0].link!.code}`)).json();
    expect(out[0].link).toEqual(single);
    const { instance: _instance, ...singleProblem } = (await g.call(key, 'POST', '/api/v1/links', rows[1])).json();
    expect(out[1].problem).toEqual(singleProblem);

    const array = await post(
      key,
      JSON.stringify([{ url: 'https://example.com/e' }, { url: 'https://example.com/c', alias: 'batch-spec-c' }]),
      'application/json',
    );
    expect(lines(array.body).map((l) => [l.status, l.problem?.code])).toEqual([
      [201, undefined],
      [409, 'ALIAS_TAKEN'],
    ]);
  });

  it('answers a retry with the same Idempotency-Key with the same lines, marked replayed; other rows under that key are 422', async () => {
    const key = await newKey();
    const rows = ndjson(Array.from({ length: 45 }, (_, i) => ({ url: `https://example.com/idem/${i}` })));
    const first = await post(key, rows, undefined, { 'idempotency-key': 'spec-1' });
    const again = await post(key, rows, undefined, { 'idempotency-key': 'spec-1' });
    expect(again.statusCode).toBe(200);
    expect(lines(first.body).some((l) => 'replayed' in l)).toBe(false);
    expect(lines(again.body)).toEqual(lines(first.body).map((l) => ({ ...l, replayed: true })));
    expect((await g.call(key, 'GET', '/api/v1/links?limit=100')).json().links).toHaveLength(45);
    const other = await post(key, ndjson([{ url: 'https://example.com/other' }]), undefined, { 'idempotency-key': 'spec-1' });
    expect(other.statusCode).toBe(422);
    expect(other.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    // Keys are per tenant: another tenant's batch under the same key is its own.
    expect(lines((await post(await newKey(), rows, undefined, { 'idempotency-key': 'spec-1' })).body).map((l) => l.status)).toEqual(Array(45).fill(201));
    expect((await post(key, rows, undefined, { 'idempotency-key': 'not ascii ü' })).json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      header: 'idempotency-key',
    });
  });

  it('charges the free plan’s daily batch rows: the rows beyond are QUOTA_EXCEEDED, and the request counted once', async () => {
    const key = await newKey('free');
    const res = await post(key, ndjson(Array.from({ length: 40 }, (_, i) => ({ url: `https://example.com/q/${i}` }))));
    const out = lines(res.body);
    expect(out.filter((l) => l.status === 201)).toHaveLength(30);
    expect(out.slice(30).map((l) => [l.status, l.problem?.code])).toEqual(Array(10).fill([429, 'QUOTA_EXCEEDED']));
    expect(res.headers['ratelimit-remaining']).toBe('99'); // the key's first request: 40 rows, one request
  });

  it('refuses what it cannot read: other media types 415, a body declared too large 413, too many rows end with BATCH_TOO_LARGE', async () => {
    const key = await newKey();
    expect((await post(key, 'url\nhttps://example.com', 'text/csv')).statusCode).toBe(415);
    const declared = await g.app.inject({
      method: 'POST',
      url: '/api/v1/links/batch',
      headers: { 'x-api-key': key, 'content-type': 'application/x-ndjson', 'content-length': '300000' },
      payload: '{}',
    });
    expect(declared.statusCode).toBe(413);
    expect(declared.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    const many = lines((await post(key, ndjson(Array.from({ length: 501 }, () => ({ url: 'https://example.com/' }))))).body);
    expect(many).toHaveLength(501);
    expect(many[500]).toMatchObject({ row: 500, status: 413, problem: { code: 'BATCH_TOO_LARGE' } });
    // Sent without a length (chunked): the limit holds as the bytes arrive.
    const chunked = Readable.from(Array.from({ length: 6 }, () => JSON.stringify({ url: `https://example.com/${'x'.repeat(50_000)}` }) + '\n'));
    const big = lines(
      (
        await g.app.inject({
          method: 'POST',
          url: '/api/v1/links/batch',
          headers: { 'x-api-key': key, 'content-type': 'application/x-ndjson' },
          payload: chunked,
        })
      ).body,
    );
    expect(big.map((l) => l.problem?.code)).toEqual(['VALIDATION_FAILED', 'VALIDATION_FAILED', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE']);
    // The single create keeps its own 1 MiB JSON body and its 415 for NDJSON.
    const single = await g.app.inject({
      method: 'POST',
      url: '/api/v1/links',
      headers: { 'x-api-key': key, 'content-type': 'application/x-ndjson' },
      payload: '{"url":"https://example.com/"}',
    });
    expect(single.statusCode).toBe(415);
    expect((await g.call(null, 'POST', '/api/v1/links/batch', [])).statusCode).toBe(401);
  });

  it('runs at most the plan’s batches of a tenant at once: the next is 429 BATCH_CONCURRENCY_LIMIT until one has ended', async () => {
    const key = await newKey('free'); // PLAN_FREE_CONCURRENT_BATCHES=2 here
    const trickling = () => {
      const body = new PassThrough();
      body.write(JSON.stringify({ url: 'https://example.com/slow' }) + '\n');
      const headers = { 'x-api-key': key, 'content-type': 'application/x-ndjson' };
      return { body, answer: g.app.inject({ method: 'POST', url: '/api/v1/links/batch', headers, payload: body }) };
    };
    const open = [trickling(), trickling()];
    await new Promise((r) => setTimeout(r, 200)); // both have passed the guard and hold their slot
    const refused = await post(key, ndjson([{ url: 'https://example.com/third' }]));
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'BATCH_CONCURRENCY_LIMIT', limit: 2 });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await post(await newKey('free'), ndjson([{ url: 'https://example.com/other-tenant' }]))).statusCode).toBe(200);
    open[0].body.end();
    expect(lines((await open[0].answer).body).map((l) => l.status)).toEqual([201]);
    expect((await post(key, ndjson([{ url: 'https://example.com/after' }]))).statusCode).toBe(200);
    open[1].body.end();
    await open[1].answer;
  });

  it('edits and deletes in bulk by code and by tag, with a line per link and the links of other tenants left alone', async () => {
    const key = await newKey();
    const created = lines(
      (await post(key, ndjson(Array.from({ length: 6 }, (_, i) => ({ url: `https://example.com/bulk/${i}`, tags: i < 4 ? ['promo'] : [] }))))).body,
    ).map((l) => l.link!.code);
    const stranger = (await g.call(await newKey(), 'POST', '/api/v1/links', { url: 'https://example.com/theirs' })).json().code;
    const edit = await g.call(key, 'PATCH', '/api/v1/links/bulk', {
      links: [created[4], { code: stranger }, { code: created[5] }],
      edit: { title: 'Renamed', tags: ['done'] },
    });
    expect(edit.statusCode).toBe(200);
    expect(lines(edit.body).map((l) => [l.status, (l as { link?: { title: string } }).link?.title ?? l.problem?.code])).toEqual([
      [200, 'Renamed'],
      [404, 'LINK_NOT_FOUND'],
      [200, 'Renamed'],
    ]);
    const byTag = await g.call(key, 'PATCH', '/api/v1/links/bulk', { tag: 'promo', edit: { url: 'https://example.com/new-target' } });
    expect(lines(byTag.body).map((l) => l.link?.url)).toEqual(Array(4).fill('https://example.com/new-target'));
    const removed = await g.call(key, 'DELETE', '/api/v1/links/bulk', { tag: 'promo' });
    expect(lines(removed.body).map((l) => l.status)).toEqual([204, 204, 204, 204]);
    expect((await g.call(key, 'GET', `/api/v1/links/${created[0]}`)).statusCode).toBe(404);
    expect((await g.call(key, 'GET', '/api/v1/links')).json().links).toHaveLength(2);
    expect((await g.call(key, 'DELETE', '/api/v1/links/bulk', { tag: 'promo', links: ['x'] })).json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await g.call(key, 'PATCH', '/api/v1/links/bulk', { links: [created[4]], edit: { url: 'ftp://x' } })).body).toContain('INVALID_URL');
  });

  it('publishes the routes with their scope and media types', async () => {
    const doc = (await g.call(null, 'GET', '/docs/openapi.json')).json();
    const batch = doc.paths['/api/v1/links/batch'].post;
    expect(Object.keys(batch.requestBody.content).sort()).toEqual(['application/json', 'application/x-ndjson']);
    expect(Object.keys(batch.responses['200'].content)).toEqual(['application/x-ndjson']);
    expect(batch.description).toContain('links:write');
    expect(Object.keys(doc.paths['/api/v1/links/bulk']).sort()).toEqual(['delete', 'patch']);
  });
});
