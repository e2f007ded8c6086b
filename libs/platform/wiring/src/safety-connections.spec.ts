import { createServer, Server } from 'http';
import { AddressInfo } from 'net';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { loadConfig } from '@shortlink/config';
import { FeedReader, probeTarget, RemoteReputation, TargetHttp } from '@shortlink/safety-domain';
import { FEED_READER, REMOTE_REPUTATION, TARGET_HTTP } from '@shortlink/safety-domain';
import { startTargetTestServer, startWebRiskTestServer, TargetTestServer, WebRiskTestServer } from '@shortlink/testing';
import { safetyPort } from './ports/safety.port';

const KEY = 'test-web-risk-key';

/** The safety port as an app opens it, from the environment. */
async function openSafety(env: Record<string, string>) {
  const port = await safetyPort.open(loadConfig({ SHORTLINK_DATA_DIR: tmpdir(), ...env }));
  return {
    remote: port.bindings.get(REMOTE_REPUTATION) as RemoteReputation | null,
    targets: port.bindings.get(TARGET_HTTP) as TargetHttp,
    feeds: port.bindings.get(FEED_READER) as FeedReader,
  };
}

/**
 * The outbound side of trust and safety as the wiring composes it (every request through the pinned
 * client), against local servers: one that speaks Web Risk's documented `uris.search`, targets that
 * answer 200, 404, 5xx, hang or redirect in a loop (named `*.checks.test`, fixed to 127.0.0.1 by
 * LINK_CHECK_HOSTS), a feed with an ETag.
 */
