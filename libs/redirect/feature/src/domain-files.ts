import { isDomainSettingsChange, LinkChange, LinkRepository } from '@shortlink/links-domain';
import { DomainSettingsDirectory, JsonValue } from '@shortlink/tenants-domain';

/** The crawlable codes a robots.txt names at most (Google reads 500 KiB of it; 10 000 lines is well within). */
export const MAX_CRAWLABLE_CODES = 10_000;

export type WellKnownFile = 'apple-app-site-association' | 'assetlinks.json';

/**
 * The files a domain serves besides its links (docs/design.md, "Domain settings"): `robots.txt`
 * from the domain's robots policy and its links marked crawlable, and the two well-known files of
 * app links. Settings come from the in-memory directory; the crawlable codes are read over every
 * shard once per domain and held until a change of that domain (a link or its settings) is told,
 * or `ttlMs` has passed.
 */
export class DomainFiles {
  private readonly robotsHeld = new Map<string, { readonly text: Promise<string>; readonly until: number }>();

  constructor(
    private readonly settings: DomainSettingsDirectory,
    private readonly links: Pick<LinkRepository, 'crawlableCodes'>,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * `robots.txt` (RFC 9309): `disallow` (the default) lets crawlers fetch only the links marked
   * crawlable (`$` ends each pattern, so `/abc` does not also open `/abcd`); `allow` lets them fetch
   * every link. Rejects when the shards cannot be read (the caller answers 503, which crawlers read
   * as "fetch nothing for now").
   */
  robots(domain: string): Promise<string> {
    const held = this.robotsHeld.get(domain);
    if (held && held.until > this.now()) return held.text;
    const text = this.readRobots(domain);
    this.robotsHeld.set(domain, { text, until: this.now() + this.ttlMs });
    text.catch(() => {
      if (this.robotsHeld.get(domain)?.text === text) this.robotsHeld.delete(domain);
    });
    if (this.robotsHeld.size > 10_000) this.robotsHeld.delete(this.robotsHeld.keys().next().value!);
    return text;
  }

  /** The well-known file of app links, as JSON text, or null when the domain has none. */
  wellKnown(domain: string, file: WellKnownFile): string | null {
    const settings = this.settings.get(domain);
    const document: JsonValue | null | undefined = file === 'assetlinks.json' ? settings?.androidAssetLinks : settings?.appleAppSiteAssociation;
    return document ? JSON.stringify(document) : null;
  }

  /**
   * A change told on the link channel: a domain's settings are read again; its robots.txt is made
   * again on the next request. Resolves once the new settings are held.
   */
  async changed(change: LinkChange): Promise<void> {
    this.robotsHeld.delete(change.domain);
    if (!isDomainSettingsChange(change)) return;
    await this.settings.reload(change.domain, change.version);
    // A robots.txt asked for while the settings were read may have used the old policy.
    this.robotsHeld.delete(change.domain);
  }

  /** The channel was interrupted: nothing held about links can be trusted, and settings are compared with the stored ones now. */
  async dropAll(): Promise<void> {
    this.robotsHeld.clear();
    await this.settings.refresh();
    this.robotsHeld.clear();
  }

  private async readRobots(domain: string): Promise<string> {
    if ((this.settings.get(domain)?.robots ?? 'disallow') === 'allow') return 'User-agent: *\nAllow: /\n';
    const codes = await this.links.crawlableCodes(domain, MAX_CRAWLABLE_CODES);
    return `User-agent: *\n${codes.map((code) => `Allow: /${code}$\n`).join('')}Disallow: /\n`;
  }
}
