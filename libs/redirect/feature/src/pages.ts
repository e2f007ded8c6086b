import { createHash } from 'crypto';
import type { ServerResponse } from 'http';
import { CachedLink } from '@shortlink/links-domain';
import { MAX_REPORT_DETAILS, REPORT_REASONS } from '@shortlink/safety-domain';
import type { Branding } from '@shortlink/tenants-domain';
import { Message, PageLanguage, PageText } from './page-text';

/**
 * The redirect's HTML pages (docs/design.md, "Pages"): what a browser gets for every outcome that is
 * not a redirect (an unknown, expired or exhausted link, a suspended tenant, too many requests, a
 * dependency down), and the password form, the warning page of a flagged link, the blocked page of a
 * banned one, the preview (`/{code}+`) with "Report this link", its confirmation and a broken link's page. Server-rendered and small, every value escaped, no script
 * at all; one stylesheet allowed by its hash; in the visitor's language; with the domain owner's
 * branding, the service's otherwise.
 */

/** The language and look of one answer. */
export interface PageContext {
  readonly lang: PageLanguage;
  readonly text: PageText;
  /** The domain's branding, else the service's (the default domain's), else none. */
  readonly branding: Branding | null;
}

export interface Page {
  readonly status: number;
  readonly title: string;
  /** Already escaped HTML: what goes inside `<main>`. */
  readonly body: string;
  readonly passwordForm?: boolean;
  /** Already escaped HTML for `<head>` (the app page's meta refresh). */
  readonly head?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

const DEFAULT_ACCENT = '#2f5bea';

const BASE_STYLE =
  '*{box-sizing:border-box}html{color-scheme:light dark}' +
  'body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;padding:1.5rem;' +
  'font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#1d2129}' +
  'main{width:100%;max-width:34rem;background:#fff;border-radius:14px;border-top:5px solid var(--accent);' +
  'box-shadow:0 1px 3px rgba(0,0,0,.08),0 10px 30px rgba(0,0,0,.07);padding:2rem 1.75rem}' +
  'header{display:flex;align-items:center;gap:.7rem;margin:0 0 1.25rem;font-weight:650;font-size:1.05rem;color:#3a3f47}' +
  'header img{height:36px;width:auto;max-width:11rem;object-fit:contain}' +
  '.status{margin:0;font-size:.8rem;font-weight:700;letter-spacing:.08em;color:var(--accent)}' +
  'h1{font-size:1.5rem;line-height:1.3;margin:.3rem 0 .8rem}p{margin:.55rem 0}' +
  '.url{word-break:break-all;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.92rem;background:#f3f4f6;padding:.55rem .7rem;border-radius:8px}' +
  '.note{color:#7a4d00;background:#fff6e0;padding:.55rem .75rem;border-radius:8px}a{color:var(--accent)}' +
  '.button,button{display:inline-block;font:inherit;font-weight:600;padding:.6rem 1.25rem;border-radius:8px;border:0;' +
  'background:var(--accent);color:var(--on-accent);text-decoration:none;cursor:pointer}' +
  'form{margin:1.25rem 0;display:flex;flex-wrap:wrap;gap:.7rem;align-items:flex-end}' +
  'label{display:flex;flex-direction:column;gap:.3rem;flex:1 1 12rem;font-weight:600}' +
  'input{font:inherit;padding:.55rem .7rem;border:1px solid #c3c8d0;border-radius:8px;background:transparent;color:inherit}' +
  'fieldset{border:0;padding:0;margin:0;flex:1 1 100%;display:flex;flex-direction:column;gap:.35rem}legend{font-weight:600;padding:0;margin-bottom:.35rem}' +
  'label.choice{flex:0 0 auto;flex-direction:row;align-items:flex-start;gap:.5rem;font-weight:400}label.choice input{margin:.3rem 0 0}' +
  'textarea{font:inherit;font-weight:400;padding:.55rem .7rem;border:1px solid #c3c8d0;border-radius:8px;background:transparent;color:inherit;min-height:4.5rem;resize:vertical}' +
  'details{margin-top:1.5rem;border-top:1px solid #dfe2e6;padding-top:.9rem}summary{cursor:pointer;color:var(--accent);font-weight:600}' +
  '.hint{font-size:.85rem;color:#555b64;margin:-.4rem 0 0;flex:1 1 100%}label.wide{flex-basis:100%}' +
  'dl{display:grid;grid-template-columns:max-content 1fr;gap:.4rem 1rem}dt{font-weight:600}dd{margin:0;min-width:0}' +
  '@media (max-width:480px){body{padding:.75rem;justify-content:flex-start}main{padding:1.5rem 1.15rem}h1{font-size:1.3rem}dl{grid-template-columns:1fr}dd{margin-bottom:.4rem}}' +
  '@media (prefers-color-scheme:dark){body{background:#14161a;color:#e7e9ec}main{background:#1e2126;box-shadow:none}header{color:#c9cdd3}' +
  '.url{background:#2a2e35}.note{color:#ffd68a;background:#3a2e12}input,textarea{border-color:#4a505a}.hint{color:#b4bac3}details{border-color:#3a3f47}}';

/** Black or white, whichever reads better on the accent (WCAG relative luminance). */
function onAccent(hex: string): string {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return luminance > 0.179 ? '#000' : '#fff';
}

/**
 * The stylesheet of an accent and its CSP hash. The accent is checked as `#rrggbb` when it is saved
 * (tenants domain, "Domain settings"), and again here: nothing else can reach the CSS. A few hundred
 * accents at most are kept.
 */
const styles = new Map<string, { css: string; hash: string }>();
function styleFor(accent: string | null | undefined): { css: string; hash: string } {
  const color = accent && /^#[0-9a-f]{6}$/.test(accent) ? accent : DEFAULT_ACCENT;
  let style = styles.get(color);
  if (!style) {
    const css = `:root{--accent:${color};--on-accent:${onAccent(color)}}${BASE_STYLE}`;
    style = { css, hash: `'sha256-${createHash('sha256').update(css).digest('base64')}'` };
    if (styles.size >= 256) styles.clear();
    styles.set(color, style);
  }
  return style;
}

/** A logo the page may carry: a data: URI of a raster image (checked when it was saved, and again here: nothing else reaches the page). */
export function logoOf(branding: Branding | null | undefined): string | null {
  const logo = branding?.logo;
  return logo && /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/.test(logo) ? logo : null;
}

/**
 * No script, no plugin, no frame, no base, nothing from elsewhere: only our stylesheet, and the
 * domain's logo, carried by the page as a data: URI. A form may post to this page only; the password form also
 * lets the browser follow the redirect its answer gives to the target (Chrome checks form-action on
 * the redirects after a submission, and naming the target's origin here would reveal it).
 */
function cspOf(styleHash: string, logo: boolean, passwordForm: boolean): string {
  return (
    `default-src 'none'; style-src ${styleHash}; img-src ${logo ? 'data:' : "'none'"}; base-uri 'none'; frame-ancestors 'none'; ` +
    `form-action 'self'${passwordForm ? ' https: http:' : ''}`
  );
}

/** The domain's name and logo. The logo's text is the name beside it: its own alt is empty (a screen reader, or a broken image, does not say the name twice). */
function header(branding: Branding | null, logo: string | null): string {
  if (!branding || (!branding.name && !logo)) return '';
  const name = branding.name ? escapeHtml(branding.name) : '';
  const image = logo ? `<img src="${escapeHtml(logo)}" alt="" height="36">` : '';
  return `<header>${image}${name && image ? `<span>${name}</span>` : name}</header>`;
}

/** Writes a page with the security headers every page carries, in the context's language and look. */
export function sendPage(res: ServerResponse, page: Page, context: PageContext, head: boolean): void {
  const { branding, lang } = context;
  const style = styleFor(branding?.accentColor);
  const logo = logoOf(branding);
  const title = branding?.name ? `${page.title} – ${branding.name}` : page.title;
  const html =
    `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="robots" content="noindex,nofollow"><title>${escapeHtml(title)}</title>${page.head ?? ''}<style>${style.css}</style></head>` +
    `<body><main>${header(branding, logo)}${page.body}</main></body></html>`;
  res.writeHead(page.status, {
    ...page.headers,
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(html)),
    'content-language': lang,
    vary: 'Accept, Accept-Language',
    'content-security-policy': cspOf(style.hash, logo !== null, page.passwordForm === true),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-robots-tag': 'noindex, nofollow',
    'cache-control': 'private, no-store',
  });
  res.end(head ? undefined : html);
}

