import { UAParser } from 'ua-parser-js';
import { representativeUserAgent } from './shlink-user-agent';

/** Real user agents of common browsers; what we keep of each is the browser and OS names ua-parser-js gives. */
const REAL = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:126.0) Gecko/20100101 Firefox/126.0',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36 Edg/125.0.0.0',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36 OPR/110.0.0.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/125.0.6422.80 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Android 14; Mobile; rv:126.0) Gecko/126.0 Firefox/126.0',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36',
  'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0',
  'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko',
];

const kept = (ua: string) => {
  const r = new UAParser(ua).getResult();
  return { browser: r.browser.name ?? 'Other', os: r.os.name ?? 'Other' };
};

describe('representativeUserAgent (the Shlink visit’s userAgent)', () => {
  it.each(REAL)('reads back as the browser and OS kept of %s', (ua) => {
    const { browser, os } = kept(ua);
    expect(kept(representativeUserAgent(browser, os))).toEqual({ browser, os });
  });

  it('names the OS the way Shlink’s web client finds it (its platform token), even without a known browser', () => {
    expect(representativeUserAgent('Chrome', 'Windows')).toMatch(/^Mozilla\/5\.0 \(Windows NT 10\.0; Win64; x64\) .*Chrome\//);
    expect(representativeUserAgent('Other', 'Mac OS')).toBe('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7)');
    expect(kept(representativeUserAgent('Other', 'Android')).os).toBe('Android');
    expect(kept(representativeUserAgent('Firefox', 'Other')).browser).toBe('Firefox');
    expect(representativeUserAgent('Other', 'Other')).toBe('');
    expect(representativeUserAgent(null, 'unknown')).toBe('');
  });
});