describe('trust and safety, outbound (docs/design.md, "Trust and safety")', () => {
  let webRisk: WebRiskTestServer;
  let targets: TargetTestServer;

  beforeAll(async () => {
    webRisk = await startWebRiskTestServer(KEY);
    targets = await startTargetTestServer();
  });
  afterAll(async () => {
    await webRisk.close();
    await targets.close();
  });

  describe('Web Risk uris.search', () => {
    it('is not opened without the driver; with it, asks every configured list and turns the answer into a verdict', async () => {
      expect((await openSafety({ URL_REPUTATION_DRIVER: 'feeds' })).remote).toBeNull();
      const { remote } = await openSafety({ URL_REPUTATION_DRIVER: 'feeds+web-risk', WEB_RISK_API_KEY: KEY, WEB_RISK_ENDPOINT: webRisk.endpoint });
      webRisk.listed.set('https://malware.example/x.exe', ['MALWARE']);
      webRisk.listed.set('https://phish.example/login', ['SOCIAL_ENGINEERING']);
      webRisk.listed.set('https://pup.example/toolbar', ['UNWANTED_SOFTWARE']);
      const before = Date.now();
      const malware = await remote!.lookup('https://malware.example/x.exe');
      expect(malware.verdict).toEqual({ state: 'banned', source: 'web-risk', reason: 'Web Risk MALWARE: https://malware.example/x.exe' });
      expect(malware.expiresAt).toBeGreaterThanOrEqual(before + 299_000);
      expect((await remote!.lookup('https://phish.example/login')).verdict?.state).toBe('banned');
      expect((await remote!.lookup('https://pup.example/toolbar')).verdict).toMatchObject({
        state: 'flagged',
        reason: 'Web Risk UNWANTED_SOFTWARE: https://pup.example/toolbar',
      });
      expect(await remote!.lookup('https://fine.example/?q=a&b=c')).toEqual({ verdict: null, expiresAt: null });
      expect(webRisk.searches.at(-1)).toEqual({
        uri: 'https://fine.example/?q=a&b=c',
        threatTypes: ['MALWARE', 'SOCIAL_ENGINEERING', 'UNWANTED_SOFTWARE'],
        key: KEY,
      });
    });

    it('fails with the service’s error, never naming the key', async () => {
      const { remote } = await openSafety({ URL_REPUTATION_DRIVER: 'web-risk', WEB_RISK_API_KEY: 'wrong-key', WEB_RISK_ENDPOINT: webRisk.endpoint });
      const failure = await remote!.lookup('https://x.example/').catch((e: Error) => e.message);
      expect(failure).toBe('Web Risk answered 400 (INVALID_ARGUMENT: API key not valid. Please pass a valid API key.)');
      const { remote: right } = await openSafety({ URL_REPUTATION_DRIVER: 'web-risk', WEB_RISK_API_KEY: KEY, WEB_RISK_ENDPOINT: webRisk.endpoint });
      webRisk.failWith = 503;
      try {
        await expect(right!.lookup('https://x.example/')).rejects.toThrow('Web Risk answered 503 (UNAVAILABLE: The service is currently unavailable.)');
      } finally {
        webRisk.failWith = null;
      }
      const { remote: unknownList } = await openSafety({
        URL_REPUTATION_DRIVER: 'web-risk',
        WEB_RISK_API_KEY: KEY,
        WEB_RISK_ENDPOINT: webRisk.endpoint,
        WEB_RISK_THREAT_TYPES: 'MALWARE,TYPO',
      });
      await expect(unknownList!.lookup('https://x.example/')).rejects.toThrow(/400 \(INVALID_ARGUMENT: Invalid value at 'threat_types'/);
    });
  });

  describe('dead-link checks', () => {
    const open = (extra: Record<string, string> = {}) =>
      openSafety({ LINK_CHECK_HOSTS: '*.checks.test=127.0.0.1', LINK_CHECK_ALLOW_PRIVATE: 'true', LINK_CHECK_TIMEOUT_MS: '500', ...extra });
    const url = (name: string, path = '/') => `http://${name}.checks.test:${targets.port}${path}`;

    it('sees 200 (HEAD), 404, 5xx, a refused HEAD (GET then), a chain of redirects and a loop, as the targets answer', async () => {
      const { targets: http } = await open();
      const check = (target: string, maxRedirects = 5) => probeTarget(http, target, { maxRedirects });
      expect(await check(url('ok'))).toEqual({ kind: 'ok', status: 200, requests: 1 });
      expect(await check(url('gone'))).toEqual({ kind: 'broken', status: 404, error: null, requests: 1 });
      expect(await check(url('down'))).toEqual({ kind: 'broken', status: 503, error: null, requests: 1 });
      expect(await check(url('broken'))).toEqual({ kind: 'broken', status: 500, error: null, requests: 1 });
      expect(await check(url('nohead'))).toEqual({ kind: 'ok', status: 200, requests: 2 });
      expect(await check(url('chain'))).toEqual({ kind: 'ok', status: 200, requests: 4 });
      expect(await check(url('chain'), 2)).toMatchObject({ kind: 'broken', error: 'too-many-redirects' });
      expect(await check(url('loop', '/a'))).toEqual({ kind: 'broken', status: 302, error: 'redirect-loop', requests: 2 });
      expect(await check(url('busy'))).toMatchObject({ kind: 'wait', status: 429, retryAfterMs: 3_600_000 });
      expect(targets.requests).toEqual(expect.arrayContaining([`HEAD nohead.checks.test /`, `GET nohead.checks.test /`, `HEAD loop.checks.test /b`]));
    });

    it('gives up on a target that never answers after LINK_CHECK_TIMEOUT_MS, and on a name that does not resolve', async () => {
      const { targets: http } = await open();
      expect(await probeTarget(http, url('hang'), { maxRedirects: 5 })).toEqual({ kind: 'broken', status: null, error: 'timeout', requests: 1 });
      expect(await probeTarget(http, 'https://nowhere.invalid/', { maxRedirects: 5 })).toMatchObject({ kind: 'broken', error: 'unresolvable' });
    });

    it('refuses a private address unless LINK_CHECK_ALLOW_PRIVATE: nothing reaches the server', async () => {
      const { targets: http } = await open({ LINK_CHECK_ALLOW_PRIVATE: 'false' });
      const seen = targets.requests.length;
      expect(await probeTarget(http, url('ok', '/private'), { maxRedirects: 5 })).toEqual({
        kind: 'broken',
        status: null,
        error: 'private-address',
        requests: 1,
      });
      expect(targets.requests.length).toBe(seen);
    });
  });

  describe('feeds from URLs and files', () => {
    let server: Server;
    let feedUrl: string;
    let body = 'https://phish.example/a\n';
    let etag = '"v1"';
    const seen: Array<string | undefined> = [];
    beforeAll(async () => {
      server = createServer((req, res) => {
        seen.push(req.headers['if-none-match']);
        if (req.headers['if-none-match'] === etag) return void res.writeHead(304).end();
        res.writeHead(200, { 'content-type': 'text/plain', etag }).end(body);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      feedUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed.txt`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('reads a feed URL again only when it changed (ETag), and refuses one larger than its bound', async () => {
      const { feeds } = await openSafety({});
      const first = await feeds.read(feedUrl, null);
      expect(first).toEqual({ text: 'https://phish.example/a\n', validator: { etag: '"v1"' } });
      expect(await feeds.read(feedUrl, (first as { validator: Record<string, string> }).validator)).toBe('unchanged');
      body = `${body}https://phish.example/b\n`;
      etag = '"v2"';
      expect(await feeds.read(feedUrl, { etag: '"v1"' })).toMatchObject({ text: body, validator: { etag: '"v2"' } });
      expect(seen).toEqual([undefined, '"v1"', '"v1"']);
      const { feeds: small } = await openSafety({ URL_REPUTATION_FEED_MAX_BYTES: '1024' });
      body = 'x'.repeat(5000);
      etag = '"v3"';
      await expect(small.read(feedUrl, null)).rejects.toThrow(/larger than 1024 bytes/);
    });

    it('reads a feed file again only when its size or time changed', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'shortlink-feed-'));
      try {
        const file = join(dir, 'hosts.txt');
        writeFileSync(file, 'ads.example\n');
        utimesSync(file, 1_700_000_000, 1_700_000_000);
        const { feeds } = await openSafety({});
        const first = await feeds.read(file, null);
        expect(first).toMatchObject({ text: 'ads.example\n' });
        expect(await feeds.read(file, (first as { validator: Record<string, string> }).validator)).toBe('unchanged');
        writeFileSync(file, 'ads.example\ntracker.example\n');
        expect(await feeds.read(file, (first as { validator: Record<string, string> }).validator)).toMatchObject({ text: 'ads.example\ntracker.example\n' });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