/** The path of a link's page, e.g. `/abc1234/go?x=1`, escaped for an attribute. */
const href = (path: string) => escapeHtml(path);

const message = (m: Message, extra = '') => `<h1>${escapeHtml(m.heading)}</h1><p>${escapeHtml(m.body)}</p>${extra}`;
const withStatus = (status: number, m: Message, extra = '') => `<p class="status">${status}</p>${message(m, extra)}`;

/** A refusal a visitor may meet: the status, what it means, and when to try again (Retry-After). */
function refusal(status: number, m: Message, t: PageText, retryAfter?: string): Page {
  const seconds = Number(retryAfter);
  const retry = retryAfter && Number.isSafeInteger(seconds) && seconds > 0 ? `<p>${escapeHtml(t.retryIn(seconds))}</p>` : '';
  return { status, title: m.title, body: withStatus(status, m, retry), headers: retryAfter ? { 'retry-after': retryAfter } : undefined };
}

/** An unknown or disabled link: one page for both, with nothing of the code (docs/design.md, "Security model"). */
export const notFoundPage = (t: PageText): Page => refusal(404, t.notFound, t);
export const expiredPage = (t: PageText): Page => refusal(410, t.expired, t);
export const exhaustedPage = (t: PageText): Page => refusal(410, t.exhausted, t);
export const limitedPage = (t: PageText, retryAfter: string | undefined): Page => refusal(429, t.limited, t, retryAfter);
export const unavailablePage = (t: PageText, retryAfter: string | undefined): Page => refusal(503, t.unavailable, t, retryAfter);
export const errorPage = (t: PageText): Page => refusal(500, t.error, t);
/** A link of a suspended tenant: unavailable while the operators keep the tenant suspended. */
export const suspendedPage = (t: PageText): Page => refusal(403, t.suspended, t);
export const blockedPage = (t: PageText): Page => refusal(451, t.blocked, t);

