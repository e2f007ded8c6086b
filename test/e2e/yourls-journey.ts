import { execFile, execFileSync } from 'child_process';
import { join } from 'path';
import { Endpoints, eventually, REPO_ROOT } from '@shortlink/harness';
import { redirectOf } from './support';
import { api } from './tenant-journey';

/**
 * YOURLS API driven by the `yourls` PyPI client (YOURLSClient 1.2.3, in a venv that
 * tools/ci/yourls-client.sh makes), as a YOURLS user's scripts call it, plus the formats and
 * refusals with plain HTTP. Each profile's spec starts the apps and gives a fresh tenant.
 */

type Auth = { signature: string } | { username: string; password: string } | { timed: { username: string; token: string; hash?: string; offset?: number } };
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the client's answers, each checked by the assertions that read it
type Out = Record<string, any>;

let python: string | null = null;
/** The venv's python with the `yourls` client (made once per machine). */
function yourlsPython(): string {
  python ??= execFileSync('bash', [join(REPO_ROOT, 'tools/ci/yourls-client.sh')], { encoding: 'utf8', timeout: 300_000 })
    .trim()
    .split('\n')
    .pop()!;
  return python;
}

/** One call of the real client. */
export function yourlsClient(apiurl: string, auth: Auth, call: string, args: Record<string, unknown> = {}): Promise<Out> {
  return new Promise((resolve, reject) => {
    execFile(
      yourlsPython(),
      [join(REPO_ROOT, 'test/e2e/clients/yourls_client.py'), JSON.stringify({ apiurl, auth, call, args })],
      { timeout: 30_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as Out)),
    );
  });
}

async function raw(url: string, init?: RequestInit) {
  const res = await fetch(url, init);
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text(), headers: res.headers };
}

