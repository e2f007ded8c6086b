import { writeFileSync } from 'fs';
import { request } from 'http';
import { join } from 'path';
import { eventually } from '@shortlink/harness';
import type { TargetTestServer, WebRiskTestServer } from '@shortlink/testing';
import { API_KEY, propagated } from './support';
import { api } from './tenant-journey';
import { Receiver } from './webhooks-journey';

/** What the journey runs against: the apps, the folder of the feed files their settings name, the targets of the checks. */
export interface SafetyApps {
  readonly generation: string;
  /** Every redirect instance (a ban must reach each one). */
  readonly redirects: readonly string[];
  readonly feedDir: string;
  readonly targets: TargetTestServer;
  /** The local server speaking Web Risk's `uris.search`, the apps' WEB_RISK_ENDPOINT. */
  readonly webRisk: WebRiskTestServer;
}

/** The Web Risk key of the apps under test (the local server refuses any other). */
export const WEB_RISK_KEY = 'e2e-web-risk-key';

/** The feeds as their publishers write them. */
export interface FeedUrls {
  readonly urlhaus: readonly string[];
  readonly phishtank: readonly string[];
  readonly openphish: readonly string[];
  readonly hosts: readonly string[];
}

/** The feeds each run starts with (their hosts are not the run's: a new link to one is marked on any run). */
export const INITIAL_FEEDS: FeedUrls = {
  urlhaus: ['https://files.evil-cdn.example/invoice.exe'],
  phishtank: ['https://secure-login.bank-verify.example/account/update.php?id=1'],
  openphish: ['https://steam-gift.example/claim'],
  hosts: ['tracker.ads.example'],
};

/** Writes each feed in its published format into `dir`, listing `urls` (hosts for the host list). */
export function writeFeeds(dir: string, urls: FeedUrls): void {
  const feed = (name: string) => join(dir, name);
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
}

/** The settings of the apps under test: the feeds in `feedDir` and Web Risk at `webRiskEndpoint`, checks of `*.checks.test` on loopback, quick jobs. */
export function safetyEnv(feedDir: string, webRiskEndpoint: string): Record<string, string> {
  const feed = (name: string) => join(feedDir, name);
  return {
    TRUSTED_PROXIES: '127.0.0.1',
    URL_REPUTATION_DRIVER: 'feeds+web-risk',
    WEB_RISK_API_KEY: WEB_RISK_KEY,
    WEB_RISK_ENDPOINT: webRiskEndpoint,
    URL_REPUTATION_FEEDS: `urlhaus:${feed('urlhaus.csv')},phishtank:${feed('phishtank.json')},openphish:${feed('openphish.txt')},hosts:${feed('hosts.txt')}`,
    URL_REPUTATION_REFRESH_SECONDS: '1',
    // The checks run here (support.ts turns them off in the other suites: SHARED_META_JOBS_OFF).
    LINK_CHECK_REQUESTS_PER_SECOND: '20',
    LINK_CHECK_ALLOW_PRIVATE: 'true',
    LINK_CHECK_HOSTS: '*.checks.test=127.0.0.1',
    // A broken target is checked again an hour later: on the shared meta database of the real stack no other fleet's
    // checks (without this run's LINK_CHECK_HOSTS) take it up again while the journey reads what this one found.
    LINK_CHECK_RETRY_MINUTES: '60',
    LINK_CHECK_FAILURES_TO_BREAK: '1',
    LINK_CHECK_HOST_INTERVAL_MS: '0',
    LINK_CHECK_TIMEOUT_MS: '1000',
    LINK_CHECK_MAX_REDIRECTS: '3',
    SAFETY_JOBS_INTERVAL_MS: '200',
    REPORTS_PER_VISITOR_PER_HOUR: '3',
    // The tenant's receiver of link.flagged and link.broken is on 127.0.0.1.
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_BASE_MS: '200',
    WEBHOOK_RETRY_MAX_MS: '1000',
  };
}

type Answer = { status: number; location: string | undefined; body: string };

