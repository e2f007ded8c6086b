import { callbackOf, formatOf, render, toXml, yourlsDate } from './yourls-output';

const answer = { httpStatus: 200, body: { keyword: 'abc', shorturl: 'https://sho.rt/abc', statusCode: 200 }, simple: 'https://sho.rt/abc' };

describe('YOURLS output', () => {
  it('reads format= as YOURLS does: xml when absent, simple when unknown', () => {
    expect(formatOf(undefined)).toBe('xml');
    expect(formatOf('')).toBe('xml');
    expect(formatOf('json')).toBe('json');
    expect(formatOf('jsonp')).toBe('jsonp');
    expect(formatOf('yaml')).toBe('simple');
    expect(formatOf(['json'])).toBe('simple');
  });

  it('accepts JavaScript identifier paths as callbacks and nothing that could run more', () => {
    expect(callbackOf('cb')).toBe('cb');
    expect(callbackOf('jQuery123_456.done')).toBe('jQuery123_456.done');
    expect(callbackOf('$')).toBe('$');
    for (const bad of ['', 'alert(1)', 'a;b', 'a b', '1abc', 'a..b', 'a.', '<script>', 'x'.repeat(65), undefined, 3]) expect(callbackOf(bad)).toBeNull();
  });

  it('renders json, jsonp (the callback also inside, as YOURLS), simple and xml with their media types', () => {
    expect(render('json', answer, null)).toEqual({ contentType: 'application/json; charset=utf-8', text: JSON.stringify(answer.body) });
    const jsonp = render('jsonp', answer, 'cb');
    expect(jsonp.contentType).toBe('application/javascript; charset=utf-8');
    expect(jsonp.text).toBe(`cb(${JSON.stringify({ ...answer.body, callback: 'cb' })})`);
    expect(render('simple', answer, null)).toEqual({ contentType: 'text/plain; charset=utf-8', text: 'https://sho.rt/abc' });
    expect(render('xml', answer, null).contentType).toBe('application/xml; charset=utf-8');
  });

  it('writes XML under <result>, nested, escaped, with null empty and odd keys as <item key>', () => {
    const xml = toXml({ a: '<&>"\'', n: null, nested: { 'db-stats': { total_links: '2' } }, list: ['x', 1], '1bad': 'v', ctl: 'a\u0001b' });
    expect(xml).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<result><a>&lt;&amp;&gt;&quot;&apos;</a><n/><nested><db-stats><total_links>2</total_links></db-stats></nested>' +
        '<list><item>x</item><item>1</item></list><item key="1bad">v</item><ctl>ab</ctl></result>\n',
    );
  });

  it('dates as YOURLS writes them', () => {
    expect(yourlsDate(new Date('2026-12-05T18:30:07.123Z'))).toBe('2026-12-05 18:30:07');
  });
});
