import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { request } from 'http';
import { tmpdir } from 'os';
import { join } from 'path';
import { Endpoints, eventually, RunningProcess } from '@shortlink/harness';
import { startTargetTestServer, TargetTestServer } from '@shortlink/testing';
import { API_KEY, startEmbedded } from './support';
import { api } from './tenant-journey';

/**
 * Trust and safety over HTTP on the embedded profile (docs/design.md, "Trust and safety"): threat
 * feeds in each published format mark new links and re-mark live ones, the dead-link checks against
 * a local server that answers 200, 404, 5xx, hangs and redirects in a loop, visitors' reports into
 * the operators' queue, and an operator's ban reaching the link's visitors.
 */
describe('embedded profile: trust and safety', () => {
  let proc: RunningProcess;
  let endpoints: Endpoints;
  let dataDir: string;
  let targets: TargetTestServer;
  const feed = (name: string) => join(dataDir, name);

  /** The feeds as their publishers write them, each listing `urls` (hosts for the host list). */
  const writeFeeds = (urls: { urlhaus: string[]; phishtank: string[]; openphish: string[]; hosts: string[] }) => {
    writeFileSync(
      feed('urlhaus.csv'),
      [
        '################################################################',
        '# abuse.ch URLhaus Database Dump (CSV - recent URLs only)       #',
        '################################################################',
        '#',
        '# id,dateadded,url,url_status,last_online,threat,tags,urlhaus_link,reporter',
        ...urls.urlhaus.map(
          (u, i) =>
            `"${3303500 + i}","2026-12-07 08:02:04","${u}","online","2026-12-07 08:02:04","malware_download","exe","https://urlhaus.abuse.ch/url/${3303500 + i}/","abuse_ch"`,
        ),
        '',
      ].join('\n'),
    );
    writeFileSync(
      feed('phishtank.json'),
      JSON.stringify(
        urls.phishtank.map((url, i) => ({
          phish_id: String(8547000 + i),
          url,
          phish_detail_url: `http://www.phishtank.com/phish_detail.php?phish_id=${8547000 + i}`,
          submission_time: '2026-12-07T06:12:09+00:00',
          verified: 'yes',
          verification_time: '2026-12-07T06:20:44+00:00',
          online: 'yes',
          target: 'PayPal',
        })),
      ),
    );
    writeFileSync(feed('openphish.txt'), urls.openphish.join('\n') + '\n');
    writeFileSync(feed('hosts.txt'), ['# Title: a DNS blocker list', '127.0.0.1 localhost', ...urls.hosts.map((h) => `0.0.0.0 ${h}`), ''].join('\n'));
  };

  const initial = {
    urlhaus: ['https://files.evil-cdn.example/invoice.exe'],
    phishtank: ['https://secure-login.bank-verify.example/account/update.php?id=1'],
    openphish: ['https://steam-gift.example/claim'],
    hosts: ['tracker.ads.example'],
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shortlink-safety-'));
    targets = await startTargetTestServer();
    writeFeeds(initial);
    ({ proc, endpoints } = await startEmbedded(dataDir, {
      SHORTLINK_BOOTSTRAP_API_KEY: API_KEY,
      TRUSTED_PROXIES: '127.0.0.1',
      URL_REPUTATION_DRIVER: 'feeds',
      URL_REPUTATION_FEEDS: `urlhaus:${feed('urlhaus.csv')},phishtank:${feed('phishtank.json')},openphish:${feed('openphish.txt')},hosts:${feed('hosts.txt')}`,
      URL_REPUTATION_REFRESH_SECONDS: '1',
      LINK_CHECK_ALLOW_PRIVATE: 'true',
      LINK_CHECK_HOSTS: '*.checks.test=127.0.0.1',
      LINK_CHECK_RETRY_MINUTES: '0',
      LINK_CHECK_FAILURES_TO_BREAK: '1',
      LINK_CHECK_HOST_INTERVAL_MS: '0',
      LINK_CHECK_TIMEOUT_MS: '1000',
      LINK_CHECK_MAX_REDIRECTS: '3',
      SAFETY_JOBS_INTERVAL_MS: '200',
      REPORTS_PER_VISITOR_PER_HOUR: '3',
    }));
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    await targets?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const create = async (url: string) => {
    const made = await api(endpoints.generation, 'POST', '/api/v1/links', API_KEY, { url });
    if (made.status !== 201) throw new Error(`create ${url} answered ${made.status} ${made.text}`);
    return made.body as { code: string; domain: string; moderation: { state: string; reason: string | null; source: string | null } };
  };
  const link = async (code: string) => (await api(endpoints.generation, 'GET', `/api/v1/links/${code}`, API_KEY)).body;
  /** A visitor's GET of the short link (fetch cannot keep a 451 page's body and status apart from redirects: node:http). */
  const visit = (code: string, visitor = '198.51.100.7'): Promise<{ status: number; body: string }> => {
    const { hostname, port } = new URL(endpoints.redirect);
    return new Promise((resolve, reject) => {
      request({ host: hostname, port, path: `/${code}`, headers: { accept: 'text/html', 'x-forwarded-for': visitor } }, (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (c) => (body += c))
          .on('end', () => resolve({ status: res.statusCode!, body }));
      })
        .on('error', reject)
        .end();
    });
  };

  it('a feed in each format marks a new link at create: banned by URLhaus, PhishTank and OpenPhish, flagged by a host list', async () => {
    const cases = [
      [initial.urlhaus[0], 'banned', 'feed:urlhaus'],
      [initial.phishtank[0], 'banned', 'feed:phishtank'],
      [initial.openphish[0], 'banned', 'feed:openphish'],
      ['https://tracker.ads.example/pixel.gif', 'flagged', 'feed:hosts'],
    ] as const;
    for (const [url, state, source] of cases) {
      const made = await create(url);
      expect({ url, state: made.moderation.state, source: made.moderation.source }).toEqual({ url, state, source });
    }
    const clean = await create('https://example.com/clean');
    expect(clean.moderation).toEqual({ state: 'clear', reason: null, source: null });
  });

  it('a feed that changes re-marks live links through the index by host, and their visitors get the warning or blocked page', async () => {
    const live = {
      urlhaus: await create('https://later-malware.example/payload.exe'),
      phishtank: await create('https://later-phish.example/login'),
      openphish: await create('https://later-openphish.example/claim'),
      hosts: await create('https://cdn.later-ads.example/banner.js'),
    };
    for (const made of Object.values(live)) expect(made.moderation.state).toBe('clear');
    expect((await visit(live.urlhaus.code)).status).toBe(302);
    writeFeeds({
      urlhaus: [...initial.urlhaus, 'https://later-malware.example/payload.exe'],
      phishtank: [...initial.phishtank, 'https://later-phish.example/login'],
      openphish: [...initial.openphish, 'https://later-openphish.example/claim'],
      hosts: [...initial.hosts, 'later-ads.example'], // a listed host covers its subdomains
    });
    const expected = { urlhaus: 'banned', phishtank: 'banned', openphish: 'banned', hosts: 'flagged' } as const;
    for (const [format, made] of Object.entries(live) as Array<[keyof typeof expected, { code: string }]>) {
      const now = await eventually(`${format} re-marking ${made.code}`, async () => {
        const body = await link(made.code);
        return body.moderation.state !== 'clear' && body;
      });
      expect({ format, moderation: now.moderation.state, source: now.moderation.source }).toEqual({
        format,
        moderation: expected[format],
        source: `feed:${format}`,
      });
      const page = await eventually(`the redirect serving ${made.code}'s moderation`, async () => {
        const res = await visit(made.code);
        return res.status !== 302 && res;
      });
      expect(page.status).toBe(expected[format] === 'banned' ? 451 : 200);
      if (expected[format] === 'flagged') expect(page.body).toContain(`/${made.code}/go`);
    }
  }, 60_000);

  it('the dead-link checks mark links ok or broken against servers answering 200, 404, 5xx, hanging and redirecting in a loop; the list filters by health', async () => {
    const at = (host: string, path = '/') => `http://${host}.checks.test:${targets.port}${path}`;
    const cases = [
      ['ok', at('ok'), 'ok', 200],
      ['gone', at('gone'), 'broken', 404],
      ['broken', at('broken'), 'broken', 500],
      ['down', at('down'), 'broken', 503],
      ['hang', at('hang'), 'broken', null],
      ['loop', at('loop', '/a'), 'broken', 302],
      ['nohead', at('nohead'), 'ok', 200],
    ] as const;
    const made = await Promise.all(cases.map(async ([name, url]) => ({ name, code: (await create(url)).code })));
    for (const [i, [name, url, state, lastStatus]] of cases.entries()) {
      const health = await eventually(`the check of ${name}`, async () => (await link(made[i].code)).health, 30_000);
      expect({ name, state: health.state, lastStatus: health.lastStatus }).toEqual({ name, state, lastStatus });
      if (state === 'broken') expect(health.brokenTargets).toEqual([url]);
      if (name === 'hang') expect(health.lastError).toBe('timeout');
      if (name === 'loop') expect(health.lastError).toBe('redirect-loop');
    }
    expect(targets.requests.some((r) => r.startsWith('GET nohead.'))).toBe(true); // HEAD refused, then GET
    const broken = await api(endpoints.generation, 'GET', '/api/v1/links?health=broken&limit=100', API_KEY);
    const brokenCodes = (broken.body.items ?? broken.body.links).map((l: { code: string }) => l.code);
    for (const [i, [name, , state]] of cases.entries())
      expect({ name, listed: brokenCodes.includes(made[i].code) }).toEqual({ name, listed: state === 'broken' });
  }, 60_000);

  it('a visitor reports a link (bad input refused with a stable code, rate-limited per visitor); the report lands in the operators’ queue; a ban reaches the visitors', async () => {
    const made = await create('https://example.com/reported');
    const report = (body: object, visitor = '203.0.113.50') => api(endpoints.generation, 'POST', '/r/report', null, body, { 'x-forwarded-for': visitor });
    const bad = await report({ code: made.code, reason: 'because' });
    expect({ status: bad.status, type: bad.headers.get('content-type')?.split(';')[0], code: bad.body.code }).toEqual({
      status: 400,
      type: 'application/problem+json',
      code: 'VALIDATION_FAILED',
    });
    const missing = await report({ code: 'nosuchcode1', reason: 'spam' });
    expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 404, code: 'LINK_NOT_FOUND' });
    const sent = await report({ code: made.code, reason: 'phishing', details: 'asks for my bank password' });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ status: 'accepted' });
    expect((await report({ code: made.code, reason: 'phishing' })).body).toEqual({ status: 'duplicate' });
    expect((await report({ code: made.code, reason: 'spam' })).status).toBe(202); // the third of REPORTS_PER_VISITOR_PER_HOUR=3
    const limited = await report({ code: made.code, reason: 'spam' });
    expect({ status: limited.status, code: limited.body.code, retryAfter: Number(limited.headers.get('retry-after')) > 0 }).toEqual({
      status: 429,
      code: 'RATE_LIMITED',
      retryAfter: true,
    });
    const other = await create('https://example.com/reported-too');
    expect((await report({ code: other.code, reason: 'spam' }, '203.0.113.51')).body).toEqual({ status: 'accepted' }); // another visitor's own budget

    const item = await eventually('the report in the queue', async () => {
      const queue = await api(endpoints.generation, 'GET', '/api/v1/admin/moderation/queue?state=open&limit=100', API_KEY);
      return (queue.body.items as Array<{ code: string; reports: { count: number; latest: Array<{ reason: string; details: string | null }> } }>).find(
        (i) => i.code === made.code && i.reports.count > 0,
      );
    });
    expect(item.reports).toMatchObject({ count: 1, latest: [{ reason: 'phishing', details: 'asks for my bank password' }] });
    const tenantLog = await eventually('the report in the tenant’s audit log', async () => {
      const log = await api(endpoints.generation, 'GET', '/api/v1/audit-log?limit=100', API_KEY);
      return (log.body.entries ?? log.body.items)?.find(
        (e: { action: string; target: { id: string } }) => e.action === 'link.reported' && e.target.id === made.code,
      );
    });
    expect(tenantLog.details).toMatchObject({ reason: 'phishing' });

    const noReason = await api(endpoints.generation, 'POST', `/api/v1/admin/moderation/links/${made.code}/actions`, API_KEY, { action: 'ban' });
    expect({ status: noReason.status, code: noReason.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
    const unknownAction = await api(endpoints.generation, 'POST', `/api/v1/admin/moderation/links/${made.code}/actions`, API_KEY, {
      action: 'nuke',
      reason: 'x',
    });
    expect({ status: unknownAction.status, code: unknownAction.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
    expect((await visit(made.code)).status).toBe(302);
    const banned = await api(endpoints.generation, 'POST', `/api/v1/admin/moderation/links/${made.code}/actions`, API_KEY, {
      action: 'ban',
      reason: 'phishing, confirmed',
    });
    expect(banned.status).toBe(200);
    expect(banned.body).toMatchObject({ state: 'resolved', link: { moderation: { state: 'banned', reason: 'phishing, confirmed', source: 'operator' } } });
    await new Promise((r) => setTimeout(r, 100)); // the edit bound (docs/design.md, "Edits reach every instance")
    const page = await visit(made.code);
    expect(page.status).toBe(451);
    expect(page.body).not.toContain('example.com/reported');
    const operatorLog = await api(endpoints.generation, 'GET', '/api/v1/admin/audit-log?limit=100', API_KEY);
    expect(operatorLog.status).toBe(200);
    expect(
      (operatorLog.body.entries ?? operatorLog.body.items).some(
        (e: { action: string; target: { id: string } }) => e.action === 'link.moderated' && e.target.id === made.code,
      ),
    ).toBe(true);

    const cleared = await api(endpoints.generation, 'POST', `/api/v1/admin/moderation/links/${made.code}/actions`, API_KEY, { action: 'clear' });
    expect(cleared.body).toMatchObject({ link: { moderation: { state: 'clear' } } });
    await new Promise((r) => setTimeout(r, 100));
    expect((await visit(made.code)).status).toBe(302);
  }, 60_000);
});