export function describeYourlsJourney(
  endpoints: () => Endpoints,
  tenant: () => Promise<{ tenantId: string; apiKey: string }>,
  /** A tenant on the free plan, whose window the rate-limit test uses up. */
  freeTenant: () => Promise<{ tenantId: string; apiKey: string }>,
) {
  describe('YOURLS API with the yourls PyPI client', () => {
    let apiKey: string;
    let signature: string;
    let username: string;
    let apiurl: string;
    let created: Out;

    beforeAll(async () => {
      yourlsPython();
      ({ apiKey } = await tenant());
      const credentials = await api(endpoints().generation, 'GET', '/api/v1/compat/yourls/signature', apiKey);
      expect(credentials.status).toBe(200);
      ({ signature, username } = credentials.body as { signature: string; username: string });
      apiurl = `${endpoints().generation}/yourls-api.php`;
    }, 320_000);

    it('shortens with the key’s signature; the short URL redirects; the same URL again is YOURLS’ "already exists"', async () => {
      created = await yourlsClient(apiurl, { signature }, 'shorten', { url: 'https://example.com/yourls/one', title: 'One' });
      expect(created).toMatchObject({ url: 'https://example.com/yourls/one', title: 'One', ip: '' });
      expect(created.shorturl).toMatch(new RegExp(`/${created.keyword}$`));
      const res = await redirectOf(endpoints(), created.keyword);
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('https://example.com/yourls/one');
      const again = await yourlsClient(apiurl, { signature }, 'shorten', { url: 'https://example.com/yourls/one' });
      expect(again.error).toBe('YOURLSURLExistsError');
      expect(again.url.shorturl).toBe(created.shorturl);
    });

    it('takes a keyword; a taken keyword is YOURLSKeywordExistsError; a short URL or no URL is refused', async () => {
      const kw = `y${Date.now().toString(36)}`;
      const made = await yourlsClient(apiurl, { signature }, 'shorten', { url: 'https://example.com/yourls/two', keyword: kw });
      expect(made.keyword).toBe(kw);
      const taken = await yourlsClient(apiurl, { signature }, 'shorten', { url: 'https://example.com/yourls/other', keyword: kw });
      expect(taken).toMatchObject({ error: 'YOURLSKeywordExistsError', keyword: kw });
      const loop = await yourlsClient(apiurl, { signature }, 'shorten', { url: created.shorturl });
      expect(loop).toMatchObject({ error: 'YOURLSNoLoopError', message: 'URL is a short URL' });
      const none = await yourlsClient(apiurl, { signature }, 'shorten', { url: '' });
      expect(none).toMatchObject({ error: 'YOURLSNoURLError', message: 'Missing or malformed URL' });
    });

    it('expands a keyword or a short URL; an unknown one is 404 "Error: short URL not found"', async () => {
      expect(await yourlsClient(apiurl, { signature }, 'expand', { short: created.keyword })).toEqual({ longurl: 'https://example.com/yourls/one' });
      expect(await yourlsClient(apiurl, { signature }, 'expand', { short: created.shorturl })).toEqual({ longurl: 'https://example.com/yourls/one' });
      expect(await yourlsClient(apiurl, { signature }, 'expand', { short: 'nosuchkw9' })).toMatchObject({
        error: 'YOURLSHTTPError',
        message: 'Error: short URL not found',
        status: 404,
      });
    });

    it('url-stats, stats and db-stats count the redirects from the analytics store (username + password client)', async () => {
      await redirectOf(endpoints(), created.keyword);
      const byPassword: Auth = { username, password: apiKey };
      const stats = await eventually(
        'both redirects counted',
        async () => {
          const s = await yourlsClient(apiurl, byPassword, 'url_stats', { short: created.keyword });
          return s.clicks === 2 && s;
        },
        60_000,
        500,
      );
      expect(stats).toMatchObject({ url: 'https://example.com/yourls/one', shorturl: created.shorturl, title: 'One' });
      const top = await yourlsClient(apiurl, byPassword, 'stats', { filter: 'top', limit: 2 });
      expect(top.links[0]).toMatchObject({ shorturl: created.shorturl, clicks: 2 });
      expect(top.links[1].clicks).toBe(0);
      expect(top).toMatchObject({ total_links: 2, total_clicks: 2 });
      const last = await yourlsClient(apiurl, byPassword, 'stats', { filter: 'last', limit: 1 });
      expect(last.links[0].keyword).not.toBe(created.keyword);
      expect(await yourlsClient(apiurl, byPassword, 'db_stats')).toEqual({ total_links: 2, total_clicks: 2 });
      // The key's id is its username too; another username with the key is refused.
      expect((await yourlsClient(apiurl, { username: 'someone', password: apiKey }, 'db_stats')).status).toBe(403);
    }, 90_000);

    it('takes time-limited signatures (md5 by default, hash=sha512), within ±15 minutes only', async () => {
      const timed = (hash?: string, offset = 0): Auth => ({ timed: { username, token: signature, hash, offset } });
      expect(await yourlsClient(apiurl, timed(), 'expand', { short: created.keyword })).toEqual({ longurl: 'https://example.com/yourls/one' });
      expect(await yourlsClient(apiurl, timed('sha512', -600), 'expand', { short: created.keyword })).toEqual({ longurl: 'https://example.com/yourls/one' });
      const stale = await yourlsClient(apiurl, timed('md5', -1200), 'expand', { short: created.keyword });
      expect(stale).toMatchObject({ error: 'YOURLSHTTPError', status: 403 });
      expect(stale.message).toMatch(/^Expired signature/);
      const forged = await yourlsClient(apiurl, { timed: { username, token: `${signature}x` } }, 'expand', { short: created.keyword });
      expect(forged).toMatchObject({ status: 403, message: 'Invalid username or password' });
    });

    it('answers xml by default, simple, jsonp with a checked callback, and POSTed forms', async () => {
      const q = (params: Record<string, string>) => `${apiurl}?${new URLSearchParams({ signature, ...params })}`;
      const xml = await raw(q({ action: 'expand', shorturl: created.keyword }));
      expect(xml.type).toMatch(/^application\/xml/);
      expect(xml.text).toContain('<result><keyword>');
      expect(xml.text).toContain('<longurl>https://example.com/yourls/one</longurl>');
      const simple = await raw(q({ action: 'expand', shorturl: created.keyword, format: 'simple' }));
      expect(simple).toMatchObject({ status: 200, text: 'https://example.com/yourls/one' });
      expect(simple.type).toMatch(/^text\/plain/);
      const jsonp = await raw(q({ action: 'url-stats', shorturl: created.keyword, format: 'jsonp', callback: 'app.done' }));
      expect(jsonp.type).toMatch(/^application\/javascript/);
      expect(jsonp.text).toMatch(/^app\.done\(\{.*"message":"success".*\}\)$/);
      const evil = await raw(q({ action: 'expand', shorturl: created.keyword, format: 'jsonp', callback: 'alert(1)//' }));
      expect(evil.status).toBe(400);
      expect(JSON.parse(evil.text).message).toBe('Invalid or missing "callback" parameter');
      const form = await raw(apiurl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ signature, action: 'shorturl', url: 'https://example.com/yourls/form', format: 'simple' }).toString(),
      });
      expect(form.status).toBe(200);
      expect(form.text).toMatch(/^http.*\/[A-Za-z0-9]{7}$/);
      expect(form.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    });

    it('refuses: no credentials, a forged or revoked key’s signature, a scope the key lacks, an unknown action; audits with the key', async () => {
      const json = async (params: Record<string, string>) => {
        const r = await raw(`${apiurl}?${new URLSearchParams({ format: 'json', ...params })}`);
        return { status: r.status, body: JSON.parse(r.text) as Out };
      };
      expect(await json({ action: 'db-stats' })).toEqual({ status: 403, body: { errorCode: 403, message: 'Please log in' } });
      expect(await json({ action: 'db-stats', signature: `${signature.slice(0, -2)}zz` })).toEqual({
        status: 403,
        body: { errorCode: 403, message: 'Invalid username or password' },
      });
      expect((await json({ action: 'nope', signature })).body).toEqual({ errorCode: 400, message: 'Unknown or missing "action" parameter' });
      // A read-only key: its own signature expands but does not shorten.
      const readOnly = await api(endpoints().generation, 'POST', '/api/v1/keys', apiKey, { name: 'yourls-read', scopes: ['links:read'] });
      expect(readOnly.status).toBe(201);
      const readSig = (await api(endpoints().generation, 'GET', '/api/v1/compat/yourls/signature', readOnly.body.apiKey)).body.signature as string;
      expect((await json({ action: 'expand', shorturl: created.keyword, signature: readSig })).status).toBe(200);
      const refused = await json({ action: 'shorturl', url: 'https://example.com/yourls/ro', signature: readSig });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toMatch(/links:write/);
      // Revoking the key ends its signature (within the 1 s the key check is trusted).
      expect((await api(endpoints().generation, 'DELETE', `/api/v1/keys/${readOnly.body.key.id}`, apiKey)).status).toBe(204);
      await eventually(
        'the revoked key’s signature refused',
        async () => (await json({ action: 'expand', shorturl: created.keyword, signature: readSig })).status === 403,
      );
      // The links made through YOURLS are in the audit log, by the key that made them.
      const log = await api(endpoints().generation, 'GET', '/api/v1/audit-log?action=link.created', apiKey);
      expect(log.status).toBe(200);
      const entry = (log.body.entries as Out[]).find((e) => e.target.id === created.keyword);
      expect(entry).toMatchObject({ action: 'link.created', actor: { type: 'key' } });
    });

    it('counts against the tenant’s plan window shared with our API: 429 in YOURLS’ shape with Retry-After', async () => {
      const free = await freeTenant();
      const credentials = await api(endpoints().generation, 'GET', '/api/v1/compat/yourls/signature', free.apiKey);
      const sig = credentials.body.signature as string;
      const limit = Number(credentials.headers.get('ratelimit-limit'));
      expect(limit).toBeGreaterThan(0);
      const expand = () => raw(`${apiurl}?${new URLSearchParams({ signature: sig, action: 'expand', shorturl: 'nosuchkw9', format: 'json' })}`);
      let last = await expand();
      for (let i = 0; i < limit && last.status !== 429; i++) last = await expand();
      expect(last.status).toBe(429);
      expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(JSON.parse(last.text)).toMatchObject({ errorCode: 429, message: expect.stringMatching(/requests a minute per tenant/) });
      // The same window as the links API's.
      expect((await api(endpoints().generation, 'GET', '/api/v1/links', free.apiKey)).status).toBe(429);
    });

    it('publishes its own OpenAPI document; the generation API’s does not list it', async () => {
      const doc = await api(endpoints().generation, 'GET', '/docs/yourls/openapi.json', null);
      expect(doc.status).toBe(200);
      expect(doc.body.paths['/yourls-api.php'].get.operationId).toBe('yourlsApiGet');
      expect(doc.body.components.schemas).toHaveProperty('YourlsAnswer');
      const ours = await api(endpoints().generation, 'GET', '/docs/openapi.json', null);
      expect(ours.body.paths['/yourls-api.php']).toBeUndefined();
      expect(ours.body.paths['/api/v1/compat/yourls/signature'].get.operationId).toBe('getYourlsSignature');
    });
  });
}