export function passwordPage(t: PageText, wrong: boolean, flagged: boolean): Page {
  const p = t.password;
  return {
    status: wrong ? 403 : 200,
    title: p.title,
    passwordForm: true,
    body:
      `<h1>${escapeHtml(p.heading)}</h1>` +
      (flagged ? `<p class="note">${escapeHtml(p.flagged)}</p>` : '') +
      (wrong ? `<p class="note" role="alert">${escapeHtml(p.wrong)}</p>` : '') +
      // No action: the form posts to this very URL, query string included.
      `<form method="post"><label>${escapeHtml(p.label)} <input type="password" name="password" required maxlength="128" autocomplete="current-password" autofocus></label>` +
      `<button type="submit">${escapeHtml(p.submit)}</button></form>`,
  };
}

/**
 * "Report this link" (docs/design.md, "Trust and safety"): a disclosure with a form that posts to
 * `/r/report` on the domain the visitor is on (the pages' CSP allows forms to this origin only), a
 * reason to choose and optional details. No script. `problem`: the form sent back with what to fix.
 */
export function reportForm(t: PageText, code: string, problem: { readonly reason?: string; readonly details?: string } | null = null): string {
  const r = t.report;
  const reasons = REPORT_REASONS.map(
    (reason, i) =>
      `<label class="choice"><input type="radio" name="reason" value="${reason}" required${problem?.reason === reason ? ' checked' : ''}${i === 0 && problem ? ' aria-describedby="report-error"' : ''}> <span>${escapeHtml(r.reasons[reason])}</span></label>`,
  ).join('');
  return (
    `<details class="report"${problem ? ' open' : ''}><summary>${escapeHtml(r.summary)}</summary>` +
    (problem ? `<p class="note" id="report-error" role="alert">${escapeHtml(r.invalid)}</p>` : '') +
    `<form method="post" action="/r/report" id="report-form"><input type="hidden" name="code" value="${escapeHtml(code)}">` +
    `<fieldset><legend>${escapeHtml(r.legend)}</legend>${reasons}</fieldset>` +
    `<label class="wide">${escapeHtml(r.details)}<textarea name="details" maxlength="${MAX_REPORT_DETAILS}" rows="3" aria-describedby="report-hint">` +
    `${escapeHtml(problem?.details ?? '')}</textarea></label><p class="hint" id="report-hint">${escapeHtml(r.detailsHint)}</p>` +
    `<button type="submit">${escapeHtml(r.send)}</button></form></details>`
  );
}

/** After a report: thanks, and the way back to the link's preview. */
export function reportSentPage(t: PageText, code: string): Page {
  const s = t.report.sent;
  return {
    status: 200,
    title: s.title,
    body: `<h1>${escapeHtml(s.heading)}</h1><p role="status">${escapeHtml(s.body)}</p><p><a href="${href(`/${code}+`)}">${escapeHtml(t.report.back)}</a></p>`,
  };
}

/** A report the intake refused (no reason of the list, details too long): the preview's form again, open, with what to fix. */
export function reportInvalidPage(t: PageText, code: string, sent: { readonly reason?: string; readonly details?: string }): Page {
  return { status: 400, title: t.report.summary, body: `<h1>${escapeHtml(t.report.summary)}</h1>${reportForm(t, code, sent)}` };
}

