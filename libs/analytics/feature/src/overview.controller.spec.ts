import { DomainError, ErrorCode } from '@shortlink/core';
import type { Link, ShortUrlIdentifier } from '@shortlink/links-domain';
import { controllerSpecFixture } from './testing/controller-spec-fixture';
import { describeTopLink, OverviewController } from './overview.controller';

// chdb maps a ~150 MB engine on first use: under a busy unit tier that alone can take seconds.
jest.setTimeout(60_000);

/** The link store as the overview reads it: a few links by domain/code. */
function linkStore(links: Array<Pick<Link, 'domain' | 'code' | 'tenantId' | 'title' | 'targetUrl' | 'status'>>) {
  return {
    findByCode: async (id: ShortUrlIdentifier) => (links.find((l) => l.domain === id.domain && l.code === id.code) as Link | undefined) ?? null,
  };
}

describe('OverviewController (GET /api/v1/stats/overview) on the embedded store', () => {
  const fixture = controllerSpecFixture('overview');
  const { config, req, headers, reply, T } = fixture;
  let controller: OverviewController;

  beforeAll(async () => {
    const row = { tenantId: 't1', domain: 'sho.rt', bot: false, dims: [] };
    const store = await fixture.open([
      { ...row, code: 'kept', minute: T, visitor: 1, clicks: 5 },
      { ...row, code: 'kept', minute: T + 60, visitor: 2, clicks: 1 },
      { ...row, code: 'gone', minute: T + 60, visitor: 1, clicks: 3 },
      { ...row, code: 'taken', minute: T + 120, visitor: 3, clicks: 2 },
      { ...row, code: 'kept', minute: T + 120, visitor: 9, clicks: 4, bot: true },
      { ...row, tenantId: 't2', code: 'theirs', minute: T, visitor: 1, clicks: 50 },
    ]);
    controller = new OverviewController(
      store,
      linkStore([
        { domain: 'sho.rt', code: 'kept', tenantId: 't1', title: 'Spring sale', targetUrl: 'https://example.com/spring', status: 'active' },
        // A code deleted by t1 and made again by another tenant: not t1's link any more.
        { domain: 'sho.rt', code: 'taken', tenantId: 't2', title: 'Theirs', targetUrl: 'https://example.com/theirs', status: 'active' },
      ]),
      config,
    );
  });
  afterAll(() => fixture.close());

  it("sums the tenant's links into totals and a series, and lists the top links with their title, target and whether they were deleted", async () => {
    const res = await controller.overview(req, { from: String(T), to: String(T + 3600), granularity: 'minute' }, reply);
    expect(res).toEqual({
      from: '2025-11-24T16:00:00.000Z',
      to: '2025-11-24T17:00:00.000Z',
      granularity: 'minute',
      bots: 'exclude',
      totals: { clicks: 11, visitors: 3 },
      botClicks: 4,
      series: [
        { time: '2025-11-24T16:00:00.000Z', clicks: 5, visitors: 1, botClicks: 0 },
        { time: '2025-11-24T16:01:00.000Z', clicks: 4, visitors: 2, botClicks: 0 },
        { time: '2025-11-24T16:02:00.000Z', clicks: 2, visitors: 1, botClicks: 4 },
      ],
      links: [
        { domain: 'sho.rt', code: 'kept', clicks: 6, visitors: 2, title: 'Spring sale', url: 'https://example.com/spring', status: 'active', deleted: false },
        { domain: 'sho.rt', code: 'gone', clicks: 3, visitors: 1, title: null, url: null, status: null, deleted: true },
        { domain: 'sho.rt', code: 'taken', clicks: 2, visitors: 1, title: null, url: null, status: null, deleted: true },
      ],
    });
  });

  it('answers the series as CSV, and a range that ends before it starts as INVALID_TIME_RANGE', async () => {
    const csv = await controller.overview(req, { from: String(T), to: String(T + 180), granularity: 'minute', format: 'csv' }, reply);
    expect(headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(headers['content-disposition']).toBe('attachment; filename="overview.csv"');
    expect(String(csv).trim().split('\r\n')).toEqual([
      'time,clicks,visitors,botClicks',
      '2025-11-24T16:00:00.000Z,5,1,0',
      '2025-11-24T16:01:00.000Z,4,2,0',
      '2025-11-24T16:02:00.000Z,2,1,4',
    ]);
    const refused = await controller.overview(req, { from: String(T + 3600), to: String(T) }, reply).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe(ErrorCode.INVALID_TIME_RANGE);
  });

  it('says nothing of a link when the link store does not answer (deleted: null, not a guess)', async () => {
    const failing = { findByCode: async () => Promise.reject(new Error('shard down')) };
    expect(await describeTopLink(failing, 't1', { domain: 'sho.rt', code: 'kept', clicks: 1, visitors: 1 })).toEqual({
      domain: 'sho.rt',
      code: 'kept',
      clicks: 1,
      visitors: 1,
      title: null,
      url: null,
      status: null,
      deleted: null,
    });
  });
});
