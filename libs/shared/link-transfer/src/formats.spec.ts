import { readFileSync } from 'fs';
import { join } from 'path';
import { parse } from 'csv-parse/sync';
import { CsvRecord, detectFormat, Format, kuttRecords, normaliseHeader, toLinkBody } from './formats';

const fixture = (name: string) => join(__dirname, 'fixtures', name);
const records = (name: string): { headers: string[]; rows: CsvRecord[] } => {
  const text = readFileSync(fixture(name), 'utf8');
  const [headers] = parse(text, { to_line: 1 }) as string[][];
  return { headers, rows: parse(text, { columns: (h: string[]) => h.map(normaliseHeader), skip_empty_lines: true }) as CsvRecord[] };
};
const keep = { keepCodes: true, keepDomains: false };

describe('export formats (fixtures follow each tool’s documented export)', () => {
  it.each<[string, Format]>([
    ['shortlink.csv', 'shortlink'],
    ['bitly.csv', 'bitly'],
    ['shlink.csv', 'shlink'],
    ['yourls.csv', 'yourls'],
  ])('tells %s by its header', (file, format) => {
    expect(detectFormat(records(file).headers)).toBe(format);
  });

  it('tells Bitly’s dashboard headings too, and nothing it does not know', () => {
    expect(detectFormat(['Title', 'Bitlink', 'Long URL', 'Tags', 'Created'])).toBe('bitly');
    expect(detectFormat(['name', 'address'])).toBeNull();
  });

  it('maps our own columns, options included', () => {
    const [first, second] = records('shortlink.csv').rows.map((r) => toLinkBody('shortlink', r, keep));
    expect(first).toEqual({ url: 'https://example.com/spring', alias: 'spring-sale', title: 'Spring sale', tags: ['promo', 'spring'], expiresAt: '2031-01-31T12:00:00Z', redirectType: 301, utm: { source: 'newsletter', campaign: 'spring' } });
    expect(second).toEqual({ url: 'https://example.com/summer?a=1&b=2', title: 'Summer, hot', tags: ['promo'], maxClicks: 500 });
  });

  it('maps Bitly: long_url, the custom back-half before the generated one, title, tags', () => {
    const rows = records('bitly.csv').rows.map((r) => toLinkBody('bitly', r, keep));
    expect(rows).toEqual([
      { url: 'https://example.com/bitly/launch', alias: '3xYzAbC', title: 'Launch post', tags: ['launch', 'blog'] },
      { url: 'https://example.com/bitly/webinar?utm_source=bitly', alias: 'bitly-webinar', title: 'Webinar', tags: ['webinar'] },
      { url: 'https://example.com/bitly/plain', alias: '5mNoPqR' },
    ]);
  });

  it('maps Shlink: longUrl, shortCode, title, tags joined with "|"; its domain only when asked', () => {
    const rows = records('shlink.csv').rows;
    expect(toLinkBody('shlink', rows[0], keep)).toEqual({ url: 'https://example.com/shlink/docs', alias: 'shlink-docs', title: 'A "quoted", title', tags: ['docs', 'blog'] });
    expect(toLinkBody('shlink', rows[0], { keepCodes: false, keepDomains: true })).toMatchObject({ domain: 's.example.com' });
    expect(toLinkBody('shlink', rows[0], { keepCodes: false, keepDomains: true }).alias).toBeUndefined();
    expect(toLinkBody('shlink', rows[2], keep).tags).toEqual(['one', 'two', 'three']);
  });

  it('maps YOURLS: url, keyword, title', () => {
    expect(records('yourls.csv').rows.map((r) => toLinkBody('yourls', r, keep))[1]).toEqual({ url: 'https://example.com/yourls/second', alias: 'yourls2', title: 'Second, with comma' });
  });

  it('maps Kutt’s API link list: target, address, description, expire_in', () => {
    const rows = kuttRecords(JSON.parse(readFileSync(fixture('kutt.json'), 'utf8'))).map((r) => toLinkBody('kutt', r, keep));
    expect(rows[0]).toEqual({ url: 'https://example.com/kutt/docs', alias: 'kutt-docs', title: 'Kutt docs', expiresAt: '2031-06-01T10:00:00.000Z' });
    expect(rows[1]).toEqual({ url: 'https://example.com/kutt/plain', alias: 'xK3pQ9' });
    expect(() => kuttRecords({ links: [] })).toThrow(/Kutt link list/);
  });
});
