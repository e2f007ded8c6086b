import { runInNewContext } from 'vm';
import { clickIdFromCookies, TRACK_SCRIPT, trackClickId } from './index';

const ID = 'q3Jm0c2Z7yZ4fC1dX9bA2w';

/** Runs the served script as a browser would, on a page at `url`, loaded by a <script> with `attributes`; answers the cookie it wrote. */
function served(url: string, attributes: Record<string, string> = {}): string | undefined {
  const u = new URL(url);
  const document = {
    cookie: undefined as string | undefined,
    currentScript: { getAttribute: (name: string) => attributes[name] ?? null },
  };
  runInNewContext(TRACK_SCRIPT, { document, location: { search: u.search, protocol: u.protocol }, URLSearchParams });
  return document.cookie;
}

function bundled(url: string, options: Parameters<typeof trackClickId>[0] = {}): string | undefined {
  const u = new URL(url);
  const document = { cookie: undefined as unknown as string };
  trackClickId(options, { location: { search: u.search, protocol: u.protocol }, document });
  return document.cookie;
}

describe('@shortlink/track (docs/analytics.md, "Conversions")', () => {
  it('is small, one line, with no eval, no Function constructor, no network and no dependency', () => {
    expect(Buffer.byteLength(TRACK_SCRIPT)).toBeLessThan(500);
    expect(TRACK_SCRIPT).not.toMatch(/eval|Function\(|fetch|XMLHttpRequest|sendBeacon|import|require/);
    expect(TRACK_SCRIPT.trim().split('\n')).toHaveLength(1);
  });

  describe.each([
    [
      'the served script',
      (url: string, o: { param?: string; cookie?: string; days?: number; domain?: string } = {}) =>
        served(url, Object.fromEntries(Object.entries(o).map(([k, v]) => [`data-${k}`, String(v)]))),
    ],
    ['trackClickId', bundled],
  ])('%s', (_name, run) => {
    it('keeps the click id of the URL in a first-party cookie for 90 days, Secure on https', () => {
      expect(run(`https://shop.example/landing?ref=x&sl_cid=${ID}#top`)).toBe(`sl_cid=${ID}; path=/; max-age=7776000; samesite=lax; secure`);
      expect(run(`http://localhost:8080/?sl_cid=${ID}`)).toBe(`sl_cid=${ID}; path=/; max-age=7776000; samesite=lax`);
    });

    it('takes the link’s parameter, a cookie name, a lifetime and a parent domain', () => {
      expect(run(`https://www.shop.example/?cid=${ID}`, { param: 'cid', cookie: 'my_cid', days: 30, domain: 'shop.example' })).toBe(
        `my_cid=${ID}; path=/; max-age=2592000; samesite=lax; domain=shop.example; secure`,
      );
    });

    it('writes nothing without a click id, or with one that is not 22 characters of base64url', () => {
      expect(run('https://shop.example/landing?ref=x')).toBeUndefined();
      expect(run('https://shop.example/?sl_cid=short')).toBeUndefined();
      expect(run(`https://shop.example/?sl_cid=${ID.slice(1)};x`)).toBeUndefined();
      expect(run(`https://shop.example/?sl_cid=${encodeURIComponent(`${ID.slice(2)}a; b`)}`)).toBeUndefined();
    });
  });

  it('reads the click id back from a Cookie header, for the site’s backend', () => {
    expect(clickIdFromCookies(`a=1; sl_cid=${ID}; b=2`)).toBe(ID);
    expect(clickIdFromCookies(`my_cid=${ID}`, 'my_cid')).toBe(ID);
    expect(clickIdFromCookies('sl_cid=nope')).toBeNull();
    expect(clickIdFromCookies(undefined)).toBeNull();
  });
});
