import { BitlyArgError, bitlyTime, bucketize, bucketOf, MAX_BUCKETS, windowOf } from './bitly-units';

const at = (iso: string) => Date.parse(iso);
const s = (iso: string) => at(iso) / 1000;

describe('Bitly units', () => {
  it('buckets minutes, hours, days, Monday weeks and calendar months in UTC', () => {
    const t = s('2026-12-05T18:31:07Z'); // a Saturday
    expect(bitlyTime(bucketOf('minute', t))).toBe('2026-12-05T18:31:00+0000');
    expect(bitlyTime(bucketOf('hour', t))).toBe('2026-12-05T18:00:00+0000');
    expect(bitlyTime(bucketOf('day', t))).toBe('2026-12-05T00:00:00+0000');
    expect(bitlyTime(bucketOf('week', t))).toBe('2026-11-30T00:00:00+0000');
    expect(bitlyTime(bucketOf('month', t))).toBe('2026-12-01T00:00:00+0000');
  });

  it('defaults to days since the link was created, ending with the current one', () => {
    const w = windowOf({}, at('2026-12-03T10:00:00Z'), at('2026-12-05T18:31:07Z'));
    expect(w).toMatchObject({ unit: 'day', units: -1, granularity: 'day', reference: s('2026-12-05T18:31:07Z') });
    expect(w.buckets.map(bitlyTime)).toEqual(['2026-12-05T00:00:00+0000', '2026-12-04T00:00:00+0000', '2026-12-03T00:00:00+0000']);
    expect([w.from, w.to]).toEqual([s('2026-12-03T00:00:00Z'), s('2026-12-06T00:00:00Z')]);
  });

  it('takes units and a unit_reference in Bitly’s +0000 form; months step by the calendar', () => {
    const w = windowOf({ unit: 'month', units: '3', unit_reference: '2026-03-15T00:00:00+0000' }, at('2020-01-01T00:00:00Z'), at('2026-12-05T00:00:00Z'));
    expect(w.buckets.map(bitlyTime)).toEqual(['2026-03-01T00:00:00+0000', '2026-02-01T00:00:00+0000', '2026-01-01T00:00:00+0000']);
    expect(w.to).toBe(s('2026-04-01T00:00:00Z'));
    expect(w.granularity).toBe('day');
  });

  it('bounds units=-1 to the newest MAX_BUCKETS', () => {
    const w = windowOf({ unit: 'minute' }, at('2026-01-01T00:00:00Z'), at('2026-12-05T00:00:00Z'));
    expect(w.buckets).toHaveLength(MAX_BUCKETS);
    expect(w.granularity).toBe('minute');
  });

  it('refuses a unit, units or unit_reference Bitly would refuse, naming the field', () => {
    const field = (q: Record<string, string>) => {
      try {
        windowOf(q, 0, Date.now());
      } catch (e) {
        return (e as BitlyArgError).field;
      }
      return null;
    };
    expect(field({ unit: 'fortnight' })).toBe('unit');
    expect(field({ units: '0' })).toBe('units');
    expect(field({ units: '-2' })).toBe('units');
    expect(field({ units: 'ten' })).toBe('units');
    expect(field({ unit_reference: 'yesterday' })).toBe('unit_reference');
    expect(field({ unit: 'hour', units: '24', unit_reference: '' })).toBeNull();
  });

  it('sums the store’s points into the buckets, newest first, zero where none', () => {
    const w = windowOf({ unit: 'week', units: '2' }, 0, at('2026-12-05T12:00:00Z'));
    const points = [
      { time: s('2026-12-01T00:00:00Z'), clicks: 2 },
      { time: s('2026-12-04T00:00:00Z'), clicks: 3 },
      { time: s('2026-11-01T00:00:00Z'), clicks: 9 }, // outside the window
    ];
    expect(bucketize(w, points)).toEqual([
      { date: s('2026-11-30T00:00:00Z'), clicks: 5 },
      { date: s('2026-11-23T00:00:00Z'), clicks: 0 },
    ]);
  });
});
