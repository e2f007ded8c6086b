import { ProbeAnswer, ProbeFailure, TargetHttp } from './ports';
import { probeTarget, retryAfterMs } from './probe';

/** Answers by URL and method; records every request. */
class ScriptedHttp implements TargetHttp {
  readonly requests: string[] = [];
  constructor(private readonly answers: Record<string, ProbeAnswer | ProbeFailure | ((method: string) => ProbeAnswer)>) {}
  async request(url: string, method: 'HEAD' | 'GET'): Promise<ProbeAnswer> {
    this.requests.push(`${method} ${url}`);
    const answer = this.answers[url];
    if (answer === undefined) throw new ProbeFailure('unresolvable', `${url} is not scripted`);
    if (answer instanceof ProbeFailure) throw answer;
    return typeof answer === 'function' ? answer(method) : answer;
  }
}

const status = (s: number, location: string | null = null, retryAfter: string | null = null): ProbeAnswer => ({ status: s, location, retryAfter });

describe('one check of a target (docs/design.md, "Trust and safety", dead links)', () => {
  it('takes a 2xx HEAD as alive, and 401/403 too (a page behind a login is there)', async () => {
    expect(await probeTarget(new ScriptedHttp({ 'https://a.example/': status(200) }), 'https://a.example/', { maxRedirects: 5 })).toEqual({
      kind: 'ok',
      status: 200,
      requests: 1,
    });
    const login = new ScriptedHttp({ 'https://a.example/in': (m) => status(m === 'HEAD' ? 405 : 401) });
    expect(await probeTarget(login, 'https://a.example/in', { maxRedirects: 5 })).toMatchObject({ kind: 'ok', status: 401, requests: 2 });
  });

  it('asks again with GET when the HEAD is refused, and believes the GET', async () => {
    const http = new ScriptedHttp({ 'https://a.example/x': (m) => status(m === 'HEAD' ? 405 : 404) });
    expect(await probeTarget(http, 'https://a.example/x', { maxRedirects: 5 })).toEqual({ kind: 'broken', status: 404, error: null, requests: 2 });
    expect(http.requests).toEqual(['HEAD https://a.example/x', 'GET https://a.example/x']);
  });

  it('follows redirects, relative ones too, up to the limit; a loop is broken at once', async () => {
    const chain = new ScriptedHttp({
      'https://a.example/1': status(301, '/2'),
      'https://a.example/2': status(302, 'https://b.example/3'),
      'https://b.example/3': status(200),
    });
    expect(await probeTarget(chain, 'https://a.example/1', { maxRedirects: 5 })).toEqual({ kind: 'ok', status: 200, requests: 3 });
    expect(await probeTarget(chain, 'https://a.example/1', { maxRedirects: 1 })).toMatchObject({ kind: 'broken', error: 'too-many-redirects' });
    const loop = new ScriptedHttp({ 'https://a.example/a': status(302, '/b'), 'https://a.example/b': status(307, '/a') });
    expect(await probeTarget(loop, 'https://a.example/a', { maxRedirects: 10 })).toEqual({ kind: 'broken', status: 307, error: 'redirect-loop', requests: 2 });
    const nowhere = new ScriptedHttp({ 'https://a.example/r': status(302) });
    expect(await probeTarget(nowhere, 'https://a.example/r', { maxRedirects: 5 })).toMatchObject({ kind: 'broken', error: 'redirect-without-location' });
  });

  it('takes 404, 410 and 5xx as broken, and no answer (timeout, refused, a private address on the way) with its reason', async () => {
    for (const s of [404, 410, 500, 502]) {
      expect(await probeTarget(new ScriptedHttp({ 'https://a.example/': status(s) }), 'https://a.example/', { maxRedirects: 5 })).toMatchObject({
        kind: 'broken',
        status: s,
      });
    }
    const failures = new ScriptedHttp({
      'https://slow.example/': new ProbeFailure('timeout', 'no answer within 10000 ms'),
      'https://a.example/in': status(302, 'http://intranet.example/'),
      'http://intranet.example/': new ProbeFailure('private-address', 'resolves to 10.0.0.1'),
    });
    expect(await probeTarget(failures, 'https://slow.example/', { maxRedirects: 5 })).toEqual({ kind: 'broken', status: null, error: 'timeout', requests: 1 });
    expect(await probeTarget(failures, 'https://a.example/in', { maxRedirects: 5 })).toEqual({
      kind: 'broken',
      status: null,
      error: 'private-address',
      requests: 2,
    });
  });

  it('hears 429 and 503 with Retry-After as "later", without a verdict', async () => {
    const now = Date.UTC(2026, 11, 7);
    const busy = new ScriptedHttp({
      'https://a.example/': status(429, null, '120'),
      'https://b.example/': status(503, null, new Date(now + 30_000).toUTCString()),
    });
    expect(await probeTarget(busy, 'https://a.example/', { maxRedirects: 5, now: () => now })).toEqual({
      kind: 'wait',
      status: 429,
      retryAfterMs: 120_000,
      requests: 1,
    });
    expect(await probeTarget(busy, 'https://b.example/', { maxRedirects: 5, now: () => now })).toEqual({
      kind: 'wait',
      status: 503,
      retryAfterMs: 30_000,
      requests: 1,
    });
    expect(retryAfterMs('soon', now)).toBeNull();
  });
});
