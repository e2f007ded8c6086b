import { Registry } from 'prom-client';
import { L1Cache } from './l1-cache';
import { ReadPathMetrics } from './read-path.metrics';

describe('ReadPathMetrics', () => {
  it("reads L1's entries and counted bytes on each scrape", async () => {
    const registry = new Registry();
    const metrics = new ReadPathMetrics(registry);
    const l1 = new L1Cache({ maxEntries: 100, maxBytes: 1 << 20, ttlMs: 60_000, negativeTtlMs: 5000 });
    metrics.readL1Size(() => l1.size);
    const link = {
      id: 'l1',
      tenantId: 't1',
      targetUrl: 'https://example.com/a',
      redirectType: 302,
      expiresAt: null,
      status: 'active',
      version: 1,
      createdAt: 0,
    } as const;
    l1.setPositive('short:link:sho.rt:abc1234', link, false);
    l1.setNegative('short:link:sho.rt:nope123');
    const scrape = async () =>
      (await registry.getMetricsAsJSON()).filter((m) => m.name.startsWith('shortlink_redirect_l1_')).map((m) => [m.name, m.values[0]?.value]);
    expect(await scrape()).toEqual([
      ['shortlink_redirect_l1_entries', 2],
      ['shortlink_redirect_l1_bytes', l1.size.bytes],
    ]);
    expect(l1.size.bytes).toBeGreaterThan(0);
    l1.invalidate('short:link:sho.rt:abc1234');
    expect((await scrape())[0]).toEqual(['shortlink_redirect_l1_entries', 1]);
  });
});
