import { mkdtempSync, rmSync, statSync } from 'fs';
import { connect, Socket } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, eventually, RunningProcess } from '@shortlink/harness';
import { createLink, getStats, redirectOf, restartEmbedded, startEmbedded } from './support';

/**
 * The outside probe: what an attacker or a careless client can do to the embedded
 * profile through its public ports. Two fresh processes, each with its own data directory and no
 * bootstrap key (so each generates its own secrets and operator key):
 * - `exposed` believes no proxy, with small limits and short HTTP timeouts;
 * - `proxied` believes X-Forwarded-For from 127.0.0.1, so a test can act as many clients.
 */
describe('security: the embedded profile probed from outside', () => {
  const PER_IP = 20;
  const AUTH_FAILURES = 5;
  const limits = { RATE_LIMIT_PER_IP_PER_MINUTE: String(PER_IP), AUTH_FAILURES_PER_MINUTE: String(AUTH_FAILURES), CLICK_BUFFER_FLUSH_MS: '50' };
  const dirs: string[] = [];
  const CONSOLE_ORIGIN = 'https://console.example.com';
  let exposed: { proc: RunningProcess; endpoints: Endpoints; env: Record<string, string>; key: string };
  let proxied: { proc: RunningProcess; endpoints: Endpoints; env: Record<string, string>; key: string };

  const generatedKey = (output: string) => {
    const m = /Your API key \(shown this once; only its hash is stored\): (sl_[0-9A-Za-z]+)/.exec(output);
    if (!m) throw new Error(`no generated key in the output:\n${output}`);
    return m[1];
  };

  beforeAll(async () => {
    const start = async (extra: Record<string, string>) => {
      const dir = mkdtempSync(join(tmpdir(), 'shortlink-security-'));
      dirs.push(dir);
      const started = await startEmbedded(dir, { ...limits, ...extra });
      await eventually('the start-up banner', async () => started.proc.output().includes('Try it:'), 30_000, 100);
      return { ...started, key: generatedKey(started.proc.output()) };
    };
    [exposed, proxied] = await Promise.all([
      start({ HTTP_HEADERS_TIMEOUT_MS: '2000', HTTP_REQUEST_TIMEOUT_MS: '3000' }),
      start({ TRUSTED_PROXIES: '127.0.0.1/32,::1/128', CORS_ORIGINS: CONSOLE_ORIGIN }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([exposed?.proc.stop(), proxied?.proc.stop()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  describe('codes are keyed by a secret of each installation', () => {
    it('gives the same id unrelated codes in two fresh data directories, from 0600 secret files', async () => {
      // Both sequences are fresh: the first generated link of each gets id 1.
      const [a, b] = await Promise.all([
        createLink(exposed.endpoints, { url: 'https://example.com/first' }, exposed.key),
        createLink(proxied.endpoints, { url: 'https://example.com/first' }, proxied.key),
      ]);
      expect(a.status).toBe(201);
      expect(b.status).toBe(201);
      expect(a.body.code).toMatch(/^[0-9A-Za-z]{7}$/);
      expect(a.body.code).not.toBe(b.body.code);
      for (const dir of dirs) {
        for (const name of ['code-secret', 'visitor-secret']) expect(statSync(join(dir, 'secrets', name)).mode & 0o777).toBe(0o600);
        expect(statSync(join(dir, 'secrets')).mode & 0o777).toBe(0o700);
      }
    });
  });

  describe('client addresses', () => {
    it('counts rotating X-Forwarded-For values from an untrusted client as one visitor', async () => {
      const created = await createLink(exposed.endpoints, { url: 'https://example.com/visitors' }, exposed.key);
      const code = created.body.code as string;
      for (let i = 0; i < 3; i++) await redirectOf(exposed.endpoints, code, { 'x-forwarded-for': `192.0.2.${i}` });
      const stats = await eventually(
        'three clicks in stats',
        async () => {
          const s = await getStats(exposed.endpoints, code, exposed.key);
          return s.body.totals?.clicks === 3 ? s : null;
        },
        30_000,
        250,
      );
      expect(stats.body.totals.visitors).toBe(1);
    });

    it('does not believe X-Forwarded-For from an untrusted client: rotating it does not evade the per-IP limit', async () => {
      const created = await createLink(exposed.endpoints, { url: 'https://example.com/limited' }, exposed.key);
      await awayFromMinuteEdge();
      const statuses: number[] = [];
      for (let i = 0; i < PER_IP + 5; i++)
        statuses.push((await redirectOf(exposed.endpoints, created.body.code as string, { 'x-forwarded-for': `198.51.100.${i}` })).status);
      expect(statuses.filter((s) => s === 302).length).toBeLessThanOrEqual(PER_IP);
      expect(statuses.slice(-5)).toEqual([429, 429, 429, 429, 429]);
      // Large unique header values did not become limiter keys: one client, one key.
      const metrics = await (await fetch(`${exposed.endpoints.admin.redirect}/metrics`)).text();
      expect(metrics).toMatch(/shortlink_redirect_rate_limiter_keys\{app="redirect"\} 1\n/);
    });

    it('believes a trusted proxy: the right-most untrusted hop is the client, each with its own budget', async () => {
      const created = await createLink(proxied.endpoints, { url: 'https://example.com/proxied' }, proxied.key);
      const code = created.body.code as string;
      const from = (chain: string) => redirectOf(proxied.endpoints, code, { 'x-forwarded-for': chain });
      await awayFromMinuteEdge();
      // 6.6.6.6 is what the client wrote itself; 203.0.113.x is what the proxy saw.
      for (let i = 0; i < PER_IP; i++) expect((await from(`6.6.6.6, 203.0.113.1`)).status).toBe(302);
      expect((await from('6.6.6.6, 203.0.113.1')).status).toBe(429);
      expect((await from('6.6.6.6, 203.0.113.2')).status).toBe(302);
    });

    it('refuses forwarded values that are not IP addresses: they count as the proxy itself', async () => {
      const created = await createLink(proxied.endpoints, { url: 'https://example.com/garbage-xff' }, proxied.key);
      const code = created.body.code as string;
      const statuses: number[] = [];
      await awayFromMinuteEdge();
      for (let i = 0; i < PER_IP + 3; i++)
        statuses.push((await redirectOf(proxied.endpoints, code, { 'x-forwarded-for': `not-an-ip-${i}-${'x'.repeat(1000)}` })).status);
      expect(statuses.slice(-3)).toEqual([429, 429, 429]);
    });
  });

  describe('operator endpoints', () => {
    it('are not on the public ports, and /health tells nothing but the status', async () => {
      const { admin, ...apps } = exposed.endpoints;
      for (const base of Object.values(apps)) {
        for (const path of ['/metrics', '/internal/hot-links', '/health/details']) {
          const res = await fetch(`${base}${path}`);
          expect(res.status).toBe(404);
          expect(res.headers.get('content-type')).toContain('application/problem+json');
        }
        const health = await fetch(`${base}/health`);
        expect(await health.text()).toBe('{"status":"ok"}');
      }
      const hot = await fetch(`${admin.redirect}/internal/hot-links`);
      expect(hot.status).toBe(200);
      expect(await hot.json()).toMatchObject({ breaker: 'closed', links: expect.any(Array) });
    });
  });

  describe('the error contract at the edges', () => {
    it('refuses instants beyond the stored range and loose ISO forms with 400 INVALID_TIME_RANGE', async () => {
      for (const from of ['1733220000000', '-000001-01-01T00:00:00Z', '+275760-09-13T00:00:00.000Z']) {
        const res = await fetch(`${exposed.endpoints.analytics}/api/v1/links/abcdefg/stats?from=${encodeURIComponent(from)}`, {
          headers: { 'x-api-key': exposed.key },
        });
        expect(res.status).toBe(400);
        expect(((await res.json()) as { code: string }).code).toBe('INVALID_TIME_RANGE');
      }
    });

    it('applies the 2 048-character limit to the normalised URL (2 028 CJK characters are 18 KB encoded)', async () => {
      const res = await createLink(exposed.endpoints, { url: 'https://example.com/' + '漢'.repeat(2028) }, exposed.key);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('INVALID_URL');
    });

    it('answers errors raised below the framework as problem+json, echoing nothing of the request', async () => {
      const marker = 'ECHOMARKER';
      const longHeader = await rawRequest(
        exposed.endpoints.generation,
        `GET /api/v1/links/x HTTP/1.1\r\nHost: x\r\nX-Big: ${marker}${'a'.repeat(20_000)}\r\n\r\n`,
      );
      expect(longHeader).toMatch(/^HTTP\/1\.1 431 /);
      const badLine = await rawRequest(exposed.endpoints.generation, `GET /${marker} HTTP/9.9garbage\r\n\r\n`);
      expect(badLine).toMatch(/^HTTP\/1\.1 400 /);
      const badUrl = await fetch(`${exposed.endpoints.generation}/api/v1/links/%${marker}%zz`);
      const longParam = await fetch(`${exposed.endpoints.generation}/api/v1/links/${marker}${'a'.repeat(300)}`);
      const longPath = await fetch(`${exposed.endpoints.analytics}/${marker}${'a'.repeat(3000)}`);
      for (const [res, status] of [
        [badUrl, 400],
        [longParam, 414],
        [longPath, 404],
      ] as const) {
        expect(res.status).toBe(status);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(await res.text()).not.toContain(marker);
      }
      for (const raw of [longHeader, badLine]) {
        expect(raw).toContain('Content-Type: application/problem+json');
        expect(raw.split('\r\n\r\n')[1]).not.toContain(marker);
        expect(JSON.parse(raw.split('\r\n\r\n')[1])).toMatchObject({ status: expect.any(Number), code: expect.any(String) });
      }
    });

    it('closes connections that trickle their headers or body (here: 2 s headers, 3 s request)', async () => {
      const trickle = (base: string, head: string, count: number) =>
        Array.from({ length: count }, () => {
          const socket = connectTo(base);
          let i = 0;
          const timer = setInterval(() => (i < head.length ? socket.write(head[i++]) : socket.write('a')), 300);
          return new Promise<number>((resolve) => {
            const t0 = Date.now();
            const bound = setTimeout(() => socket.destroy(), 15_000); // a bound for the test itself
            socket.on('close', () => (clearInterval(timer), clearTimeout(bound), resolve(Date.now() - t0)));
            socket.on('error', () => undefined);
          });
        });
      const headers = 'GET /api/v1/links/abc HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(200);
      const body = 'POST /api/v1/links HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n';
      const closedAfter = await Promise.all([
        ...trickle(exposed.endpoints.generation, headers, 50),
        ...trickle(exposed.endpoints.redirect, headers, 50),
        ...trickle(exposed.endpoints.generation, body, 20),
      ]);
      expect(Math.max(...closedAfter)).toBeLessThan(6000);
    });

    it('throttles failed API key checks per client with 429 and Retry-After, never a right key from that client', async () => {
      const tryKey = (key: string, client: string) =>
        fetch(`${proxied.endpoints.generation}/api/v1/links/abcdefg`, { headers: { 'x-api-key': key, 'x-forwarded-for': client } });
      const statuses: number[] = [];
      await awayFromMinuteEdge();
      for (let i = 0; i < AUTH_FAILURES + 3; i++) statuses.push((await tryKey(`sl_guess_${i}_000000000000`, '203.0.113.50')).status);
      expect(statuses.slice(0, AUTH_FAILURES)).toEqual(Array(AUTH_FAILURES).fill(401));
      expect(statuses.slice(AUTH_FAILURES)).toEqual([429, 429, 429]);
      // Behind one NAT: the guesser's neighbour with a valid key is served (404: no such link), ...
      expect((await tryKey(proxied.key, '203.0.113.50')).status).toBe(404);
      // ... while the next guess from that address is still throttled.
      const blocked = await tryKey('sl_guess_next_000000000000', '203.0.113.50');
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await blocked.json()) as { code: string }).code).toBe('RATE_LIMITED');
      expect((await tryKey('sl_guess_other_00000000000', '203.0.113.51')).status).toBe(401); // another client has its own count
    });

    it('never echoes a key sent in the query string', async () => {
      const secret = 'sl_query_string_secret_123456';
      const res = await fetch(`${exposed.endpoints.generation}/api/v1/links/abcdefg?api_key=${secret}`);
      expect(res.status).toBe(401);
      const body = await res.text();
      expect(body).not.toContain(secret);
      expect(JSON.parse(body).instance).toBe('/api/v1/links/abcdefg');
    });
  });

  describe('browsers on other origins (CORS_ORIGINS)', () => {
    const preflight = (base: string, origin: string) =>
      fetch(`${base}/api/v1/links`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type' },
      });

    it('lets a listed origin call both APIs with its key and read the answer headers', async () => {
      for (const base of [proxied.endpoints.generation, proxied.endpoints.analytics]) {
        const pre = await preflight(base, CONSOLE_ORIGIN);
        expect(pre.status).toBe(204);
        expect(pre.headers.get('access-control-allow-origin')).toBe(CONSOLE_ORIGIN);
        expect(pre.headers.get('access-control-allow-credentials')).toBe('true');
        expect(pre.headers.get('access-control-allow-headers')).toContain('x-api-key');
      }
      const res = await fetch(`${proxied.endpoints.generation}/api/v1/links`, { headers: { origin: CONSOLE_ORIGIN, 'x-api-key': proxied.key } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(CONSOLE_ORIGIN);
      expect(res.headers.get('access-control-expose-headers')).toContain('ratelimit-remaining');
    });

    it('lets any origin call the key-authenticated compatible APIs, never with credentials, whatever CORS_ORIGINS lists', async () => {
      for (const origin of [CONSOLE_ORIGIN, 'https://shlink-ui.example']) {
        const pre = await fetch(`${proxied.endpoints.generation}/rest/v3/short-urls`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type' },
        });
        await pre.arrayBuffer();
        expect(pre.status).toBe(204);
        expect(pre.headers.get('access-control-allow-origin')).toBe('*');
        expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
        expect(pre.headers.get('access-control-allow-headers')).toContain('x-api-key');
        const res = await fetch(`${proxied.endpoints.generation}/rest/v3/tags`, { headers: { origin, 'x-api-key': proxied.key } });
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      }
    });

    it('gives an origin not listed, and every origin where none is configured, no CORS header', async () => {
      const other = await preflight(proxied.endpoints.generation, 'https://evil.example');
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const unconfigured = await preflight(exposed.endpoints.generation, CONSOLE_ORIGIN);
      expect(unconfigured.headers.get('access-control-allow-origin')).toBeNull();
      const res = await fetch(`${exposed.endpoints.generation}/api/v1/links`, { headers: { origin: CONSOLE_ORIGIN, 'x-api-key': exposed.key } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  describe('the operator key', () => {
    it('is generated on the first run, works, and is never shown again after a restart', async () => {
      expect((await createLink(exposed.endpoints, { url: 'https://example.com/with-generated-key' }, exposed.key)).status).toBe(201);
      exposed.proc = await restartEmbedded(exposed.proc, exposed.endpoints, exposed.env);
      await eventually('the start-up banner', async () => exposed.proc.output().includes('Try it:'), 30_000, 100);
      expect(exposed.proc.output()).not.toContain(exposed.key);
      expect(exposed.proc.output()).toContain('Use the API key printed at the first start');
      expect((await createLink(exposed.endpoints, { url: 'https://example.com/after-restart' }, exposed.key)).status).toBe(201);
    });
  });
});

/** The limiters count per calendar minute: start a counting test with at least 10 s of the minute left. */
async function awayFromMinuteEdge(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 10_000) await new Promise((r) => setTimeout(r, left + 100));
}

function connectTo(base: string): Socket {
  const { hostname, port } = new URL(base);
  return connect(Number(port), hostname);
}

/** Writes raw bytes and returns everything the server sends until it closes (bounded). */
function rawRequest(base: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTo(base);
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (out += d));
    socket.on('close', () => resolve(out));
    socket.on('error', (e) => (out ? resolve(out) : reject(e)));
    socket.setTimeout(5000, () => socket.destroy());
    socket.write(text);
  });
}
