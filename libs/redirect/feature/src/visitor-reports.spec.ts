import { createServer, IncomingMessage, Server, ServerResponse } from 'http';
import { AddressInfo } from 'net';
import { Registry } from 'prom-client';
import { DomainError, ErrorCode } from '@shortlink/core';
import { CachedLink, LinkResolver, ShortUrlIdentifier, unknownLink } from '@shortlink/links-domain';
import { ClientAddressResolver, frontHandlerOf } from '@shortlink/nest-platform';
import { visitorReportIntake } from '@shortlink/safety-domain';
import { InMemorySafetyStore } from '@shortlink/safety-domain/testing';
import { DomainSettingsDirectory } from '@shortlink/tenants-domain';
import { RedirectMetrics } from './redirect.metrics';
import { VisitorPages } from './visitor-pages';
import { VisitorReportRoute } from './visitor-reports';

const cached = (code: string, over: Partial<CachedLink> = {}): CachedLink => ({
  id: `id-${code}`,
  tenantId: 't1',
  targetUrl: `https://example.com/${code}`,
  redirectType: 302,
  expiresAt: null,
  status: 'active',
  version: 1,
  createdAt: 0,
  ...over,
});

describe('VisitorReportRoute: POST /r/report on the short domains (docs/design.md, "Trust and safety")', () => {
  let server: Server;
  let base: string;
  let store: InMemorySafetyStore;
  const links = new Map<string, CachedLink>([
    ['rep0001', cached('rep0001')],
    ['off0001', cached('off0001', { status: 'disabled' })],
  ]);
  const resolver = {
    resolveLocal: () => undefined,
    resolve: async (id: ShortUrlIdentifier) => {
      const link = links.get(id.code);
      if (!link) throw unknownLink(id);
      if (link.status === 'disabled') throw new DomainError(ErrorCode.LINK_DISABLED, 'link is disabled');
      return { link };
    },
  } as unknown as LinkResolver;

  beforeEach(async () => {
    store = new InMemorySafetyStore();
    const settings = new DomainSettingsDirectory({ all: async () => [] } as never, { refreshMs: 60_000 });
    const route = new VisitorReportRoute({
      intake: visitorReportIntake(store, 2, 's'.repeat(40)),
      links: resolver,
      addresses: new ClientAddressResolver([{ address: '127.0.0.1', prefix: 32, family: 'ipv4' }]),
      pages: new VisitorPages(settings, 'sho.rt'),
      metrics: new RedirectMetrics(new Registry()),
      domainOf: () => 'sho.rt',
    });
    const front = frontHandlerOf(route)!;
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (!front(req, res)) res.writeHead(204).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  const send = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${base}/r/report`, {
      method: 'POST',
      body: new URLSearchParams(form).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', 'x-forwarded-for': '203.0.113.5', ...headers },
    });

  it('takes a browser’s report and answers the confirmation page; the report waits for the relay with a hashed reporter', async () => {
    const res = await send({ code: 'rep0001', reason: 'phishing', details: 'asks for <my> password' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const html = await res.text();
    expect(html).toContain('Thank you for your report');
    expect(html).toContain('href="/rep0001+"');
    const [report] = await store.unrelayedReports(10);
    expect(report).toMatchObject({
      linkId: 'id-rep0001',
      domain: 'sho.rt',
      code: 'rep0001',
      tenantId: 't1',
      reason: 'phishing',
      details: 'asks for <my> password',
    });
    expect(report.reporter).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(report)).not.toContain('203.0.113.5');
  });

  it('gives the form back, open and filled in, for a report without a reason; 400 problem+json to other clients', async () => {
    const res = await send({ code: 'rep0001', details: 'no reason <b>' });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('<details class="report" open>');
    expect(html).toContain('role="alert"');
    expect(html).toContain('no reason &lt;b&gt;');
    const json = await send({ code: 'rep0001', reason: 'because' }, { accept: 'application/json' });
    expect({ status: json.status, type: json.headers.get('content-type'), code: (await json.json()).code }).toEqual({
      status: 400,
      type: 'application/problem+json',
      code: 'VALIDATION_FAILED',
    });
  });

  it('answers an unknown or disabled link alike (404), and limits reports per visitor with 429 Retry-After', async () => {
    for (const code of ['nosuch01', 'off0001']) {
      const res = await send({ code, reason: 'spam' }, { accept: 'application/json' });
      expect({ code, status: res.status, problem: (await res.json()).code }).toEqual({ code, status: 404, problem: 'LINK_NOT_FOUND' });
    }
    expect((await send({ code: 'rep0001', reason: 'spam' }, { accept: 'application/json' })).status).toBe(202);
    expect(await (await send({ code: 'rep0001', reason: 'spam' }, { accept: 'application/json' })).json()).toEqual({ status: 'duplicate' });
    const limited = await send({ code: 'rep0001', reason: 'spam' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await send({ code: 'rep0001', reason: 'spam' }, { 'x-forwarded-for': '203.0.113.6', accept: 'application/json' })).status).toBe(202);
  });
});