/** A visitor's request of the redirect (fetch cannot keep a 451 page's body and status apart from redirects: node:http). */
export function visitRedirect(
  redirect: string,
  path: string,
  visitor: string,
  options: { method?: string; form?: Record<string, string> } = {},
): Promise<Answer> {
  const { hostname, port } = new URL(redirect);
  const body = options.form ? new URLSearchParams(options.form).toString() : undefined;
  const headers: Record<string, string> = { accept: 'text/html', 'x-forwarded-for': visitor };
  if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, path, method: options.method ?? (body ? 'POST' : 'GET'), headers }, (res) => {
      let text = '';
      res
        .setEncoding('utf8')
        .on('data', (c) => (text += c))
        .on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body: text }));
    })
      .on('error', reject)
      .end(body);
  });
}

/**
 * Trust and safety over HTTP on any profile (docs/design.md, "Trust and safety"): threat feeds in
 * each published format mark new links and re-mark live ones, the dead-link checks against a local
 * server that answers 200, 404, 5xx, hangs and redirects in a loop, a tenant's fallback for broken
 * links at the redirect, visitors' reports (the API's and the redirect pages' form) into the
 * operators' queue and the tenant's audit log, an operator's ban reaching every redirect instance,
 * and the tenant's webhooks `link.flagged` and `link.broken`. `run`: a word unique to the run, in
 * every URL it makes, for the shared meta database of the real stack. The dead-link checks of a new
 * link are the first checks of the instance that made it, whatever the backlog of the fleet's
 * scheduled checks (on the shared stack, tens of thousands of other runs' targets).
 */
