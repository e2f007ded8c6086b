import { ConversionEvent, rollupsOfVisitorRows } from '@shortlink/clicks-domain';
import type { AuthenticatedRequest } from '@shortlink/nest-platform';
import { Principal, TenantService } from '@shortlink/tenants-domain';
import { controllerSpecFixture } from './testing/controller-spec-fixture';
import { StatsController } from './stats.controller';
import { toCsv } from './csv';
import { SqliteMetaStore } from '@shortlink/wiring';

// chdb maps a ~150 MB engine on first use: under a busy unit tier (parallel workers, 2 cores) that alone can take seconds.
jest.setTimeout(60_000);

describe('StatsController on the embedded store', () => {
  const fixture = controllerSpecFixture('stats');
  const { config, req, headers, reply, T } = fixture;
  let controller: StatsController;
  let meta: SqliteMetaStore;

  beforeAll(async () => {
    const row = { tenantId: 't1', domain: 'sho.rt', code: 'abc1234', bot: false };
    const store = await fixture.open([
      {
        ...row,
        minute: T,
        visitor: 1,
        clicks: 2,
        dims: [
          { dimension: 'referers', value: '', clicks: 1 },
          { dimension: 'referers', value: '=cmd|x', clicks: 1 },
          { dimension: 'sources', value: 'qr', clicks: 1 },
          { dimension: 'sources', value: 'link', clicks: 1 },
          { dimension: 'cities', value: 'US\tIllinois\tSpringfield', clicks: 1 },
          { dimension: 'cities', value: 'US\tMassachusetts\tSpringfield', clicks: 1 },
        ],
      },
      {
        ...row,
        minute: T + 120,
        visitor: 2,
        clicks: 1,
        dims: [
          { dimension: 'referers', value: '', clicks: 1 },
          { dimension: 'sources', value: 'link', clicks: 1 },
          { dimension: 'cities', value: '', clicks: 1 },
        ],
      },
      { ...row, minute: T + 120, visitor: 3, clicks: 5, bot: true, dims: [] },
    ]);
    meta = new SqliteMetaStore(':memory:');
    for (const id of ['t1', 't2', 'operator']) {
      const tenant = { id, name: id, plan: 'paid', status: 'active', createdAt: new Date() } as const;
      await meta.tenants.createWithApiKey(tenant, `hash-${id}`, { id: `k-${id}`, name: 'key', prefix: id, scopes: [], expiresAt: null, person: null });
    }
    await meta.tenants.addDomain('t1', 'go.t1.test');
    controller = new StatsController(store, config, new TenantService(meta.tenants, { serviceDomains: config.links.domains }));
  });
  afterAll(async () => {
    await meta?.close();
    await fixture.close();
  });

  it("reads the caller's link on the default domain, aligns the range to the granularity and shows ISO instants", async () => {
    const res = await controller.stats(req, 'abc1234', { from: '2025-11-24T16:00:30Z', to: String(T + 3600) }, reply);
    expect(res).toEqual({
      code: 'abc1234',
      domain: 'sho.rt',
      from: '2025-11-24T16:00:00.000Z',
      to: '2025-11-24T17:00:00.000Z',
      granularity: 'minute',
      bots: 'exclude',
      totals: { clicks: 3, visitors: 2, leads: 0, sales: 0, revenue: {} },
      botClicks: 5,
      series: [
        { time: '2025-11-24T16:00:00.000Z', clicks: 2, visitors: 1, botClicks: 0 },
        { time: '2025-11-24T16:02:00.000Z', clicks: 1, visitors: 1, botClicks: 5 },
      ],
    });
    const hours = await controller.stats(req, 'abc1234', { from: String(T + 100), to: String(T + 200), granularity: 'hour', bots: 'include' }, reply);
    expect(hours).toMatchObject({ from: '2025-11-24T16:00:00.000Z', to: '2025-11-24T17:00:00.000Z', totals: { clicks: 8, visitors: 3 } });
    expect(
      ((await controller.stats(req, 'abc1234', { from: String(T), to: String(T + 60), domain: 'Other.Example' }, reply)) as { domain: string }).domain,
    ).toBe('other.example');
  });

  it('counts the clicks of the links it is given (a page of a list); a bad list is VALIDATION_FAILED', async () => {
    const range = { from: String(T), to: String(T + 3600) };
    expect(await controller.topLinks(req, { ...range, links: 'sho.rt/abc1234,sho.rt/never' }, reply)).toMatchObject({
      links: [{ domain: 'sho.rt', code: 'abc1234', clicks: 3, visitors: 2 }],
    });
    expect(await controller.topLinks(req, { ...range, links: 'go.t1.test/abc1234' }, reply)).toMatchObject({ links: [] });
    await expect(controller.topLinks(req, { ...range, links: 'not a link' }, reply)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(controller.topLinks(req, { ...range, links: Array(101).fill('sho.rt/a').join(',') }, reply)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
  });

  it('gives breakdowns with null for "none", shares, and CSV safe for spreadsheets', async () => {
    const res = await controller.breakdown(req, 'abc1234', 'referers', { from: String(T), to: String(T + 3600) }, reply);
    expect(res).toMatchObject({
      dimension: 'referers',
      totals: { clicks: 3, visitors: 2 },
      items: [
        { value: null, clicks: 2, visitors: 2, share: 0.6667 },
        { value: '=cmd|x', clicks: 1, visitors: 1, share: 0.3333 },
      ],
    });
    const csv = await controller.breakdown(req, 'abc1234', 'referers', { from: String(T), to: String(T + 3600), format: 'csv' }, reply);
    expect(csv).toBe("value,clicks,visitors,share\r\n,2,2,0.6667\r\n'=cmd|x,1,1,0.3333\r\n");
    expect(headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(headers['content-disposition']).toBe('attachment; filename="abc1234-referers.csv"');
  });

  it('breaks clicks down by source (qr, link) and by city with its country and region: two Springfields are two rows', async () => {
    const range = { from: String(T), to: String(T + 3600) };
    expect((await controller.breakdown(req, 'abc1234', 'sources', range, reply)) as object).toMatchObject({
      dimension: 'sources',
      items: [
        { value: 'link', clicks: 2, visitors: 2, share: 0.6667 },
        { value: 'qr', clicks: 1, visitors: 1, share: 0.3333 },
      ],
    });
    const cities = (await controller.breakdown(req, 'abc1234', 'cities', range, reply)) as { items: object[] };
    expect(cities.items).toEqual([
      { value: null, clicks: 1, visitors: 1, share: 0.3333 },
      { value: 'Springfield', country: 'US', region: 'Illinois', clicks: 1, visitors: 1, share: 0.3333 },
      { value: 'Springfield', country: 'US', region: 'Massachusetts', clicks: 1, visitors: 1, share: 0.3333 },
    ]);
    const csv = await controller.breakdown(req, 'abc1234', 'cities', { ...range, format: 'csv' }, reply);
    expect(csv).toBe(
      'value,country,region,clicks,visitors,share\r\n,,,1,1,0.3333\r\nSpringfield,US,Illinois,1,1,0.3333\r\nSpringfield,US,Massachusetts,1,1,0.3333\r\n',
    );
  });

  it("shows a tenant the orphan visits of its own domains only, never another tenant's deleted code on a shared one; the operator sees those", async () => {
    // t1 has clicks on the shared domain sho.rt (above); t2 deleted b-q3-layoffs there, and it is still visited.
    await fixture.store.write({
      rollups: rollupsOfVisitorRows([
        { tenantId: '', domain: 'sho.rt', code: 'b-q3-layoffs', bot: false, minute: T, visitor: 7, clicks: 4, dims: [] },
        { tenantId: '', domain: 'go.t1.test', code: 'typo-t1', bot: false, minute: T, visitor: 8, clicks: 2, dims: [] },
      ]),
    });
    const as = (principal: Principal) => ({ principal }) as AuthenticatedRequest;
    const t1 = as({
      tenantId: 't1',
      keyId: 'k-t1',
      actor: { kind: 'key', id: 'k-t1', name: 'k1', tenantId: 't1', person: null },
      scopes: ['analytics:read'],
      plan: 'paid',
    });
    const t2 = as({
      tenantId: 't2',
      keyId: 'k-t2',
      actor: { kind: 'key', id: 'k-t2', name: 'k2', tenantId: 't2', person: null },
      scopes: ['analytics:read'],
      plan: 'paid',
    });
    const operator = as({
      tenantId: 'operator',
      keyId: 'k-op',
      actor: { kind: 'key', id: 'k-op', name: 'op', tenantId: 'operator', person: null },
      scopes: ['analytics:read', 'admin'],
      plan: 'paid',
    });
    const codesOf = async (req: AuthenticatedRequest, domain?: string) =>
      ((await controller.orphans(req, { from: String(T), to: String(T + 3600), domain }, reply)) as { codes: readonly object[] }).codes;
    expect(await codesOf(t1)).toEqual([{ domain: 'go.t1.test', code: 'typo-t1', visits: 2 }]);
    expect(await codesOf(t1, 'sho.rt')).toEqual([]);
    expect(await codesOf(t2)).toEqual([]);
    expect(await codesOf(operator)).toEqual([{ domain: 'sho.rt', code: 'b-q3-layoffs', visits: 4 }]);
    const csv = (await controller.orphans(t1, { from: String(T), to: String(T + 3600), format: 'csv' }, reply)) as string;
    expect(csv).not.toContain('sho.rt');
  });

  it('breaks conversions down by their clicks’ dimensions beside the clicks of each value, and gives clicks, leads, sales and revenue per bucket, of a link or the tenant, as JSON and CSV (docs/analytics.md, "Conversions")', async () => {
    const dims = (source: string) => ({ country: '', region: '', city: '', referer: '', device: 'mobile', browser: 'Chrome', os: 'iOS', variant: '', source });
    const event = (n: number, over: Partial<ConversionEvent>): ConversionEvent => ({
      kind: 'lead',
      id: `cnv_${n}`,
      key: `lead:cus_${n}`,
      tenantId: 't1',
      at: (T + 10) * 1000,
      linkId: '1',
      domain: 'sho.rt',
      code: 'abc1234',
      customerId: `cus_${n}`,
      eventName: 'Sign up',
      clickId: `click${n}`,
      amount: 0,
      currency: '',
      invoiceId: null,
      metadata: null,
      ...over,
    });
    await fixture.store.writeConversions(
      [
        { event: event(1, { at: (T + 30) * 1000 }), dims: dims('qr') },
        { event: event(1, { kind: 'sale', key: 'invoice:i1', at: (T + 150) * 1000, amount: 4900, currency: 'EUR', invoiceId: 'i1' }), dims: dims('qr') },
        { event: event(2, { at: (T + 130) * 1000 }), dims: dims('link') },
        // A lead whose click's visit was not found: unknown.
        { event: event(3, {}) },
        // Another tenant's, on the same link name: never counted for t1.
        { event: event(4, { tenantId: 't2' }), dims: dims('qr') },
      ].map((r, i) => ({ ...r, source: 'memory:spec', partition: 0, offset: String(i) })),
    );
    const q = { from: String(T), to: String(T + 3600) };
    const qr = { value: 'qr', clicks: 1, leads: 1, sales: 1, revenue: { EUR: 4900 }, leadRate: 1, saleRate: 1 };
    const link = { value: 'link', clicks: 2, leads: 1, sales: 0, revenue: {}, leadRate: 0.5, saleRate: 0 };
    const unknown = { value: null, clicks: 0, leads: 1, sales: 0, revenue: {}, leadRate: null, saleRate: 0 };
    const totals = { clicks: 3, leads: 3, sales: 1, revenue: { EUR: 4900 }, leadRate: 1, saleRate: 0.3333 };
    expect(await controller.conversionBreakdown(req, 'sources', { ...q, code: 'abc1234' }, reply)).toMatchObject({
      dimension: 'sources',
      domain: 'sho.rt',
      code: 'abc1234',
      totals,
      items: [qr, link, unknown],
    });
    expect(await controller.conversionBreakdown(req, 'sources', { ...q, limit: 1 }, reply)).toMatchObject({ domain: null, code: null, totals, items: [qr] });
    expect(await controller.conversionBreakdown(req, 'sources', { ...q, domain: 'go.t1.test' }, reply)).toMatchObject({
      totals: { clicks: 0, leads: 0, sales: 0 },
      items: [],
    });
    expect(await controller.conversionBreakdown(req, 'sources', { ...q, format: 'csv' }, reply)).toBe(
      'value,clicks,leads,sales,revenue,leadRate,saleRate\r\nqr,1,1,1,EUR 4900,1,1\r\nlink,2,1,0,,0.5,0\r\n,0,1,0,,,0\r\n',
    );
    expect(headers['content-disposition']).toBe('attachment; filename="conversions-sources.csv"');

    const series = await controller.conversionSeries(req, { ...q, granularity: 'minute', code: 'abc1234' }, reply);
    expect(series).toMatchObject({
      granularity: 'minute',
      totals,
      series: [
        { time: '2025-11-24T16:00:00.000Z', clicks: 2, leads: 2, sales: 0, revenue: {} },
        { time: '2025-11-24T16:02:00.000Z', clicks: 1, leads: 1, sales: 1, revenue: { EUR: 4900 } },
      ],
    });
    expect(await controller.conversionSeries(req, { ...q, granularity: 'hour', format: 'csv' }, reply)).toBe(
      'time,clicks,leads,sales,revenue\r\n2025-11-24T16:00:00.000Z,3,3,1,EUR 4900\r\n',
    );
  });

  it('refuses an empty, reversed or too long range with INVALID_TIME_RANGE', async () => {
    for (const [from, to, granularity] of [
      ['100', '100', undefined],
      ['200', '100', undefined],
      ['0', String(32 * 86_400), 'minute'],
      ['0', String(400 * 86_400), 'hour'],
      ['now', undefined, undefined],
    ] as const) {
      await expect(controller.stats(req, 'abc1234', { from, to, granularity }, reply)).rejects.toMatchObject({ code: 'INVALID_TIME_RANGE' });
    }
  });
});

describe('toCsv', () => {
  it('quotes commas, quotes and line breaks, and defuses formulas', () => {
    expect(
      toCsv(
        ['a', 'b'],
        [
          ['x,y', 'say "hi"'],
          ['line\nbreak', null],
          ['@SUM(A1)', 3],
          ['-2', -2],
        ],
      ),
    ).toBe('a,b\r\n"x,y","say ""hi"""\r\n"line\nbreak",\r\n\'@SUM(A1),3\r\n\'-2,-2\r\n');
  });
});
