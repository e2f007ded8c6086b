import { createHash } from 'crypto';
import type { ServerResponse } from 'http';
import { CachedLink } from '@shortlink/links-domain';

/**
 * The redirect's few HTML pages (docs/design.md, "Pages"): the password form, the warning page of a
 * flagged link, the blocked page of a banned one, the preview (`/{code}+`) and the refusals of the
 * password form. Server-rendered, tiny, every value escaped, no script at all; the only style is
 * one constant stylesheet allowed by its hash.
 */

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}.url{word-break:break-all;font-family:monospace}.note{color:#8a5a00}form{margin:1.5rem 0}input{font:inherit;padding:.3rem}button,.button{font:inherit;padding:.3rem .9rem}dt{font-weight:600}';
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/**
 * No script, no plugin, no frame, no base, nothing from elsewhere: only our stylesheet. A form may
 * post to this page only; the password form also lets the browser follow the redirect its answer
 * gives to the target (Chrome checks form-action on the redirects after a submission, and naming
 * the target's origin here would reveal it).
 */
const CSP = `default-src 'none'; style-src ${STYLE_HASH}; img-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'`;
const CSP_PASSWORD_FORM = `default-src 'none'; style-src ${STYLE_HASH}; img-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self' https: http:`;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

export interface Page {
  readonly status: number;
  readonly title: string;
  /** Already escaped HTML. */
  readonly body: string;
  readonly passwordForm?: boolean;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Writes a page with the security headers every page carries. */
export function sendPage(res: ServerResponse, page: Page, head: boolean): void {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex,nofollow"><title>${escapeHtml(page.title)}</title><style>${STYLE}</style></head><body>${page.body}</body></html>`;
  res.writeHead(page.status, {
    ...page.headers,
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(html)),
    'content-security-policy': page.passwordForm ? CSP_PASSWORD_FORM : CSP,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cache-control': 'private, no-store',
  });
  res.end(head ? undefined : html);
}

/** The path of a link's page, e.g. `/abc1234/go?x=1`, escaped for an attribute. */
const href = (path: string) => escapeHtml(path);

export function passwordPage(wrong: boolean, flagged: boolean): Page {
  return {
    status: wrong ? 403 : 200,
    title: 'Password required',
    passwordForm: true,
    body:
      '<h1>This link is protected by a password</h1>' +
      (flagged ? '<p class="note">This link was flagged as possibly unsafe. Continue only if you trust the sender.</p>' : '') +
      (wrong ? '<p class="note" role="alert">That password is not right. Please try again.</p>' : '') +
      // No action: the form posts to this very URL, query string included.
      '<form method="post"><label>Password <input type="password" name="password" required maxlength="128" autocomplete="current-password" autofocus></label> <button type="submit">Continue</button></form>',
  };
}

/** A flagged link: what it points to (unless a password hides it) and a link to go on anyway. */
export function warningPage(link: CachedLink, continuePath: string): Page {
  const target = link.rules?.passwordHash === undefined ? `<p>It leads to:</p><p class="url">${escapeHtml(link.targetUrl)}</p>` : '';
  return {
    status: 200,
    title: 'Warning: this link may be unsafe',
    body:
      '<h1>This link may be unsafe</h1><p class="note">Our checks flagged this link as possibly deceptive or harmful (for example a look-alike of a well-known site).</p>' +
      target +
      `<p><a class="button" href="${href(continuePath)}" rel="nofollow noreferrer">Continue anyway</a></p>`,
  };
}

export function blockedPage(): Page {
  return {
    status: 451,
    title: 'Link blocked',
    body: '<h1>This link has been blocked</h1><p>It was disabled by the operators of this service, for example after a legal request or a report of abuse.</p>',
  };
}

/** A link of a suspended tenant: unavailable while the operators keep the tenant suspended. */
export function suspendedPage(): Page {
  return {
    status: 403,
    title: 'Link unavailable',
    body: '<h1>This link is unavailable</h1><p>The account that owns it is suspended by the operators of this service.</p>',
  };
}

/** `/{code}+`: what the link is, without following it. A password hides the target here too. */
export function previewPage(link: CachedLink, code: string): Page {
  const rows: string[] = [];
  if (link.title) rows.push(`<dt>Title</dt><dd>${escapeHtml(link.title)}</dd>`);
  rows.push(
    `<dt>Target</dt><dd class="url">${link.rules?.passwordHash === undefined ? escapeHtml(link.targetUrl) : 'hidden (this link is protected by a password)'}</dd>`,
  );
  if (link.rules?.geoTargets || link.rules?.deviceTargets || link.rules?.variants)
    rows.push('<dt>Note</dt><dd>Visitors may be sent to another address depending on their country, device or an experiment.</dd>');
  rows.push(`<dt>Created</dt><dd>${escapeHtml(new Date(link.createdAt).toISOString())}</dd>`);
  return {
    status: 200,
    title: 'Link preview',
    body:
      '<h1>Where this link leads</h1>' +
      (link.moderation === 'flagged' ? '<p class="note">This link was flagged as possibly unsafe.</p>' : '') +
      `<dl>${rows.join('')}</dl><p><a class="button" href="${href(`/${code}`)}" rel="nofollow noreferrer">Open the link</a></p>`,
  };
}

/** A refusal of the password form for a browser (an API client gets problem+json). */
export function refusalPage(status: number, message: string, retryAfter?: string): Page {
  return { status, title: 'Not now', body: `<h1>${escapeHtml(message)}</h1>`, headers: retryAfter ? { 'retry-after': retryAfter } : undefined };
}
