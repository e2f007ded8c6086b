import { loadConfig } from '@shortlink/config';
import { ClickAggregateStore, StatsQuery } from '@shortlink/clicks-domain';
import type { AuthenticatedRequest } from '@shortlink/nest-platform';
import { StatsController } from './stats.controller';

describe('StatsController', () => {
  const config = loadConfig({ SHORTLINK_PUBLIC_BASE_URL: 'https://sho.rt' });
  const queries: StatsQuery[] = [];
  const store = {
    stats: async (q: StatsQuery) => {
      queries.push(q);
      return { series: [{ minute: 1_764_000_000, clicks: 3, visitors: 2 }], totals: { clicks: 3, visitors: 2 } };
    },
  } as unknown as ClickAggregateStore;
  const controller = new StatsController(store, config);
  const req = { principal: { tenantId: 't1' } } as AuthenticatedRequest;

  it("asks the store for the caller's link on the default domain and shows minutes as ISO instants", async () => {
    const res = await controller.stats(req, 'abc1234', '2025-11-24T16:00:00Z', '2025-11-24T17:00:00Z');
    expect(queries.at(-1)).toEqual({ tenantId: 't1', domain: 'sho.rt', code: 'abc1234', from: 1_764_000_000, to: 1_764_003_600 });
    expect(res).toEqual({
      code: 'abc1234', domain: 'sho.rt', from: '2025-11-24T16:00:00.000Z', to: '2025-11-24T17:00:00.000Z', granularity: 'minute',
      totals: { clicks: 3, visitors: 2 }, series: [{ minute: '2025-11-24T16:00:00.000Z', clicks: 3, visitors: 2 }],
    });
  });

  it('lower-cases the domain parameter and defaults to the last hour', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await controller.stats(req, 'abc1234', undefined, undefined, 'Go.Example');
    const q = queries.at(-1)!;
    expect(q.domain).toBe('go.example');
    expect(q.to - q.from).toBe(3600);
    expect(q.to).toBeGreaterThan(before);
    expect(res.domain).toBe('go.example');
  });

  it('refuses an empty, reversed or too long range with INVALID_TIME_RANGE', async () => {
    const count = queries.length;
    for (const [from, to] of [['100', '100'], ['200', '100'], ['0', String(32 * 24 * 3600)]]) {
      await expect(controller.stats(req, 'abc1234', from, to)).rejects.toMatchObject({ code: 'INVALID_TIME_RANGE' });
    }
    expect(queries.length).toBe(count);
  });
});