/**
 * A link the dead-link checks found broken, when its tenant chose a page for it (docs/design.md,
 * "Trust and safety"): what happened, and the target to try all the same (unless a password hides it).
 */
export function brokenPage(t: PageText, link: CachedLink): Page {
  const b = t.broken;
  const target =
    link.rules?.passwordHash === undefined
      ? `<p>${escapeHtml(b.leadsTo)}</p><p class="url">${escapeHtml(link.targetUrl)}</p>` +
        `<p><a class="button" href="${escapeHtml(link.targetUrl)}" rel="nofollow noreferrer">${escapeHtml(b.continue)}</a></p>`
      : '';
  return { status: 200, title: b.title, body: `<h1>${escapeHtml(b.heading)}</h1><p>${escapeHtml(b.body)}</p>${target}` };
}

/** A flagged link: what it points to (unless a password hides it), a link to go on anyway, and "Report this link". */
export function warningPage(t: PageText, link: CachedLink, continuePath: string, code: string): Page {
  const w = t.warning;
  const target = link.rules?.passwordHash === undefined ? `<p>${escapeHtml(w.leadsTo)}</p><p class="url">${escapeHtml(link.targetUrl)}</p>` : '';
  return {
    status: 200,
    title: w.title,
    body:
      `<h1>${escapeHtml(w.heading)}</h1><p class="note">${escapeHtml(w.body)}</p>` +
      target +
      `<p><a class="button" href="${href(continuePath)}" rel="nofollow noreferrer">${escapeHtml(w.continue)}</a></p>` +
      reportForm(t, code),
  };
}

/** `/{code}+`: what the link is, without following it. A password hides the target here too. */
export function previewPage(t: PageText, lang: PageLanguage, link: CachedLink, code: string): Page {
  const p = t.preview;
  const rows: string[] = [];
  if (link.title) rows.push(`<dt>${escapeHtml(p.titleLabel)}</dt><dd>${escapeHtml(link.title)}</dd>`);
  rows.push(`<dt>${escapeHtml(p.target)}</dt><dd class="url">${escapeHtml(link.rules?.passwordHash === undefined ? link.targetUrl : p.hidden)}</dd>`);
  if (link.rules?.geoTargets || link.rules?.deviceTargets || link.rules?.variants || link.rules?.appTargets)
    rows.push(`<dt>${escapeHtml(p.note)}</dt><dd>${escapeHtml(p.varies)}</dd>`);
  const created = new Date(link.createdAt);
  const shown = `${new Intl.DateTimeFormat(lang, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(created)} UTC`;
  rows.push(`<dt>${escapeHtml(p.created)}</dt><dd><time datetime="${escapeHtml(created.toISOString())}">${escapeHtml(shown)}</time></dd>`);
  return {
    status: 200,
    title: p.title,
    body:
      `<h1>${escapeHtml(p.heading)}</h1>` +
      (link.moderation === 'flagged' ? `<p class="note">${escapeHtml(p.flagged)}</p>` : '') +
      `<dl>${rows.join('')}</dl><p><a class="button" href="${href(`/${code}`)}" rel="nofollow noreferrer">${escapeHtml(p.open)}</a></p>` +
      reportForm(t, code),
  };
}

/**
 * Seconds the app page waits before it sends a visitor without the app to the fallback: long enough
 * to read and tap "Open in the app", short enough that nobody is stranded (docs/design.md, "Link options").
 */
export const APP_FALLBACK_SECONDS = 5;

/**
 * A link's app URL scheme for a browser on that device: a tap opens the app (a user's gesture, which
 * every mobile browser lets through to a scheme), and a meta refresh and a link lead to the fallback
 * (the store or the web page) for a visitor without the app. No script: the pages' CSP allows none.
 */
export function appPage(t: PageText, app: string, fallback: string): Page {
  const a = t.app;
  return {
    status: 200,
    title: a.title,
    head: `<meta http-equiv="refresh" content="${APP_FALLBACK_SECONDS};url=${escapeHtml(fallback)}">`,
    body:
      `<h1>${escapeHtml(a.heading)}</h1><p>${escapeHtml(a.body)}</p>` +
      `<p><a class="button" href="${escapeHtml(app)}" rel="nofollow noreferrer">${escapeHtml(a.open)}</a></p>` +
      `<p><a href="${escapeHtml(fallback)}" rel="nofollow noreferrer">${escapeHtml(a.fallback)}</a></p>`,
  };
}
