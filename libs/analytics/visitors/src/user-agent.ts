import { createIsbotFromList, isbot, list as isbotPatterns } from 'isbot';
import type { LRUCache } from 'lru-cache';
import { boundedLru } from '@shortlink/core';
import { UAParser } from 'ua-parser-js';

/** The device a link can target (issue: device targeting). */
export type DeviceTarget = 'ios' | 'android' | 'desktop';

/** What analytics keeps of a user agent. */
export interface UserAgentFacts {
  /** mobile | tablet | desktop | bot | other */
  readonly device: 'mobile' | 'tablet' | 'desktop' | 'bot' | 'other';
  readonly browser: string;
  readonly os: string;
  readonly bot: boolean;
}

/**
 * Link-preview fetchers and crawlers that isbot may not know yet. They fetch a link to render a
 * card, and counting them as clicks is the most common complaint about link analytics.
 */
const PREVIEW_FETCHERS =
  /(slackbot|twitterbot|facebookexternalhit|facebookcatalog|linkedinbot|discordbot|telegrambot|whatsapp|skypeuripreview|embedly|pinterestbot|redditbot|applebot|bingpreview|googleother|vkshare|iframely|mastodon|bluesky|cardyb|outlook-ios|ms office|microsoft office|zoom)/i;

/** True for crawlers, monitors and link-preview fetchers. An empty user agent is a script: a bot. */
export function isBotUserAgent(userAgent: string): boolean {
  return userAgent.trim() === '' || PREVIEW_FETCHERS.test(userAgent) || isbot(userAgent);
}

/**
 * The fetchers that unfurl a link into a card in a chat or a feed (docs/design.md, "Link options").
 * isbot has no list of its own for them: it knows them only among all bots, so they are named here,
 * and isbot's own patterns that name a previewer (`preview`: BingPreview, Google Page Preview, …) are added.
 */
const UNFURLERS =
  /slackbot|twitterbot|facebookexternalhit|facebookcatalog|linkedinbot|discordbot|telegrambot|^whatsapp\/|skypeuripreview|embedly|pinterestbot|redditbot|vkshare|iframely|mastodon\/|cardyb|xing-contenttabreceiver/i;
const isbotPreviewer = createIsbotFromList(isbotPatterns.filter((pattern) => /preview/i.test(pattern)));

/** True for a link previewer: it gets a link's social card instead of its redirect. A person's browser never is one. */
export function isLinkPreviewer(userAgent: string): boolean {
  return userAgent !== '' && (UNFURLERS.test(userAgent) || isbotPreviewer(userAgent));
}

/** ios / android by OS, desktop for everything else (tablets follow their OS). */
export function deviceTargetOf(userAgent: string): DeviceTarget {
  const os = new UAParser(userAgent).getOS().name?.toLowerCase() ?? '';
  if (os === 'ios' || os === 'ipados') return 'ios';
  if (os === 'android') return 'android';
  // iPadOS 13+ sends a desktop Safari user agent; it cannot be told apart from a Mac here.
  return 'desktop';
}

/** The operating system families a redirect rule can name (docs/design.md, "Redirect rules"). */
export type PlatformSystem = 'windows' | 'macos' | 'linux' | 'chromeos' | 'ios' | 'android';
/** The browsers a redirect rule can name (Shlink's list). */
export type PlatformBrowser = 'chrome' | 'firefox' | 'edge' | 'safari' | 'opera' | 'android_browser';

/** What a redirect rule reads of a user agent: its OS family and browser, null when it is none of those named. */
export interface UserAgentPlatform {
  readonly os: PlatformSystem | null;
  readonly browser: PlatformBrowser | null;
}

/** ua-parser's OS names, by family; every Linux distribution it names is `linux`. */
const SYSTEMS: Readonly<Record<string, PlatformSystem>> = {
  windows: 'windows',
  'mac os': 'macos',
  macos: 'macos',
  ios: 'ios',
  ipados: 'ios',
  android: 'android',
  'chromium os': 'chromeos',
  'chrome os': 'chromeos',
};
const LINUX =
  /^(linux|ubuntu|kubuntu|xubuntu|lubuntu|debian|fedora|mint|arch|gentoo|slackware|suse|opensuse|centos|red ?hat|mandriva|manjaro|deepin|elementary os|pclinuxos|zenwalk|mageia|knoppix|sabayon|vectorlinux|linpus)$/;
const BROWSERS: Readonly<Record<string, PlatformBrowser>> = {
  chrome: 'chrome',
  'mobile chrome': 'chrome',
  'chrome headless': 'chrome',
  'chrome webview': 'chrome',
  chromium: 'chrome',
  firefox: 'firefox',
  'mobile firefox': 'firefox',
  edge: 'edge',
  safari: 'safari',
  'mobile safari': 'safari',
  opera: 'opera',
  'opera mini': 'opera',
  'opera mobi': 'opera',
  'opera touch': 'opera',
  'opera gx': 'opera',
  'android browser': 'android_browser',
};

/** The OS family and browser of a user agent, as redirect rules name them (one parse; callers cache it per agent). */
export function platformOf(userAgent: string): UserAgentPlatform {
  const result = new UAParser(userAgent).getResult();
  const os = result.os.name?.toLowerCase() ?? '';
  const browser = result.browser.name?.toLowerCase() ?? '';
  return { os: SYSTEMS[os] ?? (LINUX.test(os) ? 'linux' : null), browser: BROWSERS[browser] ?? null };
}

/**
 * Parses user agents into analytics facts with a bounded cache: the same few hundred agents make
 * most traffic, so parsing is paid once per agent, not per click.
 */
export class UserAgentClassifier {
  private readonly cache: LRUCache<string, UserAgentFacts>;

  constructor(maxEntries = 10_000) {
    this.cache = boundedLru({ maxEntries });
  }

  classify(userAgent: string): UserAgentFacts {
    const key = userAgent.length > 512 ? userAgent.slice(0, 512) : userAgent;
    let facts = this.cache.get(key);
    if (!facts) {
      facts = parse(key);
      this.cache.set(key, facts);
    }
    return facts;
  }
}

function parse(userAgent: string): UserAgentFacts {
  const bot = isBotUserAgent(userAgent);
  const result = new UAParser(userAgent).getResult();
  const type = result.device.type;
  const device: UserAgentFacts['device'] = bot ? 'bot' : type === 'mobile' ? 'mobile' : type === 'tablet' ? 'tablet' : type === undefined ? 'desktop' : 'other';
  return { device, browser: result.browser.name ?? 'Other', os: result.os.name ?? 'Other', bot };
}
