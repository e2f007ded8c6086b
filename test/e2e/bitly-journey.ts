import { get, globalAgent } from 'https';
import { BitlyClient } from 'bitly';
import { Endpoints, eventually } from '@shortlink/harness';
import { redirectOf } from './support';
import { api } from './tenant-journey';
import { TlsFront } from './tls-front';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Bitly's answers, each checked by the assertions that read it
type Out = Record<string, any>;

/** What the `bitly` client throws: the error body of the answer. */
async function thrown(call: Promise<unknown>): Promise<Out> {
  try {
    await call;
  } catch (error) {
    return error as Out;
  }
  throw new Error('the call did not fail');
}

/**
 * Bitly v4 subset driven by the `bitly` npm client 7.x, which only speaks https: the
 * generation app behind a TLS front with a CA of this test's own, trusted by the client's (global)
 * https agent for the duration of the journey.
 */
export function describeBitlyJourney(endpoints: () => Endpoints, tenant: () => Promise<{ tenantId: string; apiKey: string }>) {
  describe('Bitly v4 API with the bitly npm client', () => {
    let front: TlsFront;
    let apiKey: string;
    let bitly: BitlyClient;
    let created: Out;
    let previousCa: unknown;
    const base = () => `https://${front.host}/v4`;

    beforeAll(async () => {
      const { hostname, port } = new URL(endpoints().generation);
      front = await TlsFront.start({ host: hostname, port: Number(port) });
      previousCa = globalAgent.options.ca;
      globalAgent.options.ca = front.ca;
      ({ apiKey } = await tenant());
      bitly = new BitlyClient(apiKey, { apiUrl: front.host });
    });

    afterAll(async () => {
      globalAgent.options.ca = previousCa as string | undefined;
      await front?.stop();
    });

    it('shortens over https with the bare key the client sends; the bitlink redirects; the same URL gives the same bitlink', async () => {
      created = (await bitly.shorten('https://example.com/bitly/one')) as unknown as Out;
      expect(created).toMatchObject({ long_url: 'https://example.com/bitly/one', archived: false, tags: [], custom_bitlinks: [] });
      expect(created.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0000$/);
      expect(created.link).toBe(`http://${created.id}`);
      const code = created.id.split('/').pop();
      const res = await redirectOf(endpoints(), code);
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('https://example.com/bitly/one');
      expect(((await bitly.shorten('https://example.com/bitly/one')) as unknown as Out).id).toBe(created.id);
    });

    it('reads a bitlink by id, short URL or hash, expands it, and edits its title and tags (audited)', async () => {
      const hash = created.id.split('/').pop();
      for (const item of [created.id, created.link, hash]) {
        expect(await bitly.getBitlink(item)).toMatchObject({ id: created.id, long_url: 'https://example.com/bitly/one', title: '', is_deleted: false });
      }
      expect(await bitly.expand(created.link)).toEqual({
        link: created.link,
        id: created.id,
        long_url: 'https://example.com/bitly/one',
        created_at: created.created_at,
      });
      const edited = (await bitly.bitlyRequest(`bitlinks/${created.id}`, { title: 'One', tags: ['spring', 'news'] }, 'PATCH')) as Out;
      expect(edited).toMatchObject({ id: created.id, title: 'One', tags: ['spring', 'news'] });
      expect(await bitly.getBitlink(hash)).toMatchObject({ title: 'One', tags: ['spring', 'news'] });
      const log = await api(endpoints().generation, 'GET', `/api/v1/audit-log?action=link.edited&target=${hash}`, apiKey);
      expect(log.body.entries[0]).toMatchObject({ action: 'link.edited', actor: { type: 'key' }, changes: { title: { from: null, to: 'One' } } });
      const archived = await thrown(bitly.bitlyRequest(`bitlinks/${created.id}`, { archived: true }, 'PATCH'));
      expect(archived).toMatchObject({ message: 'INVALID_ARG_ARCHIVED', resource: 'bitlinks', errors: [{ field: 'archived' }] });
    });

    it('counts clicks from the analytics store: per day and minute, the summary, countries and referrers', async () => {
      const hash = created.id.split('/').pop();
      await redirectOf(endpoints(), hash, { referer: 'https://news.example/today' });
      const byDay = await eventually(
        'both redirects counted',
        async () => {
          const c = (await bitly.clicks(created.id)) as unknown as Out;
          return c.link_clicks[0]?.clicks === 2 && c;
        },
        60_000,
        500,
      );
      expect(byDay).toMatchObject({ unit: 'day', units: -1 });
      expect(byDay.link_clicks[0].date).toMatch(/T00:00:00\+0000$/);
      const byMinute = (await bitly.clicksByMinute(created.id)) as unknown as Out;
      expect(byMinute.link_clicks.reduce((n: number, b: Out) => n + b.clicks, 0)).toBe(2);
      expect(await bitly.bitlyRequest(`bitlinks/${created.id}/clicks/summary`, { unit: 'week', units: 1 }, 'GET')).toMatchObject({
        total_clicks: 2,
        unit: 'week',
        units: 1,
      });
      expect(await bitly.referrers(created.id)).toMatchObject({
        facet: 'referrers',
        metrics: expect.arrayContaining([
          { value: 'direct', clicks: 1 },
          { value: 'news.example', clicks: 1 },
        ]),
      });
      const countries = (await bitly.countries(created.id)) as unknown as Out;
      expect(countries.facet).toBe('countries');
      expect(countries.metrics.reduce((n: number, m: Out) => n + m.clicks, 0)).toBe(2);
      const badUnit = await thrown(bitly.clicks(created.id, 'fortnight' as never));
      expect(badUnit).toMatchObject({ message: 'INVALID_ARG_UNIT', errors: [{ field: 'unit' }] });
    }, 90_000);

    it('answers errors in Bitly’s shape: forbidden token, unknown bitlink, invalid URL, a scope the key lacks', async () => {
      const stranger = new BitlyClient('sl_not_a_key_of_anyone_0123456789', { apiUrl: front.host });
      expect(await thrown(stranger.shorten('https://example.com/x'))).toEqual({
        message: 'FORBIDDEN',
        description: 'You are currently forbidden to access this resource.',
        resource: 'bitlinks',
        errors: [{ field: '', message: 'unknown, revoked or expired API key', error_code: 'unauthenticated' }],
      });
      expect(await thrown(bitly.getBitlink('bit.ly/Zz9nope'))).toMatchObject({ message: 'NOT_FOUND', resource: 'bitlinks' });
      expect(await thrown(bitly.shorten('not a url'))).toMatchObject({ message: 'INVALID_ARG_LONG_URL', errors: [{ field: 'long_url' }] });
      const readOnly = await api(endpoints().generation, 'POST', '/api/v1/keys', apiKey, { name: 'bitly-read', scopes: ['links:read'] });
      const reader = new BitlyClient(readOnly.body.apiKey, { apiUrl: front.host });
      expect(await reader.expand(created.id)).toMatchObject({ id: created.id });
      expect(await thrown(reader.shorten('https://example.com/bitly/ro'))).toMatchObject({
        message: 'FORBIDDEN',
        errors: [{ error_code: 'insufficient_scope' }],
      });
    });

    it('takes `Authorization: Bearer <key>` too, with the plan’s RateLimit headers', async () => {
      // Through node:https, which trusts the test CA (fetch has a trust store of its own).
      const answer = await httpsGet(`${base()}/bitlinks/${created.id}`, { authorization: `Bearer ${apiKey}` });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
      expect(((await answer.json()) as Out).id).toBe(created.id);
    });

    it('publishes its own OpenAPI document', async () => {
      const doc = await api(endpoints().generation, 'GET', '/docs/bitly/openapi.json', null);
      expect(doc.status).toBe(200);
      expect(doc.body.paths['/v4/shorten'].post.operationId).toBe('shortenBitlink');
      expect(doc.body.paths['/v4/bitlinks/{domain}/{hash}/clicks/summary'].get.operationId).toBe('getBitlinkClicksSummary');
      expect(doc.body.components.schemas).toHaveProperty('BitlyError');
      const ours = await api(endpoints().generation, 'GET', '/docs/openapi.json', null);
      expect(Object.keys(ours.body.paths).filter((p) => p.startsWith('/v4/'))).toEqual([]);
    });
  });
}

/** A GET through node:https (which trusts the test CA through the global agent), answered as fetch's Response is read. */
function httpsGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Headers; json: () => Promise<unknown> }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: new Headers(Object.entries(res.headers).map(([k, v]): [string, string] => [k, String(v)])),
          json: async () => JSON.parse(text),
        }),
      );
    }).on('error', reject);
  });
}