export function describeSafetyJourney(setup: () => SafetyApps, run: string) {
  // A describe of its own: its webhook is deleted before the spec stops the apps.
  describe('trust and safety journey', () => {
    const gen = () => setup().generation;
    /** The tenant's webhook for the safety events (the real stack's tenant is shared: its messages are told apart by code). */
    const receiver = new Receiver();
    let webhookId: string | undefined;
    beforeAll(async () => {
      await receiver.start();
      const made = await api(gen(), 'POST', '/api/v1/webhooks', API_KEY, { url: receiver.url, events: ['link.flagged', 'link.broken'] });
      if (made.status !== 201) throw new Error(`webhook: ${made.status} ${made.text}`);
      webhookId = made.body.id;
      receiver.secrets = [made.body.secret];
    });
    afterAll(async () => {
      if (webhookId) await api(gen(), 'DELETE', `/api/v1/webhooks/${webhookId}`, API_KEY);
      await receiver.stop();
    });
    type SafetyEvent = { code: string; moderation: { state: string; source: string | null }; health: { state: string; brokenTargets: string[] } | null };
    /** The verified messages of `type` about `code` (waiting for the first). */
    const told = (type: 'link.flagged' | 'link.broken', code: string) =>
      eventually(`${type} of ${code}`, async () => {
        const found = receiver.of(type, (d) => (d.link as SafetyEvent).code === code).map(([, m]) => m.data.link as SafetyEvent);
        return found.length > 0 && found;
      });
    const redirects = () => setup().redirects;
    /** The run's own copy of a URL: the same host (its feed entry, its check server), a path of this run. */
    const ours = (url: string) => `${url}${url.includes('?') ? '&' : '?'}run=${run}`;
    const later = {
      urlhaus: ours('https://later-malware.example/payload.exe'),
      phishtank: ours('https://later-phish.example/login'),
      openphish: ours('https://later-openphish.example/claim'),
      hosts: ours('https://cdn.later-ads.example/banner.js'),
    };
    const create = async (url: string) => {
      const made = await api(gen(), 'POST', '/api/v1/links', API_KEY, { url });
      if (made.status !== 201) throw new Error(`create ${url} answered ${made.status} ${made.text}`);
      return made.body as { code: string; domain: string; moderation: { state: string; reason: string | null; source: string | null } };
    };
    const link = async (code: string) => (await api(gen(), 'GET', `/api/v1/links/${code}`, API_KEY)).body;
    const visit = (code: string, visitor = '198.51.100.7', redirect = redirects()[0]) => visitRedirect(redirect, `/${code}`, visitor);
    const act = (code: string, body: object) => api(gen(), 'POST', `/api/v1/admin/moderation/links/${code}/actions`, API_KEY, body);

    it('a feed in each format marks a new link at create: banned by URLhaus, PhishTank and OpenPhish, flagged by a host list', async () => {
      const cases = [
        [INITIAL_FEEDS.urlhaus[0], 'banned', 'feed:urlhaus'],
        [INITIAL_FEEDS.phishtank[0], 'banned', 'feed:phishtank'],
        [INITIAL_FEEDS.openphish[0], 'banned', 'feed:openphish'],
        ['https://tracker.ads.example/pixel.gif', 'flagged', 'feed:hosts'],
      ] as const;
      for (const [url, state, source] of cases) {
        const made = await create(url);
        expect({ url, state: made.moderation.state, source: made.moderation.source }).toEqual({ url, state, source });
      }
      const clean = await create(ours('https://example.com/clean'));
      expect(clean.moderation).toEqual({ state: 'clear', reason: null, source: null });
    });

    it('Web Risk, asked through its documented uris.search with the key, bans malware and phishing and flags unwanted software at create; a URL on no list stays clear', async () => {
      const web = setup().webRisk;
      const listed = {
        malware: ours('https://wr-malware.example/setup.exe'),
        phishing: ours('https://wr-phish.example/signin'),
        unwanted: ours('https://wr-toolbar.example/install'),
      };
      web.listed.set(listed.malware, ['MALWARE']);
      web.listed.set(listed.phishing, ['SOCIAL_ENGINEERING']);
      web.listed.set(listed.unwanted, ['UNWANTED_SOFTWARE']);
      const expected = { malware: ['banned', 'MALWARE'], phishing: ['banned', 'SOCIAL_ENGINEERING'], unwanted: ['flagged', 'UNWANTED_SOFTWARE'] } as const;
      for (const [name, url] of Object.entries(listed) as Array<[keyof typeof expected, string]>) {
        const made = await create(url);
        // Web Risk slower than WEB_RISK_TIMEOUT_MS at create (a busy machine): made on the feeds' verdict, screened after its first check.
        const moderation =
          made.moderation.state !== 'clear'
            ? made.moderation
            : await eventually(`Web Risk's screening of ${name}`, async () => {
                const now = (await link(made.code)).moderation;
                return now.state !== 'clear' && now;
              });
        expect({ name, moderation }).toEqual({
          name,
          moderation: { state: expected[name][0], source: 'web-risk', reason: `Web Risk ${expected[name][1]}: ${url}` },
        });
      }
      const clean = ours('https://wr-clean.example/page');
      expect((await create(clean)).moderation.state).toBe('clear');
      expect(web.searches.find((q) => q.uri === clean)).toEqual({
        uri: clean,
        threatTypes: ['MALWARE', 'SOCIAL_ENGINEERING', 'UNWANTED_SOFTWARE'],
        key: WEB_RISK_KEY,
      });
    });

    it('a feed that changes re-marks live links through the index by host, and their visitors get the warning or blocked page on every redirect', async () => {
      const live = {
        urlhaus: await create(later.urlhaus),
        phishtank: await create(later.phishtank),
        openphish: await create(later.openphish),
        hosts: await create(later.hosts),
      };
      for (const made of Object.values(live)) expect(made.moderation.state).toBe('clear');
      expect((await visit(live.urlhaus.code)).status).toBe(302);
      writeFeeds(setup().feedDir, {
        urlhaus: [...INITIAL_FEEDS.urlhaus, later.urlhaus],
        phishtank: [...INITIAL_FEEDS.phishtank, later.phishtank],
        openphish: [...INITIAL_FEEDS.openphish, later.openphish],
        hosts: [...INITIAL_FEEDS.hosts, 'later-ads.example'], // a listed host covers its subdomains
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
        for (const redirect of redirects()) {
          const page = await eventually(`${redirect} serving ${made.code}'s moderation`, async () => {
            const res = await visit(made.code, '198.51.100.7', redirect);
            return res.status !== 302 && res;
          });
          expect(page.status).toBe(expected[format] === 'banned' ? 451 : 200);
          if (expected[format] === 'flagged') expect(page.body).toContain(`/${made.code}/go`);
        }
        // The tenant is told: webhook link.flagged, a ban too, with the source.
        const [message] = await told('link.flagged', made.code);
        expect(message.moderation).toMatchObject({ state: expected[format], source: `feed:${format}` });
      }
    }, 60_000);

    it('the dead-link checks mark links ok or broken against servers answering 200, 404, 5xx, hanging and redirecting in a loop; the list filters by health; webhook link.broken', async () => {
      const at = (host: string, path = '/') => `http://${host}.checks.test:${setup().targets.port}${path}?run=${run}`;
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
      expect(setup().targets.requests.some((r) => r.startsWith('GET nohead.'))).toBe(true); // HEAD refused, then GET
      const listed = new Set<string>();
      for (let cursor: string | null = null, pages = 0; pages < 50; pages++) {
        const page = await api(gen(), 'GET', `/api/v1/links?health=broken&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, API_KEY);
        for (const l of (page.body.items ?? page.body.links) as Array<{ code: string }>) listed.add(l.code);
        cursor = page.body.nextCursor ?? null;
        if (!cursor || made.every((m, i) => cases[i][2] !== 'broken' || listed.has(m.code))) break;
      }
      for (const [i, [name, , state]] of cases.entries()) expect({ name, listed: listed.has(made[i].code) }).toEqual({ name, listed: state === 'broken' });
      const okOnes = await api(gen(), 'GET', `/api/v1/links?health=ok&limit=100`, API_KEY);
      const okCodes = new Set((okOnes.body.items ?? okOnes.body.links).map((l: { code: string }) => l.code));
      for (const [i, [name, , state]] of cases.entries()) if (state === 'ok') expect({ name, ok: okCodes.has(made[i].code) }).toEqual({ name, ok: true });
      // The tenant is told of each link turning broken, once, with its broken target; of none that is fine.
      for (const [i, [name, url, state]] of cases.entries()) {
        if (state !== 'broken') continue;
        const messages = await told('link.broken', made[i].code);
        expect({ name, health: messages[0].health?.state, targets: messages[0].health?.brokenTargets }).toEqual({ name, health: 'broken', targets: [url] });
      }
      for (const [i, [name, , state]] of cases.entries())
        if (state === 'ok')
          expect({ name, told: receiver.of('link.broken', (d) => (d.link as SafetyEvent).code === made[i].code).length }).toEqual({ name, told: 0 });
    }, 60_000);

    it('a broken link’s visitors go where its tenant chose: its URL, a page with the way on, or the target; a healthy link is not concerned', async () => {
      const broken = await create(`http://gone.checks.test:${setup().targets.port}/fallback?run=${run}`);
      const healthy = await create(`http://ok.checks.test:${setup().targets.port}/fallback?run=${run}`);
      await eventually('the check of the broken link', async () => (await link(broken.code)).health?.state === 'broken', 30_000);
      const settings = (body: object) => api(gen(), 'PUT', '/api/v1/settings/broken-links', API_KEY, body);
      try {
        const set = await settings({ mode: 'url', url: 'https://help.example.com/moved' });
        expect(set.status).toBe(200);
        for (const redirect of redirects()) {
          const moved = await eventually(`${redirect} sending ${broken.code} to the fallback`, async () => {
            const res = await visit(broken.code, '198.51.100.20', redirect);
            return res.location === 'https://help.example.com/moved' && res;
          });
          expect(moved.status).toBe(302);
          expect((await visit(healthy.code, '198.51.100.20', redirect)).location).toBe(`http://ok.checks.test:${setup().targets.port}/fallback?run=${run}`);
        }
        await settings({ mode: 'page' });
        const page = await eventually('the page of a broken link', async () => {
          const res = await visit(broken.code, '198.51.100.21');
          return res.status === 200 && res;
        });
        expect(page.body).toContain('destination seems to be down');
      } finally {
        // The real stack's tenant is shared by every run: back to the default.
        expect((await settings({ mode: 'target' })).status).toBe(200);
      }
      const target = await eventually('the target again', async () => {
        const res = await visit(broken.code, '198.51.100.22');
        return res.status === 302 && res;
      });
      expect(target.location).toBe(`http://gone.checks.test:${setup().targets.port}/fallback?run=${run}`);
    }, 60_000);

    it('a visitor reports a link from the redirect’s preview page: the form posts to /r/report on the short domain, a confirmation follows, the report reaches the queue', async () => {
      const made = await create(ours('https://example.com/reported-from-the-page'));
      const preview = await visitRedirect(redirects()[0], `/${made.code}+`, '203.0.113.60');
      expect(preview.body).toContain('<form method="post" action="/r/report"');
      const refused = await visitRedirect(redirects()[0], '/r/report', '203.0.113.60', { form: { code: made.code, details: 'no reason' } });
      expect(refused.status).toBe(400);
      expect(refused.body).toContain('role="alert"');
      const sent = await visitRedirect(redirects()[0], '/r/report', '203.0.113.60', {
        form: { code: made.code, reason: 'scam', details: 'a fake shop' },
      });
      expect(sent.status).toBe(200);
      expect(sent.body).toContain('Thank you for your report');
      const item = await eventually('the page’s report in the queue', async () => {
        const queue = await api(gen(), 'GET', '/api/v1/admin/moderation/queue?state=open&limit=100', API_KEY);
        return (queue.body.items as Array<{ code: string; reports: { count: number; latest: Array<{ reason: string; details: string | null }> } }>).find(
          (i) => i.code === made.code && i.reports.count > 0,
        );
      });
      expect(item.reports).toMatchObject({ count: 1, latest: [{ reason: 'scam', details: 'a fake shop' }] });
    }, 60_000);

    it('a visitor reports a link (bad input refused with a stable code, rate-limited per visitor); the report lands in the operators’ queue; a ban reaches the visitors', async () => {
      const made = await create(ours('https://example.com/reported'));
      const report = (body: object, visitor = '203.0.113.50') => api(gen(), 'POST', '/r/report', null, body, { 'x-forwarded-for': visitor });
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
      const other = await create(ours('https://example.com/reported-too'));
      expect((await report({ code: other.code, reason: 'spam' }, '203.0.113.51')).body).toEqual({ status: 'accepted' }); // another visitor's own budget

      const item = await eventually('the report in the queue', async () => {
        const queue = await api(gen(), 'GET', '/api/v1/admin/moderation/queue?state=open&limit=100', API_KEY);
        return (queue.body.items as Array<{ code: string; reports: { count: number; latest: Array<{ reason: string; details: string | null }> } }>).find(
          (i) => i.code === made.code && i.reports.count > 0,
        );
      });
      expect(item.reports).toMatchObject({ count: 1, latest: [{ reason: 'phishing', details: 'asks for my bank password' }] });
      const tenantLog = await eventually('the report in the tenant’s audit log', async () => {
        const log = await api(gen(), 'GET', '/api/v1/audit-log?limit=100', API_KEY);
        return (log.body.entries ?? log.body.items)?.find(
          (e: { action: string; target: { id: string } }) => e.action === 'link.reported' && e.target.id === made.code,
        );
      });
      expect(tenantLog.details).toMatchObject({ reason: 'phishing' });

      const noReason = await api(gen(), 'POST', `/api/v1/admin/moderation/links/${made.code}/actions`, API_KEY, { action: 'ban' });
      expect({ status: noReason.status, code: noReason.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
      const unknownAction = await api(gen(), 'POST', `/api/v1/admin/moderation/links/${made.code}/actions`, API_KEY, {
        action: 'nuke',
        reason: 'x',
      });
      expect({ status: unknownAction.status, code: unknownAction.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
      expect((await visit(made.code)).status).toBe(302);
      const banned = await act(made.code, { action: 'ban', reason: 'phishing, confirmed' });
      const answeredAt = Date.now();
      expect(banned.status).toBe(200);
      expect(banned.body).toMatchObject({ state: 'resolved', link: { moderation: { state: 'banned', reason: 'phishing, confirmed', source: 'operator' } } });
      await propagated(answeredAt); // the edit bound (docs/design.md, "Edits reach every instance")
      const page = await visit(made.code);
      expect(page.status).toBe(451);
      expect(page.body).not.toContain('example.com/reported');
      for (const redirect of redirects().slice(1)) expect((await visit(made.code, '198.51.100.7', redirect)).status).toBe(451);
      const operatorLog = await api(gen(), 'GET', '/api/v1/admin/audit-log?limit=100', API_KEY);
      expect(operatorLog.status).toBe(200);
      const [flagged] = await told('link.flagged', made.code);
      expect(flagged.moderation).toMatchObject({ state: 'banned', source: 'operator' });
      expect(
        (operatorLog.body.entries ?? operatorLog.body.items).some(
          (e: { action: string; target: { id: string } }) => e.action === 'link.moderated' && e.target.id === made.code,
        ),
      ).toBe(true);

      const cleared = await act(made.code, { action: 'clear' });
      expect(cleared.body).toMatchObject({ link: { moderation: { state: 'clear' } } });
      await propagated(Date.now());
      expect((await visit(made.code)).status).toBe(302);
    }, 60_000);
  });
}
