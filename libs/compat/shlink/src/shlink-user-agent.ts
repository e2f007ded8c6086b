/**
 * Shlink's visit carries the visitor's user agent, which its web client parses (bowser) into the
 * browser and the operating system of its charts. We never keep the user agent (docs/design.md,
 * "Privacy"), only the browser and OS names we parsed from it at the click (ua-parser-js): the
 * visit's `userAgent` is a representative one rebuilt from those two, which any user-agent parser
 * reads back as the same browser on the same OS, and which names nothing else of the visitor.
 */

/** The platform token of each OS (ua-parser-js's names), as browsers of that OS send it. */
const PLATFORMS: ReadonlyArray<[RegExp, string]> = [
  [/^windows/i, 'Windows NT 10.0; Win64; x64'],
  [/^(mac ?os|macos|os x)/i, 'Macintosh; Intel Mac OS X 10_15_7'],
  [/^ios$/i, 'iPhone; CPU iPhone OS 17_5 like Mac OS X'],
  [/^ipados$/i, 'iPad; CPU OS 17_5 like Mac OS X'],
  [/^android/i, 'Linux; Android 14; K'],
  [/^(chrom(e|ium) ?os)/i, 'X11; CrOS x86_64 15917.71.0'],
  [/^ubuntu/i, 'X11; Ubuntu; Linux x86_64'],
  [/^(linux|debian|fedora|arch|gentoo|mint|centos|red ?hat|suse|opensuse|slackware|manjaro|kubuntu|xubuntu)/i, 'X11; Linux x86_64'],
  [/^freebsd/i, 'X11; FreeBSD amd64'],
];

const CHROME = 'AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0';

type Os = 'ios' | 'android' | 'other';

/** The product tokens of each browser (ua-parser-js's names), on a mobile OS or elsewhere. */
function browserTokens(browser: string, os: Os): string | null {
  const mobile = os === 'other' ? '' : ' Mobile';
  const b = browser.toLowerCase();
  if (os === 'ios') {
    if (/chrome/.test(b)) return 'AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1';
    if (/firefox/.test(b)) return 'AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/127.0 Mobile/15E148 Safari/605.1.15';
    if (/edge/.test(b)) return 'AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 EdgiOS/126.0.2592.56 Mobile/15E148 Safari/605.1.15';
    if (/safari|webkit/.test(b)) return 'AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
  }
  if (/^(mobile )?chrome( webview| headless)?$/.test(b)) return `${CHROME}${mobile} Safari/537.36`;
  if (/^chromium$/.test(b)) return `AppleWebKit/537.36 (KHTML, like Gecko) Chromium/126.0.0.0 Chrome/126.0.0.0${mobile} Safari/537.36`;
  if (/firefox/.test(b)) return os === 'android' ? 'Gecko/127.0 Firefox/127.0' : 'Gecko/20100101 Firefox/127.0';
  if (/edge/.test(b)) return `${CHROME}${mobile} Safari/537.36 ${os === 'android' ? 'EdgA' : 'Edg'}/126.0.0.0`;
  if (/opera/.test(b)) return `${CHROME}${mobile} Safari/537.36 OPR/111.0.0.0`;
  if (/samsung/.test(b)) return 'AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36';
  if (/vivaldi/.test(b)) return `${CHROME} Safari/537.36 Vivaldi/6.7.3329.41`;
  if (/^android browser$/.test(b)) return 'AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30';
  if (/safari/.test(b)) return `AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5${mobile} Safari/605.1.15`;
  if (/^(ie|internet explorer)$/.test(b)) return null; // its platform carries it (below)
  return null;
}

const known = (name: string | null | undefined): name is string => !!name && name !== 'unknown' && name !== 'Other';

/** A user agent that reads as `browser` on `os` (either may be unknown); '' when both are. */
export function representativeUserAgent(browser: string | null | undefined, os: string | null | undefined): string {
  const platform = known(os) ? PLATFORMS.find(([re]) => re.test(os))?.[1] : undefined;
  if (!known(browser)) return platform ? `Mozilla/5.0 (${platform})` : '';
  if (/^(ie|internet explorer)$/i.test(browser)) return `Mozilla/5.0 (${platform ?? 'Windows NT 10.0'}; Trident/7.0; rv:11.0) like Gecko`;
  const kind: Os = platform?.startsWith('iP') ? 'ios' : platform?.includes('Android') ? 'android' : 'other';
  const tokens = browserTokens(browser, kind);
  const firefox = /firefox/i.test(browser) && kind !== 'ios';
  const inside = platform ? `${platform}${firefox ? '; rv:127.0' : ''}` : firefox ? 'rv:127.0' : '';
  return [`Mozilla/5.0${inside ? ` (${inside})` : ''}`, tokens].filter(Boolean).join(' ');
}
