import { creationOf, describeError, editOf, parseCommand, run, UsageError } from './cli';

/** A command line run against answers given in order (the e2e suites run the CLI against the apps); what it sent and printed. */
async function runWith(argv: string[], answers: Response[], settings = { apiUrl: 'http://api.test', apiKey: 'sl_k' as string | null }) {
  const requests: Request[] = [];
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, settings, { out: (l) => out.push(l), err: (l) => err.push(l) }, async (request) => {
    requests.push(request);
    const next = answers.shift();
    if (!next) throw new TypeError('fetch failed');
    return next;
  });
  return { code, requests, out, err };
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });

describe('shortlink CLI: arguments', () => {
  it('maps links create flags to the create body; --body adds any other option, the flags win', () => {
    const p = parseCommand([
      'links',
      'create',
      'https://example.com/',
      '--alias',
      'a1',
      '--tag',
      'x',
      '--tag',
      'y',
      '--max-clicks',
      '5',
      '--disabled',
      '--body',
      '{"utm":{"source":"m"},"title":"B"}',
      '--title',
      'T',
    ]);
    expect(creationOf(p)).toEqual({
      url: 'https://example.com/',
      alias: 'a1',
      tags: ['x', 'y'],
      maxClicks: 5,
      status: 'disabled',
      utm: { source: 'm' },
      title: 'T',
    });
  });

  it('maps links update flags to the edit, --clear to null; refuses an edit that changes nothing or clears an unknown field', () => {
    expect(editOf(parseCommand(['links', 'update', 'a1', '--status', 'disabled', '--clear', 'maxClicks', '--clear', 'tags']))).toEqual({
      status: 'disabled',
      maxClicks: null,
      tags: null,
    });
    expect(() => editOf(parseCommand(['links', 'update', 'a1']))).toThrow('nothing to change');
    expect(() => editOf(parseCommand(['links', 'update', 'a1', '--clear', 'url']))).toThrow('--clear takes one of');
    expect(() => editOf(parseCommand(['links', 'update', 'a1', '--status', 'gone']))).toThrow('--status is active or disabled');
  });

  it('refuses unknown commands and flags, missing or extra arguments, and values of the wrong kind (UsageError)', () => {
    expect(() => parseCommand(['links', 'frobnicate'])).toThrow('unknown command: links frobnicate');
    expect(() => parseCommand(['links', 'get'])).toThrow('links get takes <code>, got 0');
    expect(() => parseCommand(['keys', 'list', 'extra'])).toThrow('keys list takes no argument, got 1');
    expect(() => parseCommand(['links', 'get', 'a', '--colour', 'red'])).toThrow(UsageError);
    expect(() => creationOf(parseCommand(['links', 'create', 'u', '--max-clicks', 'many']))).toThrow('--max-clicks takes a whole number');
    expect(() => creationOf(parseCommand(['links', 'create', 'u', '--body', '[1]']))).toThrow('--body takes a JSON object');
    expect(parseCommand(['--help']).command).toBe('help');
  });
});

describe('shortlink CLI: runs', () => {
  it('sends the key and the command through the SDK and prints the result; --api overrides SHORTLINK_API_URL', async () => {
    const link = { code: 'a1', domain: 's.test', status: 'active', shortUrl: 'http://s.test/a1', url: 'https://example.com/' };
    const { code, requests, out } = await runWith(
      ['links', 'create', 'https://example.com/', '--alias', 'a1', '--api', 'http://other.test/'],
      [json(201, link)],
    );
    expect(code).toBe(0);
    expect(out).toEqual(['http://s.test/a1']);
    expect([requests[0].method, requests[0].url, requests[0].headers.get('x-api-key')]).toEqual(['POST', 'http://other.test/api/v1/links', 'sl_k']);
  });

  it('lists every page (by the cursor) up to --limit, one tab-separated line per link', async () => {
    const l = (code: string) => ({ code, domain: 's.test', status: 'active', shortUrl: `http://s.test/${code}`, url: `https://example.com/${code}` });
    const { code, requests, out } = await runWith(
      ['links', 'list', '--tag', 'p', '--limit', '3'],
      [json(200, { links: [l('c'), l('b')], nextCursor: 'n1' }), json(200, { links: [l('a'), l('z')], nextCursor: 'n2' })],
    );
    expect(code).toBe(0);
    expect(out).toEqual([
      'c\ts.test\tactive\thttp://s.test/c\thttps://example.com/c',
      'b\ts.test\tactive\thttp://s.test/b\thttps://example.com/b',
      'a\ts.test\tactive\thttp://s.test/a\thttps://example.com/a',
    ]);
    expect(requests.map((r) => new URL(r.url).search)).toEqual(['?limit=3&tag=p', '?limit=3&tag=p&cursor=n1']);
  });

  it('prints a problem’s code, status, detail and fields on stderr, exit 1; usage 2; no key 2; no answer 3', async () => {
    const refused = await runWith(
      ['links', 'create', 'x'],
      [
        json(400, {
          status: 400,
          code: 'VALIDATION_FAILED',
          detail: 'The request is not valid',
          errors: [{ in: 'body', path: 'url', message: 'Invalid URL' }],
        }),
      ],
    );
    expect(refused).toMatchObject({ code: 1, out: [], err: ['error: VALIDATION_FAILED (400): The request is not valid', '  url: Invalid URL'] });
    expect((await runWith(['links', 'nope'], [])).code).toBe(2);
    const noKey = await runWith(['keys', 'list'], [], { apiUrl: 'http://api.test', apiKey: null });
    expect(noKey).toMatchObject({ code: 2, err: [expect.stringContaining('SHORTLINK_API_KEY is not set'), expect.stringContaining('usage:')] });
    const down = await runWith(['keys', 'list'], []);
    expect(down).toMatchObject({ code: 3, err: ['error: NETWORK_ERROR: The API did not answer: fetch failed'] });
    expect(describeError(new Error('boom'))).toEqual({ lines: ['error: boom'], exitCode: 3 });
  });

  it('keys create prints the secret alone on stdout (the rest on stderr); delete and revoke say what they did', async () => {
    const issued = {
      key: {
        id: 'k1',
        name: 'ci',
        prefix: 'sl_ab',
        scopes: ['links:read'],
        activeScopes: ['links:read'],
        actsFor: null,
        status: 'active',
        createdAt: 'x',
        expiresAt: null,
        revokedAt: null,
      },
      apiKey: 'sl_secret',
    };
    const created = await runWith(['keys', 'create', 'ci', '--scope', 'links:read'], [json(201, issued)]);
    expect(created).toMatchObject({ code: 0, out: ['sl_secret'], err: [expect.stringContaining('shown this once')] });
    expect(await created.requests[0].json()).toEqual({ name: 'ci', scopes: ['links:read'] });
    const revoked = await runWith(['keys', 'revoke', 'k1'], [new Response(null, { status: 204 })]);
    expect(revoked).toMatchObject({ code: 0, out: ['revoked k1'] });
    expect([revoked.requests[0].method, new URL(revoked.requests[0].url).pathname]).toEqual(['DELETE', '/api/v1/keys/k1']);
    const deleted = await runWith(['links', 'delete', 'a1', '--domain', 'go.test', '--if-match', '"3"'], [new Response(null, { status: 204 })]);
    expect(deleted).toMatchObject({ code: 0, out: ['deleted go.test/a1'] });
    expect([deleted.requests[0].url, deleted.requests[0].headers.get('if-match')]).toEqual(['http://api.test/api/v1/links/a1?domain=go.test', '"3"']);
  });
});
