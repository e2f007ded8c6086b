import { bucketSeconds, granularityFor, peakOf, rangeParams, rebucket, sizeInWords, valueLabel } from './series';

describe("the console's analytics arithmetic", () => {
  const NOW = Date.UTC(2026, 11, 5, 10, 0, 30);

  it('turns a preset into a range ending at the next whole minute, with the finest granularity kept for it', () => {
    const to = Date.UTC(2026, 11, 5, 10, 1) / 1000;
    expect(rangeParams('24h', { from: '', to: '' }, NOW)).toEqual({ from: String(to - 86_400), to: String(to), granularity: 'minute' });
    expect(rangeParams('7d', { from: '', to: '' }, NOW).granularity).toBe('hour');
    expect(rangeParams('30d', { from: '', to: '' }, NOW).granularity).toBe('hour');
    expect([granularityFor(2 * 86_400), granularityFor(2 * 86_400 + 1), granularityFor(31 * 86_400 + 1)]).toEqual(['minute', 'hour', 'day']);
  });

  it('sends a custom range as ISO instants, and what it cannot read as typed (the API says what is wrong)', () => {
    const custom = rangeParams('custom', { from: '2026-12-05T10:00', to: '2026-12-05T09:00' }, NOW);
    expect(custom.from).toBe(new Date('2026-12-05T10:00').toISOString());
    expect(custom.to).toBe(new Date('2026-12-05T09:00').toISOString());
    expect(rangeParams('custom', { from: '', to: 'yesterday' }, NOW)).toEqual({ from: '', to: 'yesterday', granularity: 'minute' });
  });

  it('sizes the buckets to the range: 15 minutes over 24 hours, 2 hours over 7 days, never finer than the API', () => {
    expect(bucketSeconds(3600, 'minute')).toBe(60);
    expect(bucketSeconds(86_400, 'minute')).toBe(900);
    expect(bucketSeconds(7 * 86_400, 'hour')).toBe(7200);
    expect(bucketSeconds(30 * 86_400, 'hour')).toBe(21_600);
    expect(bucketSeconds(600, 'hour')).toBe(3600);
    expect(bucketSeconds(400 * 86_400, 'day')).toBe(604_800);
    expect([900, 3600, 7200, 86_400, 60].map(sizeInWords)).toEqual(['15 minutes', '1 hour', '2 hours', '1 day', '1 minute']);
  });

  it('sums minute points into every bucket of the range, zero where nothing was clicked: a burst of one minute is one tall bar', () => {
    const from = '2026-12-04T10:01:00.000Z';
    const to = '2026-12-05T10:01:00.000Z';
    const points = [
      { time: '2026-12-04T12:00:00.000Z', clicks: 1, botClicks: 0 },
      { time: '2026-12-05T09:31:00.000Z', clicks: 20, botClicks: 2 },
      { time: '2026-12-05T09:44:00.000Z', clicks: 5, botClicks: 0 },
      { time: '2026-12-05T09:45:00.000Z', clicks: 1, botClicks: 0 },
    ];
    const buckets = rebucket(points, from, to, 900);
    // 10:00 (aligned down) to 10:01 the next day: 97 quarter hours.
    expect(buckets).toHaveLength(97);
    expect(buckets[0].start).toBe(Date.UTC(2026, 11, 4, 10, 0) / 1000);
    expect(buckets.every((b) => b.end - b.start === 900)).toBe(true);
    expect(buckets.reduce((n, b) => n + b.clicks, 0)).toBe(27);
    expect(peakOf(buckets)).toEqual({ start: Date.UTC(2026, 11, 5, 9, 30) / 1000, end: Date.UTC(2026, 11, 5, 9, 45) / 1000, clicks: 25, botClicks: 2 });
    expect(buckets.filter((b) => b.clicks > 0).map((b) => b.clicks)).toEqual([1, 25, 1]);
    expect(peakOf(rebucket([], from, to, 900))).toBeNull();
    expect(rebucket(points, to, from, 900)).toEqual([]);
  });

  it('labels an A/B variant by its URL, a source in words, and a click without the value as such', () => {
    const variants = [{ url: 'https://example.com/a' }, { url: 'https://example.com/b' }];
    expect(valueLabel('variants', '1', variants)).toBe('https://example.com/b (variant 2)');
    expect(valueLabel('variants', '7', variants)).toBe('variant 8');
    expect(valueLabel('variants', null, variants)).toBe('(no variant)');
    expect(valueLabel('sources', 'qr')).toBe('QR code');
    expect(valueLabel('referers', null)).toBe('(direct)');
    expect(valueLabel('countries', 'DE')).toBe('DE');
  });
});
