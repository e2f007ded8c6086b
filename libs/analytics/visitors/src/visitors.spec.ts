import { LINK_PREVIEWER_AGENTS } from './link-previewers';
import { deviceTargetOf, isBotUserAgent, isLinkPreviewer, UserAgentClassifier } from './user-agent';
import { VisitorIds } from './visitor-id';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const PIXEL = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

describe('user agents', () => {
  it('targets ios, android, and desktop for the rest', () => {
    expect([IPHONE, PIXEL, MAC, WINDOWS, 'curl/8.0'].map(deviceTargetOf)).toEqual(['ios', 'android', 'desktop', 'desktop', 'desktop']);
  });

  it('flags crawlers and link-preview fetchers as bots, and people as people', () => {
    for (const bot of [
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'Twitterbot/1.0',
      'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
      'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
      'TelegramBot (like TwitterBot)',
      'WhatsApp/2.23.20.0',
      'LinkedInBot/1.0',
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'curl/8.0.1',
      'python-requests/2.31',
      '',
    ]) {
      expect({ bot, flagged: isBotUserAgent(bot) }).toEqual({ bot, flagged: true });
    }
    for (const person of [IPHONE, PIXEL, MAC, WINDOWS]) expect(isBotUserAgent(person)).toBe(false);
  });

  it('classifies device, browser and OS once per agent', () => {
    const c = new UserAgentClassifier(10);
    expect(c.classify(IPHONE)).toEqual({ device: 'mobile', browser: 'Mobile Safari', os: 'iOS', bot: false });
    expect(c.classify(WINDOWS)).toEqual({ device: 'desktop', browser: 'Chrome', os: 'Windows', bot: false });
    expect(c.classify('Twitterbot/1.0')).toMatchObject({ device: 'bot', bot: true });
    expect(c.classify(IPHONE)).toBe(c.classify(IPHONE));
  });
});

describe('VisitorIds', () => {
  const day = Date.UTC(2026, 11, 3, 12);
  it('is stable within a UTC day, changes across days, depends on the secret, address and agent', () => {
    const ids = new VisitorIds('secret-a');
    const id = ids.idOf('t1', '203.0.113.7', 'UA', day);
    expect(Number.isSafeInteger(id)).toBe(true);
    expect(id).toBeLessThan(2 ** 52);
    expect(ids.idOf('t1', '203.0.113.7', 'UA', day + 11 * 3600_000)).toBe(id);
    expect(ids.idOf('t1', '203.0.113.7', 'UA', day + 86_400_000)).not.toBe(id);
    expect(new VisitorIds('secret-b').idOf('t1', '203.0.113.7', 'UA', day)).not.toBe(id);
    expect(ids.idOf('t1', '203.0.113.8', 'UA', day)).not.toBe(id);
    expect(ids.idOf('t1', '203.0.113.7', 'UA2', day)).not.toBe(id);
  });

  it("gives one visitor unrelated ids on two tenants' links, and the same on one tenant's links all day", () => {
    const ids = new VisitorIds('secret-a');
    const a = ids.idOf('tenant-a', '203.0.113.7', 'UA', day);
    expect(ids.idOf('tenant-b', '203.0.113.7', 'UA', day)).not.toBe(a);
    expect(ids.idOf('tenant-a', '203.0.113.7', 'UA', day + 3600_000)).toBe(a);
    // The parts are kept apart: no tenant and address can be shifted into one another.
    expect(ids.idOf('t', '1203.0.113.7', 'UA', day)).not.toBe(ids.idOf('t1', '203.0.113.7', 'UA', day));
  });
});

describe('link previewers (docs/design.md, "Link options")', () => {
  it.each(Object.entries(LINK_PREVIEWER_AGENTS))('knows %s as a link previewer', (_name, agent) => {
    expect(isLinkPreviewer(agent)).toBe(true);
  });

  it('takes people, scripts and search crawlers for no previewer: they get the redirect', () => {
    for (const agent of [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
      // The in-app browsers of chat apps are people.
      'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0 Mobile Safari/537.36 WhatsApp/2.24',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/460.0]',
      'curl/8.5.0',
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      '',
    ]) {
      expect({ agent, previewer: isLinkPreviewer(agent) }).toEqual({ agent, previewer: false });
    }
  });
});
