/** Options of trackClickId, as the served script reads them from its `data-` attributes. */
export interface TrackOptions {
  /** The query parameter the link passes the click id in (the link's `conversionParam`); default `sl_cid`. */
  readonly param?: string;
  /** The cookie's name; default `sl_cid`. */
  readonly cookie?: string;
  /** How long the cookie lives; default 90 (the click id's attribution window). */
  readonly days?: number;
  /** A parent domain to share the cookie with (`example.com` for `www.` and `app.`); default the page's host only. */
  readonly domain?: string;
}

/** What trackClickId touches: the page's location and cookies (window.location and document by default). */
export interface TrackEnvironment {
  readonly location: { readonly search: string; readonly protocol: string };
  readonly document: { cookie: string };
}

const CLICK_ID = /^[\w-]{22}$/;

/**
 * The served script's logic for a site that bundles its code (docs/analytics.md, "Conversions"):
 * keeps the click id of the page's URL in a first-party cookie; returns it, or null when the URL has
 * none (the cookie is then left as it was).
 */
export function trackClickId(options: TrackOptions = {}, env?: TrackEnvironment): string | null {
  const { location, document } = env ?? (globalThis as unknown as TrackEnvironment);
  const id = new URLSearchParams(location.search).get(options.param || 'sl_cid');
  if (!id || !CLICK_ID.test(id)) return null;
  const days = options.days ?? 90;
  document.cookie =
    `${options.cookie || 'sl_cid'}=${id}; path=/; max-age=${86_400 * days}; samesite=lax` +
    (options.domain ? `; domain=${options.domain}` : '') +
    (location.protocol === 'https:' ? '; secure' : '');
  return id;
}

/** The click id in a Cookie header (or `document.cookie`), for the site's backend to report its lead with; null when there is none. */
export function clickIdFromCookies(cookies: string | undefined, name = 'sl_cid'): string | null {
  for (const part of (cookies ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return CLICK_ID.test(value) ? value : null;
    }
  }
  return null;
}
