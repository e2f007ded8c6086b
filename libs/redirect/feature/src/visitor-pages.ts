import type { IncomingMessage } from 'http';
import { DomainSettings, DomainSettingsDirectory } from '@shortlink/tenants-domain';
import { pageLanguage, prefersHtml } from '@shortlink/nest-platform';
import { PAGE_LANGUAGES, PAGE_TEXT } from './page-text';
import { PageContext } from './pages';

/**
 * What a browser's answer depends on besides the link (docs/design.md, "Pages", "Domain settings"):
 * whether the client wants a page at all, its language, and the settings of the domain it reached,
 * all from memory. Asked only on the paths that answer a page or a domain redirect, never before a
 * plain redirect.
 */
export class VisitorPages {
  constructor(
    private readonly settings: DomainSettingsDirectory,
    /** The service's own default domain: its branding is the service's. */
    private readonly serviceDomain: string,
  ) {}

  /** A browser (HTML preferred to JSON); anything else keeps problem+json. */
  wantsPage(req: IncomingMessage): boolean {
    return prefersHtml(req.headers.accept);
  }

  settingsOf(domain: string): DomainSettings | undefined {
    return this.settings.get(domain);
  }

  /** The visitor's language, and the domain's branding, else the service's. */
  contextOf(req: IncomingMessage, domain: string): PageContext {
    const lang = pageLanguage(req.headers['accept-language'], PAGE_LANGUAGES);
    const branding = this.settings.get(domain)?.branding ?? this.settings.get(this.serviceDomain)?.branding ?? null;
    return { lang, text: PAGE_TEXT[lang], branding };
  }
}
