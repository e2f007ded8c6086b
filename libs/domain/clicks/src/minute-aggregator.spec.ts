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
  it('counts clicks per minute, link and visitor', () => {
    const rows = aggregateBatch([event(), event(), event({ ip: '198.51.100.1' }), event({ occurredAt: Date.UTC(2026, 11, 2, 10, 16, 0) })], 's');
    expect(rows).toHaveLength(3);
    const first = rows.find((r) => r.minute === Date.UTC(2026, 11, 2, 10, 15) / 1000 && r.clicks === 2)!;
    expect(first).toMatchObject({ code: 'abc1234', tenantId: 't1', domain: 'sho.rt', visitor: visitorHash('s', '203.0.113.7', 'Mozilla/5.0') });
    expect(rows.reduce((n, r) => n + r.clicks, 0)).toBe(4);
  });

  it('keeps tenants, domains and codes apart', () => {
    const rows = aggregateBatch([event(), event({ tenantId: 't2' }), event({ domain: 'b.example' }), event({ code: 'other01' })], 's');
    expect(rows).toHaveLength(4);
    expect(rows.every((r) => r.clicks === 1)).toBe(true);
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
