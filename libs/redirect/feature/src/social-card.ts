import type { ServerResponse } from 'http';
import type { LinkSocial } from '@shortlink/links-domain';
import { escapeHtml } from './pages';

/** No script, no style, nothing loaded: a card is read by a bot, never rendered for a person. */
const CARD_CSP = "default-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

/**
 * The page an unfurling bot gets for a link with `social` (docs/design.md, "Link options"): Open
 * Graph and Twitter Card tags, every value escaped, and a meta refresh and a link to `next` for a
 * client that follows it (the target, or the short URL itself when the target must stay hidden).
 * `shortUrl` is the link's own address (og:url), so that a card groups the shares of one link.
 */
export function socialCardHtml(social: LinkSocial, shortUrl: string, next: string): string {
  const meta = (attribute: 'property' | 'name', key: string, value: string) => `<meta ${attribute}="${key}" content="${escapeHtml(value)}">`;
  const tags = [
    meta('property', 'og:type', 'website'),
    meta('property', 'og:url', shortUrl),
    meta('property', 'og:title', social.title),
    social.description === null ? '' : meta('property', 'og:description', social.description),
    social.image === null ? '' : meta('property', 'og:image', social.image),
    meta('name', 'twitter:card', social.image === null ? 'summary' : 'summary_large_image'),
    meta('name', 'twitter:title', social.title),
    social.description === null ? '' : meta('name', 'twitter:description', social.description),
    social.image === null ? '' : meta('name', 'twitter:image', social.image),
  ].join('');
  const to = escapeHtml(next);
  return (
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(social.title)}</title>${tags}` +
    `<meta http-equiv="refresh" content="0;url=${to}"><meta name="robots" content="noindex"><meta name="referrer" content="no-referrer"></head>` +
    `<body><a href="${to}">${escapeHtml(social.title)}</a></body></html>`
  );
}

/** A rendered card: the HTML as a string (so that Node writes head and body as one chunk) and its length in bytes. */
export interface RenderedCard {
  readonly html: string;
  readonly contentLength: string;
}

/**
 * The card of a link, rendered once per L1 entry and address form: the entry object is replaced
 * when the link changes, so a card can never outlive its link (docs/design.md, "Link options").
 * Bots ask for the same few links in bursts; a card answer then costs a lookup and a write.
 */
export class SocialCards {
  private readonly rendered = new WeakMap<object, { readonly https: boolean; readonly domain: string; readonly card: RenderedCard }>();

  /**
   * The card of `entry` reached at `scheme://domain/code`, leading to `target`, or to the short URL
   * itself when `target` is null (a password link's target stays hidden). A cached card costs a
   * lookup and two comparisons, no string building and no allocation.
   */
  cardOf(entry: object, social: LinkSocial, https: boolean, domain: string, code: string, target: string | null): RenderedCard {
    const known = this.rendered.get(entry);
    if (known !== undefined && known.https === https && known.domain === domain) return known.card;
    const shortUrl = `${https ? 'https' : 'http'}://${domain}/${code}`;
    const html = socialCardHtml(social, shortUrl, target ?? shortUrl);
    const card = { html, contentLength: String(Buffer.byteLength(html)) };
    this.rendered.set(entry, { https, domain, card });
    return card;
  }
}

/**
 * Writes a card: 200, HTML, the strict CSP above, kept by no cache (the same URL redirects people).
 * Each header costs Node a validation per answer, so the card sends only those a header must carry
 * (docs/design.md, "Link options"): the referrer policy is a meta tag of the page, and no `Vary`
 * is needed on an answer that `no-store` keeps out of every cache.
 */
export function sendSocialCard(res: ServerResponse, card: RenderedCard, head: boolean): void {
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': card.contentLength,
    'content-security-policy': CARD_CSP,
    'x-content-type-options': 'nosniff',
    'cache-control': 'private, no-store',
  });
  if (head) res.end();
  else res.end(card.html, 'utf8');
}
