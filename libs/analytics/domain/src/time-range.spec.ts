import { parseInstant } from './time-range';

describe('parseInstant', () => {
  it('reads epoch seconds and strict ISO 8601, and uses the fallback when absent', () => {
    expect(parseInstant('from', '1733220000', 0)).toBe(1733220000);
    expect(parseInstant('from', '2026-12-03T10:00:00Z', 0)).toBe(Date.UTC(2026, 11, 3, 10) / 1000);
    expect(parseInstant('from', '2026-12-03', 0)).toBe(Date.UTC(2026, 11, 3) / 1000);
    expect(parseInstant('from', undefined, 42)).toBe(42);
    expect(parseInstant('from', '', 42)).toBe(42);
  });

  it('refuses instants beyond the stored range and loose forms with INVALID_TIME_RANGE', () => {
    for (const bad of [
      '1733220000000',
      '9999999999',
      '-000001-01-01T00:00:00Z',
      '+275760-09-13T00:00:00Z',
      '2200-01-01T00:00:00Z',
      '1e9',
      ' 1',
      'now',
      '2026-12-03T10:00',
    ]) {
      expect(() => parseInstant('from', bad, 0)).toThrow(expect.objectContaining({ code: 'INVALID_TIME_RANGE', details: { parameter: 'from' } }));
    }
  });
});
