import { parseIsoInstant } from './instant';

describe('parseIsoInstant', () => {
  it('reads dates and date-times with a zone', () => {
    expect(parseIsoInstant('2026-12-03')).toBe(Date.UTC(2026, 11, 3));
    expect(parseIsoInstant('2026-12-03T10:15Z')).toBe(Date.UTC(2026, 11, 3, 10, 15));
    expect(parseIsoInstant('2026-12-03T10:15:30.123+02:00')).toBe(Date.UTC(2026, 11, 3, 8, 15, 30, 123));
  });

  it('refuses loose forms, impossible days and times without a zone', () => {
    for (const bad of [
      '-000001-01-01T00:00:00Z',
      '+002026-01-01T00:00:00Z',
      '2026-02-30',
      '2026-13-01',
      '2026-12-03T24:00Z',
      '2026-12-03T10:15',
      'tomorrow',
      '1733220000',
      '2026-12-03T10:15:00+15:00',
      '',
    ]) {
      expect(parseIsoInstant(bad)).toBeNull();
    }
  });
});
