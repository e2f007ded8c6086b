import { aggregateBatch, visitorHash } from './minute-aggregator';
import { ClickEvent } from './click-event';

const event = (over: Partial<ClickEvent> = {}): ClickEvent => ({
  eventId: Math.random().toString(36),
  occurredAt: Date.UTC(2026, 11, 2, 10, 15, 30),
  linkId: '1',
  tenantId: 't1',
  domain: 'sho.rt',
  code: 'abc1234',
  ip: '203.0.113.7',
  userAgent: 'Mozilla/5.0',
  referer: null,
  ...over,
});

describe('aggregateBatch', () => {
  it('counts clicks per minute, link and visitor and keeps the highest offset as progress', () => {
    const rows = aggregateBatch(
      {
        partition: 3,
        messages: [
          { partition: 3, offset: '10', event: event() },
          { partition: 3, offset: '11', event: event() },
          { partition: 3, offset: '12', event: event({ ip: '198.51.100.1' }) },
          { partition: 3, offset: '13', event: event({ occurredAt: Date.UTC(2026, 11, 2, 10, 16, 0) }) },
        ],
      },
      undefined,
      's',
    );
    expect(rows).toHaveLength(3);
    const first = rows.find((r) => r.minute === Date.UTC(2026, 11, 2, 10, 15) / 1000 && r.clicks === 2)!;
    expect(first).toMatchObject({ sourcePartition: 3, sourceOffset: '11', code: 'abc1234', tenantId: 't1' });
    expect(rows.reduce((n, r) => n + r.clicks, 0)).toBe(4);
  });

  it('skips messages the store already ingested, so a replay does not count twice', () => {
    const batch = { partition: 0, messages: [10, 11, 12].map((o) => ({ partition: 0, offset: String(o), event: event() })) };
    expect(aggregateBatch(batch, 11n, 's')).toEqual([expect.objectContaining({ clicks: 1, sourceOffset: '12' })]);
    expect(aggregateBatch(batch, 12n, 's')).toEqual([]);
  });
});

describe('visitorHash', () => {
  it('is a stable safe integer that depends on the secret, the IP and the user agent', () => {
    const h = visitorHash('secret', '203.0.113.7', 'UA');
    expect(Number.isSafeInteger(h)).toBe(true);
    expect(h).toBeLessThan(2 ** 52);
    expect(visitorHash('secret', '203.0.113.7', 'UA')).toBe(h);
    expect(visitorHash('other', '203.0.113.7', 'UA')).not.toBe(h);
    expect(visitorHash('secret', '203.0.113.8', 'UA')).not.toBe(h);
    expect(visitorHash('secret', '203.0.113.7', 'UA2')).not.toBe(h);
  });
});
